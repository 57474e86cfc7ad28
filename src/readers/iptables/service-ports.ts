/**
 * Stage 6 of the iptables reader: each group's drafts -> one ServicePort (protocol, names, hash
 * checks, endpoints with their shares and locality, frontends with their source ranges).
 */
import {isRedacted} from '../../core/redaction.js'
import {toCidr} from '../../core/address.js'
import type {Endpoint, Frontend, Protocol, ServicePort} from '../../model/types.js'
import {splitServicePortName} from './comments.js'
import type {IptablesFamilyReader} from './family-reader.js'
import {
  chainNamesOf,
  PREFIX_OF_KIND,
  SCANNED_ENDPOINTS,
  SEP_PREFIX,
  type Cascade,
  type ChainKind,
  type Group,
} from './groups.js'
import {
  endpointString,
  iptablesChainHash,
  iptablesEndpointHash,
} from '../../kube-proxy/iptables-names.js'
import {effectiveShares, SHARE_SUM_TOLERANCE} from '../../kube-proxy/shares.js'
import {sourceRefs} from './values.js'

const PROTOCOLS: Readonly<Record<string, Protocol>> = {tcp: 'TCP', udp: 'UDP', sctp: 'SCTP'}

function servicePortOf(r: IptablesFamilyReader, g: Group): ServicePort | null {
  if (g.frontends.length === 0) {
    const chainNames = chainNamesOf(g)
    if (chainNames.length > 0 && !r.focused)
      r.warn(
        'IPT_ORPHAN_CHAIN',
        `${chainNames.join(', ')} ${chainNames.length > 1 ? 'are' : 'is'} not reached from KUBE-SERVICES or KUBE-NODEPORTS; not read as a service`,
        Object.values(g.chains)[0]?.line ?? null,
      )
    return null
  }
  let protocol = g.protocol
  if (protocol === null && g.hash !== null && g.spn !== null) {
    // No rule carries -p (hand-trimmed dump): the hash tells which protocol the chains were made for.
    protocol = Object.keys(PROTOCOLS).find((p) => iptablesChainHash(g.spn!, p) === g.hash) ?? null
  }
  const firstLine = g.refLines[0] ?? null
  if (protocol === null || PROTOCOLS[protocol] === undefined) {
    r.warn(
      'IPT_UNKNOWN_PROTOCOL',
      `cannot tell the protocol of ${g.spn ?? chainNamesOf(g).join(', ')}${protocol ? ` ("${protocol}")` : ''}; read as TCP`,
      firstLine,
    )
  }
  const proto = PROTOCOLS[protocol ?? 'tcp'] ?? 'TCP'
  const names = g.spn !== null ? splitServicePortName(g.spn) : null
  if (g.spn !== null && g.hash !== null) {
    const expected = iptablesChainHash(g.spn, proto)
    if (expected !== g.hash) {
      const names = chainNamesOf(g)
      r.warn(
        'IPT_HASH_MISMATCH',
        `${names.length === 1 ? `${names[0]} does` : `chains ${names.join(', ')} do`} not carry the hash of "${g.spn}" ${proto.toLowerCase()} (expected ${expected}): hand-edited or corrupted dump?`,
        Object.values(g.chains)[0]?.line ?? firstLine,
      )
    }
  }
  if (g.spn === null)
    r.warn(
      'IPT_NO_NAME',
      `no comment names the service port of ${chainNamesOf(g).join(', ') || 'these rules'}; it is identified by its ClusterIP`,
      firstLine,
      'info',
    )

  const gaps = new FragmentGaps(r, g)
  // Endpoints and shares. The cluster r.path is the chain a ClusterIP connection goes to.
  const cluster = g.frontends.find((f) => f.type === 'ClusterIP' && f.action === 'forward')
  const local = g.localCascade
  // A KUBE-SVC chain jumped to but not in the input: its shares are unknown, not the local path's.
  const useLocal =
    (cluster?.via === 'svl' || (g.cascade === null && !gaps.absent('svc'))) && local !== null
  const steps = useLocal ? local : g.cascade
  /**
   * By endpoint index: the sum of the shares of the steps into each SEP chain. Not a field of the
   * drafts: a field that first holds 0 and then a fraction makes V8 change the shape of every draft.
   */
  const shares = steps !== null ? new Array<number>(g.endpoints.length).fill(0) : null
  if (steps !== null && shares !== null) {
    const result = effectiveShares(steps.probabilities)
    for (let i = 0; i < result.shares.length; i++)
      shares[steps.endpoints[i]!.index]! += result.shares[i]!
    if (result.unreachableFrom !== null) {
      const line = steps.lines[result.unreachableFrom]!
      r.warn(
        'IPT_UNREACHABLE_RULE',
        `${steps.chain}: the rule on line ${line} follows an unconditional one and is never reached`,
        line,
      )
    }
    if (Math.abs(result.total - 1) > SHARE_SUM_TOLERANCE) {
      r.warn(
        'IPT_SHARES_SUM',
        `the endpoint shares of ${steps.chain} sum to ${result.total.toFixed(9)}, not 1: the last rule of the cascade is not unconditional (cut-off or hand-edited chain?)`,
        steps.lines[steps.lines.length - 1]!,
      )
    }
  }
  // Locality shows only on the local chain: when it is referenced but not in the input, no
  // endpoint is known to be remote.
  const localPolicy =
    (g.etp === 'Local' || g.itp === 'Local') && !gaps.absent('svl') && !gaps.absent('xlb')
  // Addresses a reader reads are strings; only the last check marks some redacted (null).
  const endpoints: Array<Endpoint & {ip: string}> = []
  /** The addresses so far, once there are more than SCANNED_ENDPOINTS drafts; until then the endpoints are scanned (a set per service port cost more). */
  const seenIps = g.endpoints.length > SCANNED_ENDPOINTS ? new Set<string>() : null
  const seenIp = (ip: string): boolean => {
    if (seenIps !== null) return seenIps.has(ip)
    for (let i = 0; i < endpoints.length; i++) if (endpoints[i]!.ip === ip) return true
    return false
  }
  /** The ip:port of each endpoint, made once an address comes twice (endpointString is one-to-one: one ip:port is one ip and one port). */
  let seenEndpoints: Set<string> | null = null
  // A local endpoint on the local chain but not on a cluster chain that has endpoints is the
  // serving-terminating fallback (see markTerminatingFallbacks in ../nft/kube-proxy-table.ts).
  const clusterMembers =
    g.localCascade !== null && g.cascade !== null && g.cascade.endpoints.length > 0
      ? new Set(g.cascade.endpoints)
      : null
  for (const ep of g.endpoints) {
    if (ep.written === null) continue // the SEP chain is missing or has no DNAT (reported above)
    if (g.spn !== null) {
      const expected = iptablesEndpointHash(g.spn, proto, ep.written)
      // A redacted address (x.x.x.x) cannot carry the hash of the real one: not a mismatch.
      if (
        (ep.sep.length !== SEP_PREFIX.length + expected.length || !ep.sep.endsWith(expected)) &&
        !isRedacted(ep.ip)
      ) {
        r.warn(
          'IPT_HASH_MISMATCH',
          `${ep.sep} does not carry the hash of "${g.spn}" ${proto.toLowerCase()} ${ep.written} (expected ${SEP_PREFIX}${expected}): hand-edited or corrupted dump?`,
          ep.chain?.line ?? null,
        )
      }
    }
    // Two SEP chains for one ip:port (a hand-edited dump) give one endpoint; the hash check above names the odd one.
    // A new address is a new endpoint: the ip:port strings are only made for an address seen before.
    if (seenIp(ep.ip)) {
      seenEndpoints ??= new Set(endpoints.map((e) => endpointString(e.ip, e.port)))
      const key = endpointString(ep.ip, ep.port)
      if (seenEndpoints.has(key)) continue
      seenEndpoints.add(key)
    } else {
      seenIps?.add(ep.ip)
      seenEndpoints?.add(endpointString(ep.ip, ep.port))
    }
    endpoints.push({
      ip: ep.ip,
      port: ep.port,
      // Locality is only visible under a Local policy: the SVL/XLB members are this node's.
      local: localPolicy ? ep.inLocal : null,
      // An endpoint that is not on the cluster r.path (only in SVL) gets no new connection from it.
      share: shares !== null ? shares[ep.index]! : null,
      weight: null,
      state:
        clusterMembers !== null && ep.inLocal && !clusterMembers.has(ep)
          ? 'serving-terminating'
          : null,
    })
  }
  // The frontends whose drop is only a nat mark (see Frontend.noLocalMarkedForDrop).
  const markedOnly = new Set<(typeof g.frontends)[number]>()
  if (g.localDrop) {
    // 1.24 SVL / ≤1.23 XLB "has no local endpoints" -> KUBE-MARK-DROP: external traffic is dropped.
    for (const fe of g.frontends)
      if (fe.type !== 'ClusterIP' && (fe.via === 'xlb' || fe.via === 'ext' || fe.via === 'fw')) {
        fe.action = 'drop'
        markedOnly.add(fe)
      }
  }
  // kube-proxy also lets the LB IPs themselves through (`-s LBIP`): they are not ranges.
  const lbCidrs = new Set<string>()
  for (const f of g.frontends)
    if (f.type === 'LoadBalancer' && f.ip !== null) lbCidrs.add(toCidr(f.ip))
  const rangesFromFw = g.ranges.filter((r) => !lbCidrs.has(r))
  const collect = `${r.family === 'IPv6' ? 'ip6tables-save' : 'iptables-save'} -t nat`
  const frontends: Frontend[] = g.frontends.map((f) => {
    const fe: Frontend = {
      type: f.type,
      ip: f.ip,
      port: f.port,
      sourceRanges: f.via === 'fw' ? [...rangesFromFw] : [],
      action: f.action,
      ...(f.nodeSourceExcluded ? {nodeSourceExcluded: true} : {}),
      ...(f.via === 'fw' && g.fwMarkDrop ? {outsideRangesMarkedForDrop: true} : {}),
      ...(markedOnly.has(f) ? {noLocalMarkedForDrop: true} : {}),
    }
    const missing = f.via === null ? [] : gaps.needs(f.via)
    if (missing.length > 0) fe.incomplete = {missing, collect}
    return fe
  })
  const missing = gaps.all()
  // Where the node's own connections to an external frontend go (ServicePort.externalFromNode):
  // shown by the external chain itself, KUBE-EXT or KUBE-XLB, when the input has it.
  const externalChain = g.chains.ext ?? g.chains.xlb
  const fromNode =
    g.etp === 'Local' && externalChain !== undefined && externalChain.ruleCount > 0
      ? g.localSourceToCluster
        ? ('cluster' as const)
        : ('policy' as const)
      : null
  const externallyVisible = g.frontends.some((f) => f.type !== 'ClusterIP')
  return {
    namespace: names?.namespace ?? null,
    name: names?.name ?? null,
    portName: names?.portName ?? null,
    protocol: proto,
    family: r.family,
    frontends,
    healthCheckNodePort: g.healthCheckNodePort,
    internalTrafficPolicy: g.itp,
    externalTrafficPolicy: externallyVisible ? g.etp : null,
    sessionAffinity: g.affinity ? {type: 'ClientIP', timeoutSeconds: g.affinitySeconds} : null,
    scheduler: null,
    endpoints,
    rules: r.servicesOnly ? [] : sourceRefs(r.path, g.refLines, r.refsPerPort),
    ...(fromNode !== null && externallyVisible ? {externalFromNode: fromNode} : {}),
    ...(missing.length > 0 ? {incomplete: {missing, collect}} : {}),
  }
}

/**
 * What a group references but the input does not contain (docs/model.md, "incomplete"): the
 * per-service chains its rules jump to, the KUBE-SEP chains of its cascades, and the dispatch
 * rules recovered from elsewhere. A frontend needs what its path reaches.
 */
class FragmentGaps {
  private readonly referenced = new Set<ChainKind>()
  constructor(
    private readonly r: IptablesFamilyReader,
    private readonly g: Group,
  ) {
    for (const f of g.frontends) if (f.via !== null) this.referenced.add(f.via)
    for (const j of g.jumps) this.referenced.add(j.to)
  }
  private chainName(kind: ChainKind): string | null {
    return this.g.hash === null ? null : PREFIX_OF_KIND[kind] + this.g.hash
  }
  /** Referenced by one of the group's rules, and not in the input. */
  absent(kind: ChainKind): boolean {
    const name = this.chainName(kind)
    return name !== null && this.referenced.has(kind) && this.r.absent(name)
  }
  private missingSeps(cascade: Cascade | null): string[] {
    const out: string[] = []
    for (const ep of cascade?.endpoints ?? [])
      if (ep.chain === undefined && !out.includes(ep.sep)) out.push(ep.sep)
    return out
  }
  /** The names a path starting at `kind` needs and the input lacks. */
  needs(kind: ChainKind, seen: Set<ChainKind> = new Set()): string[] {
    if (seen.has(kind)) return []
    seen.add(kind)
    const name = this.chainName(kind)
    if (name !== null && this.r.absent(name)) return [name]
    const out =
      kind === 'svc'
        ? this.missingSeps(this.g.cascade)
        : kind === 'svl' || kind === 'xlb'
          ? this.missingSeps(this.g.localCascade)
          : []
    for (const j of this.g.jumps)
      if (j.from === kind) for (const n of this.needs(j.to, seen)) if (!out.includes(n)) out.push(n)
    return out
  }
  all(): string[] {
    const out = [...this.g.missing]
    const add = (n: string) => {
      if (!out.includes(n)) out.push(n)
    }
    for (const kind of this.referenced) this.needs(kind).forEach(add)
    this.missingSeps(this.g.cascade).forEach(add)
    this.missingSeps(this.g.localCascade).forEach(add)
    return out.sort()
  }
}

/** The service ports of the reader's groups (a group without frontends is none), and their conflicts. */
export function servicePorts(r: IptablesFamilyReader): ServicePort[] {
  const services: ServicePort[] = []
  /** By service: the line of the first rule read for it, where its diagnostics point (not rules[0]: refs are in line order). */
  const firstLines: Array<number | null> = []
  for (const g of r.groups.values()) {
    const sp = servicePortOf(r, g)
    if (sp) {
      services.push(sp)
      firstLines.push(g.refLines[0] ?? null)
    }
  }

  // Two service ports on one address:port/protocol: kube-proxy never writes that, so the dump was
  // edited or mixes syncs (fixtures/iptables/upstream-sortrules-transition: 192.168.99.22).
  const owners = new Map<string, string>()
  services.forEach((sp, i) => {
    const who = `${sp.namespace ?? '?'}/${sp.name ?? '?'}:${sp.portName ?? '?'}`
    for (const fe of sp.frontends) {
      const where = `${fe.type === 'NodePort' ? `NodePort ${fe.ip ?? '*'}` : fe.ip}:${fe.port ?? '?'}/${sp.protocol}`
      const other = owners.get(where)
      if (other !== undefined && other !== who)
        r.warn(
          'IPT_FRONTEND_CONFLICT',
          `${where} belongs to both ${other} and ${who}`,
          firstLines[i] ?? null,
        )
      else owners.set(where, who)
    }
  })
  return services
}
