/**
 * The virtual servers of one node's ipvsadm listings, merged across listings, and the test that
 * sets aside what kube-proxy never makes (fwmark services, the scheduler probe, odd forwarding).
 */
import {diag} from '../../core/state.js'
import type {Diagnostic, ForeignObject, Protocol, SourceRef} from '../../model/types.js'
import type {ParsedSource} from '../types.js'
import {joinHostPort} from '../../core/address.js'
import type {IpvsadmListing, IpvsVirtualServer} from './parse.js'

/** kube-proxy's scheduler probe (a.1): added and deleted at start-up; one left behind is not a service. */
const SCHEDULER_PROBE = {protocol: 'TCP', ip: '198.51.100.0', port: 20000} as const

export interface RealServerSeen {
  ip: string
  port: number
  weight: number | null
  forward: string | null
  refs: SourceRef[]
}

/** A virtual server as every listing of the node showed it, merged. */
export interface VirtualServerSeen extends Omit<
  IpvsVirtualServer,
  'showsConfig' | 'realServers' | 'line' | 'cutAt'
> {
  /** false while only --stats / --rate listings showed it: scheduler and persistence unknown. */
  configKnown: boolean
  realServers: Map<string, RealServerSeen>
  refs: SourceRef[]
  /** Where a listing was cut inside this virtual server's rows: its real servers may be more. */
  cut?: SourceRef
}

/** A kube-proxy virtual server: protocol, address and port are always set. */
export interface KubeVirtualServer extends VirtualServerSeen {
  protocol: Protocol
  ip: string
  port: number
}

export function mergeListings(
  listings: ParsedSource<IpvsadmListing>[],
  diagnostics: Diagnostic[],
): VirtualServerSeen[] {
  const byKey = new Map<string, VirtualServerSeen>()
  for (const p of listings) {
    const path = p.source.path
    for (const vs of p.data.virtualServers) {
      const ref = {path, line: vs.line}
      let seen = byKey.get(vs.key)
      const isNew = !seen
      if (!seen) {
        seen = {
          key: vs.key,
          protocol: vs.protocol,
          family: vs.family,
          ip: vs.ip,
          port: vs.port,
          fwmark: vs.fwmark,
          scheduler: null,
          schedulerFlags: [],
          persistentTimeout: null,
          persistent: false,
          persistenceMask: null,
          persistenceEngine: null,
          onePacket: false,
          configKnown: false,
          realServers: new Map(),
          refs: [],
        }
        byKey.set(vs.key, seen)
      }
      seen.refs.push(ref)
      if (vs.cutAt !== undefined) seen.cut ??= {path, line: vs.cutAt}
      mergeConfig(seen, vs, ref, diagnostics)
      // Only a virtual server seen in an earlier listing is compared with it.
      const before = isNew ? null : new Set(seen.realServers.keys())
      const now = new Set<string>()
      for (const rs of vs.realServers) {
        const key =
          rs.redacted === undefined
            ? joinHostPort(rs.ip, rs.port, vs.family)
            : `${joinHostPort(rs.ip, rs.port, vs.family)} #${rs.redacted}`
        now.add(key)
        const known = seen.realServers.get(key)
        const rsRef = {path, line: rs.line}
        if (!known) {
          seen.realServers.set(key, {
            ip: rs.ip,
            port: rs.port,
            weight: rs.weight,
            forward: rs.forward,
            refs: [rsRef],
          })
          continue
        }
        known.refs.push(rsRef)
        if (known.weight === null) known.weight = rs.weight
        else if (rs.weight !== null && rs.weight !== known.weight) {
          diagnostics.push(
            diag(
              'warning',
              'IPVS_SOURCES_DISAGREE',
              `real server ${key} of ${vs.key} has weight ${rs.weight} here and ${known.weight} in ${known.refs[0]!.path}:${known.refs[0]!.line}; the dumps were taken at different times`,
              rsRef,
            ),
          )
        }
        known.forward ??= rs.forward
      }
      if (before && (before.size !== now.size || [...before].some((k) => !now.has(k)))) {
        diagnostics.push(
          diag(
            'warning',
            'IPVS_SOURCES_DISAGREE',
            `virtual server ${vs.key} has other real servers here than in ${seen.refs[0]!.path}:${seen.refs[0]!.line}; the dumps were taken at different times, and kp keeps the union`,
            ref,
          ),
        )
      }
    }
  }
  return [...byKey.values()]
}

function mergeConfig(
  seen: VirtualServerSeen,
  vs: IpvsVirtualServer,
  ref: SourceRef,
  diagnostics: Diagnostic[],
): void {
  if (!vs.showsConfig || vs.scheduler === null) return
  if (!seen.configKnown) {
    seen.scheduler = vs.scheduler
    seen.schedulerFlags = vs.schedulerFlags
    seen.persistentTimeout = vs.persistentTimeout
    seen.persistent = vs.persistent
    seen.persistenceMask = vs.persistenceMask
    seen.persistenceEngine = vs.persistenceEngine
    seen.onePacket = vs.onePacket
    seen.configKnown = true
    return
  }
  // /proc/net/ip_vs does not show the timeout in seconds: an unknown one is not a different one.
  const timeoutsDiffer =
    seen.persistent !== vs.persistent ||
    (seen.persistentTimeout !== null &&
      vs.persistentTimeout !== null &&
      seen.persistentTimeout !== vs.persistentTimeout)
  if (seen.scheduler !== vs.scheduler || timeoutsDiffer) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_SOURCES_DISAGREE',
        `virtual server ${vs.key} is "${vs.scheduler}${persistence(vs)}" here but "${seen.scheduler}${persistence(seen)}" in ${seen.refs[0]!.path}:${seen.refs[0]!.line}; the first is kept`,
        ref,
      ),
    )
  }
}

function persistence(vs: {persistent: boolean; persistentTimeout: number | null}): string {
  if (!vs.persistent) return ''
  return vs.persistentTimeout === null ? ' persistent' : ` persistent ${vs.persistentTimeout}`
}

/** Why kube-proxy cannot have made this virtual server, or null when it could have. */
export function foreignReason(vs: VirtualServerSeen): string | null {
  if (vs.fwmark !== null)
    return 'firewall-mark virtual server: kube-proxy never creates one (keepalived, a load balancer on the node, or a hand edit)'
  if (
    vs.protocol === SCHEDULER_PROBE.protocol &&
    vs.ip === SCHEDULER_PROBE.ip &&
    vs.port === SCHEDULER_PROBE.port
  ) {
    return "kube-proxy's scheduler probe (TEST-NET-2 198.51.100.0:20000), left behind by an interrupted start-up"
  }
  const forwards = new Set(
    [...vs.realServers.values()]
      .map((rs) => rs.forward)
      .filter((f): f is string => f !== null && f !== 'Masq'),
  )
  if (forwards.size > 0)
    return `real servers forwarded by ${[...forwards].join(', ')}: kube-proxy always masquerades (Masq)`
  const odd = vs.schedulerFlags.filter((f) => !(vs.scheduler === 'mh' && f === 'mh-port'))
  if (odd.length > 0)
    return `scheduler flags ${odd.join(',')}: kube-proxy sets only mh-port, and only for mh`
  if (vs.persistenceMask !== null)
    return `persistence mask ${vs.persistenceMask}: kube-proxy always persists per client address`
  if (vs.persistenceEngine !== null)
    return `persistence engine ${vs.persistenceEngine}: kube-proxy never sets one`
  if (vs.onePacket) return 'one-packet scheduling (ops): kube-proxy never sets it'
  return null
}

export function foreignVs(vs: VirtualServerSeen, reason: string): ForeignObject {
  return {kind: 'ipvs-virtual-server', name: vs.key, reason, source: vs.refs[0] ?? null}
}
