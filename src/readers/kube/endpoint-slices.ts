/**
 * EndpointSlices joined to a Service's ports (endpointslicecache.go): which endpoints each port
 * of one family has, as kube-proxy's cache would hold them.
 */
import {joinHostPort, parseIpSloppy} from '../../core/address.js'
import {isRedacted} from '../../core/redaction.js'
import {diag} from '../../core/state.js'
import type {Diagnostic, Family, Protocol, SourceRef} from '../../model/types.js'
import type {BuildContext, ServiceWork} from './build.js'

export const nsName = (namespace: string, name: string) => `${namespace}/${name}`

export interface CachedEndpoint {
  ip: string
  port: number
  ready: boolean
  serving: boolean
  terminating: boolean
  local: boolean
  /** The node it runs on (the cluster-wide view groups endpoints by it); null when not given. */
  nodeName: string | null
  zoneHints: string[]
  nodeHints: string[]
  /** For a redacted address: where it is (`slice[3]`), so that two redacted endpoints stay two. */
  redactedAt?: string
}

/** Endpoint.String(): the identity kube-proxy's cache and CategorizeEndpoints key endpoints by. */

export const portKey = (name: string, protocol: Protocol) => `${protocol}/${name}`

export interface JoinedPort {
  endpoints: Map<string, CachedEndpoint>
  refs: SourceRef[]
}

/**
 * endpointslicecache.go: every slice port (name, protocol) of this family collects the slice's
 * endpoints; addresses[0] only; endpoints of the wrong family are dropped; duplicates by ip:port
 * keep one copy (a local copy wins, as upstream; and a non-terminating copy over a terminating one, c.4).
 */
export function collectEndpoints(
  work: ServiceWork,
  fam: Family,
  ctx: BuildContext,
  diagnostics: Diagnostic[],
): Map<string, JoinedPort> {
  const byPort = new Map<string, JoinedPort>()
  const svcKey = nsName(work.svc.namespace, work.svc.name)
  const servicePortKeys = new Set(work.svc.ports.map((p) => portKey(p.name, p.protocol)))
  for (const slice of work.slices) {
    if (slice.addressType !== fam) continue
    const what = `EndpointSlice ${nsName(slice.namespace, slice.name)}`
    // Convert the slice's endpoints once; each of its ports reuses them.
    const endpoints: Array<Omit<CachedEndpoint, 'port'>> = []
    for (const [i, e] of slice.endpoints.entries()) {
      const first = e.addresses[0]
      if (first === undefined) {
        diagnostics.push(
          diag(
            'warning',
            'KUBE_ENDPOINT_NO_ADDRESS',
            `${what}: endpoints[${i}] has no address; kube-proxy ignores it`,
            slice.ref,
          ),
        )
        continue
      }
      const ip = parseIpSloppy(first) ?? redactedIp(first, fam)
      if (!ip) {
        diagnostics.push(
          diag(
            'warning',
            'KUBE_BAD_IP',
            `${what}: endpoints[${i}] address ${JSON.stringify(first)} is not an IP address; ignored`,
            slice.ref,
          ),
        )
        continue
      }
      if (ip.family !== fam) {
        diagnostics.push(
          diag(
            'warning',
            'KUBE_ENDPOINT_WRONG_FAMILY',
            `${what}: endpoints[${i}] address ${ip.text} is not ${fam} like the slice's addressType; kube-proxy ignores it`,
            slice.ref,
          ),
        )
        continue
      }
      endpoints.push({
        ip: ip.text,
        // nil conditions: ready and serving count as true, terminating as false (c.4).
        ready: e.ready ?? true,
        serving: e.serving ?? true,
        terminating: e.terminating ?? false,
        local: e.nodeName !== null && e.nodeName === ctx.node,
        nodeName: e.nodeName,
        zoneHints: e.zoneHints,
        nodeHints: e.nodeHints,
        ...('redacted' in ip ? {redactedAt: ` ${slice.name}[${i}]`} : {}),
      })
    }
    for (const p of slice.ports) {
      if (p.name === null) {
        diagnostics.push(
          diag(
            'warning',
            'KUBE_SLICE_PORT_NO_NAME',
            `${what}: a port without a name is ignored by kube-proxy (an unnamed Service port is name: "")`,
            slice.ref,
          ),
        )
        continue
      }
      if (p.port === null) {
        diagnostics.push(
          diag(
            'warning',
            'KUBE_SLICE_PORT_NO_NUMBER',
            `${what}: port ${JSON.stringify(p.name)} has no port number; kube-proxy ignores it`,
            slice.ref,
          ),
        )
        continue
      }
      const k = portKey(p.name, p.protocol)
      if (!servicePortKeys.has(k)) {
        diagnostics.push(
          diag(
            'info',
            'KUBE_SLICE_PORT_UNMATCHED',
            `${what}: port ${JSON.stringify(p.name)}/${p.protocol} matches no port of Service ${svcKey}`,
            slice.ref,
          ),
        )
        continue
      }
      let joined = byPort.get(k)
      if (!joined) {
        joined = {endpoints: new Map(), refs: []}
        byPort.set(k, joined)
      }
      joined.refs.push(slice.ref)
      for (const e of endpoints) {
        const ep: CachedEndpoint = {...e, port: p.port}
        const id = joinHostPort(ep.ip, ep.port, fam) + (ep.redactedAt ?? '')
        const prev = joined.endpoints.get(id)
        if (!prev || (ep.local && !prev.local) || (prev.terminating && !ep.terminating))
          joined.endpoints.set(id, ep)
      }
    }
  }
  return byPort
}

/**
 * A redaction placeholder where an address belongs (`clusterIP: x.x.x.x`): kept as written, of the
 * family given (an endpoint's is its slice's), else IPv6 when it has a colon, else IPv4. The last
 * check of the state (src/readers/valid-addresses.ts) turns it into a redacted null address.
 */
export function redactedIp(
  raw: string,
  family?: Family,
): {family: Family; text: string; redacted: true} | null {
  if (!isRedacted(raw)) return null
  return {family: family ?? (raw.includes(':') ? 'IPv6' : 'IPv4'), text: raw.trim(), redacted: true}
}
