/**
 * `kp explain`: what a new connection to a service port gets on this node, per frontend, in
 * the words of an operator. A pure function over the model (no I/O, no oclif); the command
 * is an adapter and src/cli/views/explain.ts draws the result.
 *
 * The behaviour spelled out here is kube-proxy's, as restated in
 * docs/kube-proxy-layouts.md §1 and §2.4: which endpoints a traffic
 * policy lets a frontend reach, when the source is masqueraded, what REJECT and DROP mean.
 */
import {ownEndpoints, ownEndpointsDifference} from './frontend-endpoints.js'
import {REDACTED_SHOWN} from '../core/redaction.js'
import {displayName} from '../core/state.js'
import {clusterSet, sharesOnLocalPath} from '../kube-proxy/endpoints.js'
import type {
  Endpoint,
  EndpointState,
  Family,
  Frontend,
  FrontendAction,
  FrontendType,
  Incomplete,
  Mode,
  NodeInfo,
  ProxyState,
  Protocol,
  ServicePort,
  SessionAffinity,
  SourceRef,
  TrafficPolicy,
} from '../model/types.js'
import {canonicalIp} from '../core/address.js'
import {endpointAddress, frontendAddress} from './addresses.js'
import {editDistance} from './edit-distance.js'
import type {ServiceQuery} from './explain-query.js'

export type {ServiceQuery} from './explain-query.js'

/** When the client's source address is replaced by the node's (kube-proxy's KUBE-MARK-MASQ). */
export type MasqueradeWhen = 'always' | 'never' | 'conditional' | 'unknown'

export interface MasqueradeExplanation {
  when: MasqueradeWhen
  /** Why, in plain words. */
  reason: string
}

export interface ReachedEndpoint {
  /** null when the input redacted it. */
  ip: string | null
  port: number | null
  /** Probability that a new connection from an outside client at this frontend picks it; null when a scheduler decides. */
  share: number | null
}

export interface FrontendExplanation {
  type: FrontendType
  ip: string | null
  port: number | null
  /** `172.30.0.41:80`, `[fd00::1]:80`, `*:3001`, `<redacted>:80`. */
  address: string
  /** true when the input redacted its address (`ip` is null then). */
  redacted?: true
  action: FrontendAction
  /** The policy that governs this frontend: internalTrafficPolicy for a ClusterIP, externalTrafficPolicy for the others. */
  trafficPolicy: TrafficPolicy | null
  /** One sentence: what a new connection here gets. */
  verdict: string
  masquerade: MasqueradeExplanation
  sourceRanges: string[]
  /** Source ranges the input hid (`Frontend.redactedSourceRanges`), as written; absent when none. */
  redactedSourceRanges?: string[]
  /** `Frontend.outsideRangesMarkedForDrop`: a source outside the ranges is only marked; forwarded, it leaves un-NATed. */
  outsideRangesMarkedForDrop?: true
  /** `Frontend.noLocalMarkedForDrop`: the no-local-endpoint drop is only a mark; forwarded, it leaves un-NATed. */
  noLocalMarkedForDrop?: true
  /** `Frontend.localhostRejected`: kube-proxy 1.37+ (nftables) rejects this NodePort on 127.0.0.1. */
  localhostRejected?: true
  /** The endpoints a new connection from a client outside this node can reach here, with shares renormalised over them. */
  reaches: ReachedEndpoint[]
  /**
   * How this frontend's own endpoints (`Frontend.endpoints`, IPVS virtual servers that disagree)
   * differ from the service port's, as `ip:port`; null when it uses the service port's.
   */
  ownEndpoints: {missing: string[]; extra: string[]} | null
  /** Further facts worth knowing (short-circuits, source-range filtering, assumptions). */
  notes: string[]
  /** Cluster-wide view only: the nodes where this Local-policy frontend forwards (the model's field). */
  forwardedOnNodes?: string[]
  /** What the answer here depends on that the input lacks; the verdict then says "Unknown" and `reaches` is empty. */
  incomplete: Incomplete | null
}

export interface ExplainedEndpoint {
  /** null when the input redacted it (`address` shows `<redacted>`). */
  ip: string | null
  port: number | null
  address: string
  share: number | null
  local: boolean | null
  weight: number | null
  state: EndpointState | null
}

export interface ServiceIdentity {
  namespace: string | null
  name: string | null
  portName: string | null
  protocol: Protocol
  family: Family
  /** `ns/name:port/proto` (src/core/state.ts displayName). */
  displayName: string
}

export interface ServiceExplanation {
  service: ServiceIdentity
  frontends: FrontendExplanation[]
  endpoints: ExplainedEndpoint[]
  affinity: (SessionAffinity & {text: string}) | null
  policies: {
    internalTrafficPolicy: TrafficPolicy | null
    externalTrafficPolicy: TrafficPolicy | null
  }
  healthCheckNodePort: number | null
  scheduler: string | null
  /** Service-wide facts: hairpin masquerade, endpoint locality, scheduler. */
  notes: string[]
  /** Where the sources mention this service port, ordered by path and line. */
  rules: SourceRef[]
  /** The ServicePort's `incomplete`: what it references that the input lacks (a fragment); else null. */
  incomplete: Incomplete | null
}

/** Whose answer it is: one node's (a dump, live, `--node`), or the cluster's (cluster objects without a node). */
export type PointOfView = 'node' | 'cluster-wide'

export interface ExplainResult {
  schemaVersion: 1
  kind: 'ExplainResult'
  query: ServiceQuery
  mode: Mode
  node: string | null
  pointOfView: PointOfView
  /** false when an error kept part of the input from being read (ProxyState.complete). */
  complete: boolean
  matches: ServiceExplanation[]
}

export interface ExplainNotFound {
  kind: 'NotFound'
  query: ServiceQuery
  /** Up to three display names closest to what was asked (edit distance). */
  suggestions: string[]
}

const SUGGESTIONS = 3

/** Answers `kp explain` for one query: every matching service port, or the closest names. */
export function explainService(
  state: ProxyState,
  query: ServiceQuery,
): ExplainResult | ExplainNotFound {
  const matches =
    query.by === 'name' ? matchByName(state.services, query) : matchByAddress(state.services, query)
  if (matches.length === 0)
    return {kind: 'NotFound', query, suggestions: suggest(state.services, query)}
  return {
    schemaVersion: 1,
    kind: 'ExplainResult',
    query,
    mode: state.mode,
    node: state.node.name,
    pointOfView: state.node.view ?? 'node',
    complete: state.complete !== false,
    matches: matches.map((m) => explainServicePort(m.sp, m.frontends, m.onNodeAddress, state)),
  }
}

interface Match {
  sp: ServicePort
  frontends: Frontend[]
  /** The query's IP matched a NodePort that listens on every node address: we assume the IP is the node's. */
  onNodeAddress: string | null
}

function matchByName(services: ServicePort[], q: Extract<ServiceQuery, {by: 'name'}>): Match[] {
  const portNumber = q.port !== null && /^\d+$/.test(q.port) ? Number(q.port) : null
  return services
    .filter(
      (sp) =>
        sp.name === q.name &&
        (q.namespace === null || sp.namespace === q.namespace) &&
        (q.protocol === null || sp.protocol === q.protocol) &&
        (q.port === null ||
          (portNumber !== null
            ? sp.frontends.some((fe) => fe.port === portNumber)
            : sp.portName === q.port)),
    )
    .map((sp) => ({sp, frontends: sp.frontends, onNodeAddress: null}))
}

function matchByAddress(
  services: ServicePort[],
  q: Extract<ServiceQuery, {by: 'address'}>,
): Match[] {
  const candidates = services.filter((sp) => q.protocol === null || sp.protocol === q.protocol)
  const portMatches = (fe: Frontend) => q.port === null || fe.port === q.port
  if (q.ip !== null) {
    const ip = q.ip
    const byVip = candidates
      .map((sp) => ({
        sp,
        frontends: sp.frontends.filter(
          (fe) => fe.ip !== null && canonicalIp(fe.ip) === ip && portMatches(fe),
        ),
        onNodeAddress: null,
      }))
      .filter((m) => m.frontends.length > 0)
    if (byVip.length > 0 || q.port === null) return byVip
    // A ClusterIP is never a node address; an externalIP may well be one, so it is not excluded.
    const isClusterIp = services.some((sp) =>
      sp.frontends.some(
        (fe) => fe.type === 'ClusterIP' && fe.ip !== null && canonicalIp(fe.ip) === ip,
      ),
    )
    if (isClusterIp) return []
  }
  // Not a service IP: with a port it may be a NodePort on one of this node's addresses.
  return candidates
    .map((sp) => ({
      sp,
      frontends: sp.frontends.filter(
        (fe) =>
          fe.type === 'NodePort' &&
          fe.port === q.port &&
          // `:PORT` also takes a NodePort on one address (listed apart when its endpoints differ).
          ((fe.ip === null && !fe.redacted) ||
            q.ip === null ||
            (fe.ip !== null && canonicalIp(fe.ip) === q.ip)),
      ),
      onNodeAddress: q.ip,
    }))
    .filter((m) => m.frontends.length > 0)
}

function suggest(services: ServicePort[], q: ServiceQuery): string[] {
  const asked = q.text.toLowerCase()
  const scored: Array<{name: string; distance: number}> = []
  const seen = new Set<string>()
  for (const sp of services) {
    const name = displayName(sp)
    if (seen.has(name)) continue
    seen.add(name)
    const words =
      q.by === 'name'
        ? [name, `${sp.namespace ?? ''}/${sp.name ?? ''}`, sp.name ?? '', sp.namespace ?? '']
        : sp.frontends.flatMap((fe) => [frontendAddress(fe), fe.ip ?? ''])
    const distance = words.reduce(
      (d, w) => Math.min(d, editDistance(asked, w.toLowerCase())),
      Number.POSITIVE_INFINITY,
    )
    scored.push({name, distance})
  }
  scored.sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return scored.slice(0, SUGGESTIONS).map((s) => s.name)
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

export function explainServicePort(
  sp: ServicePort,
  frontends: Frontend[],
  onNodeAddress: string | null,
  state: ProxyState,
): ServiceExplanation {
  const notes: string[] = []
  const hidden = sp.endpoints.filter((ep) => ep.ip === null).length
  if (hidden > 0)
    notes.push(
      `The input redacted the address of ${hidden} endpoint(s); they are counted, shown as ${REDACTED_SHOWN}.`,
    )
  if (state.node.view === 'cluster-wide') {
    notes.push(
      'Cluster-wide view: no --node was given and this host is not a node of these objects. Where a Local policy makes nodes differ, each frontend names the nodes that forward; --node NAME shows what one node does.',
    )
  } else if (
    sp.endpoints.length > 0 &&
    sp.endpoints.every((ep) => ep.local === null) &&
    sp.incomplete === undefined
  ) {
    notes.push(
      'Which endpoints run on this node is not visible here (kube-proxy only shows it under a Local traffic policy).',
    )
  }
  if (sp.scheduler !== null)
    notes.push(
      `IPVS picks the endpoint with the "${sp.scheduler}" scheduler, so there are no fixed shares.`,
    )
  if (sp.frontends.some((fe) => fe.action === 'forward') && sp.endpoints.length > 0) {
    notes.push(
      'An endpoint that connects to its own service is always masqueraded (hairpin), so the reply comes back through the node.',
    )
  }
  if (sp.incomplete !== undefined) notes.unshift(incompleteNote(sp.incomplete))
  const affinity = sp.sessionAffinity
  return {
    service: {
      namespace: sp.namespace,
      name: sp.name,
      portName: sp.portName,
      protocol: sp.protocol,
      family: sp.family,
      displayName: displayName(sp),
    },
    frontends: frontends.map((fe) => explainFrontend(sp, fe, state, onNodeAddress)),
    endpoints: sp.endpoints.map((ep) => ({
      ip: ep.ip,
      port: ep.port,
      address: endpointAddress(ep),
      share: ep.share,
      local: ep.local,
      weight: ep.weight,
      state: ep.state,
    })),
    affinity: affinity === null ? null : {...affinity, text: affinityText(affinity)},
    policies: {
      internalTrafficPolicy: sp.internalTrafficPolicy,
      externalTrafficPolicy: sp.externalTrafficPolicy,
    },
    healthCheckNodePort: sp.healthCheckNodePort,
    scheduler: sp.scheduler,
    notes,
    rules: [...sp.rules].sort((a, b) =>
      a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line,
    ),
    incomplete: sp.incomplete ?? null,
  }
}

/** `KUBE-SVL-X not in the input; collect with \`iptables-save -t nat\`` */
export function missingText(incomplete: Incomplete): string {
  const names = incomplete.missing.join(', ')
  return `${names} ${incomplete.missing.length === 1 ? 'is' : 'are'} not in the input; collect with \`${incomplete.collect}\``
}

function incompleteNote(incomplete: Incomplete): string {
  return `Read from a fragment: ${missingText(incomplete)}. The endpoints and frontends shown may be only part of this service port's.`
}

function affinityText(affinity: SessionAffinity): string {
  const timeout =
    affinity.timeoutSeconds === null
      ? 'for a time the source does not show'
      : `for ${affinity.timeoutSeconds} s after its last new connection`
  return `ClientIP: a client keeps the endpoint it got first ${timeout}`
}

/**
 * The endpoints a policy lets a frontend use, with each share renormalised over them. Under a
 * Local policy an endpoint of unknown locality may be one of them, and then no share is certain.
 */
function reachable(
  endpoints: Endpoint[],
  policy: TrafficPolicy | null,
  sharesOfOtherPath: boolean,
): ReachedEndpoint[] {
  const chosen = policy === 'Local' ? endpoints.filter((ep) => ep.local !== false) : endpoints
  if (sharesOfOtherPath) {
    // The shares are the local path's (the ClusterIP under internalTrafficPolicy=Local); this
    // frontend takes kube-proxy's cluster path, which picks each of its endpoints alike.
    const path = clusterSet(chosen)
    return path.map((ep) => ({ip: ep.ip, port: ep.port, share: 1 / path.length}))
  }
  const known = chosen.every((ep) => ep.share !== null && (policy !== 'Local' || ep.local === true))
  const total = known ? chosen.reduce((sum, ep) => sum + (ep.share ?? 0), 0) : 0
  return chosen.map((ep) => ({
    ip: ep.ip,
    port: ep.port,
    share: known && total > 0 ? (ep.share ?? 0) / total : null,
  }))
}

/**
 * The ETP=Local short-circuit is in the iptables (KUBE-EXT rules 1-3, docs/kube-proxy-layouts.md §2.4) and
 * nftables (external chain, §3.4) layouts; the IPVS layout and cluster objects do not show it.
 */
function hasShortCircuit(mode: Mode): boolean {
  return mode === 'iptables' || mode === 'nftables'
}

/**
 * Who the ETP=Local short-circuit applies to: pod traffic needs a local-traffic detector
 * (docs/kube-proxy-layouts.md §2.4, KUBE-EXT rule 1); the node's own traffic needs the "route
 * LOCAL traffic" rule, which KUBE-XLB before ≈1.15 lacks (ServicePort.externalFromNode). null: nobody.
 */
function shortCircuited(node: NodeInfo, sp: ServicePort): string | null {
  const pods = node.localDetector !== 'none'
  if (sp.externalFromNode === 'policy') return pods ? 'from pods' : null
  return pods ? 'from pods and from this node itself' : 'from this node itself'
}

/** What this node's own connection (127.0.0.1 included) to an external frontend gets. */
export interface FromThisNode {
  action: FrontendAction
  reaches: ReachedEndpoint[]
  /** null: the rules do not tell (≈1.10–1.14 masquerade a NodePort's 127.0.0.0/8 source, older ones nothing). */
  masquerade: boolean | null
}

/**
 * This node's own connection to an external frontend of an externalTrafficPolicy=Local service,
 * as the rules show it (ServicePort.externalFromNode): short-circuited to every endpoint and
 * masqueraded, or the frontend's own answer (local endpoints, or dropped: the kubelet drops the
 * marked packet in filter OUTPUT). null when the source does not show it.
 */
export function fromThisNode(sp: ServicePort, fe: FrontendExplanation): FromThisNode | null {
  if (fe.type === 'ClusterIP' || sp.externalTrafficPolicy !== 'Local' || fe.incomplete !== null)
    return null
  if (sp.externalFromNode === 'policy')
    return {
      action: fe.action,
      reaches: fe.reaches,
      masquerade: fe.action === 'forward' ? null : false,
    }
  if (sp.externalFromNode !== 'cluster') return null
  if (fe.action === 'reject' || sp.endpoints.length === 0)
    return {action: fe.action, reaches: [], masquerade: false}
  const otherPath =
    sp.scheduler === null && sharesOnLocalPath(sp) && sp.endpoints.some((ep) => ep.share !== null)
  return {
    action: 'forward',
    reaches: reachable(sp.endpoints, 'Cluster', otherPath),
    masquerade: true,
  }
}

function explainFrontend(
  sp: ServicePort,
  fe: Frontend,
  state: ProxyState,
  onNodeAddress: string | null,
): FrontendExplanation {
  const {node, mode} = state
  const external = fe.type !== 'ClusterIP'
  const policyName = external ? 'externalTrafficPolicy' : 'internalTrafficPolicy'
  const policy = external ? sp.externalTrafficPolicy : sp.internalTrafficPolicy
  // Shares are over the ClusterIP's path (a new connection from inside the cluster): under
  // internalTrafficPolicy=Local that is the local endpoints, and an external frontend with the
  // Cluster policy uses all of them instead (KUBE-SVC- / the cluster chain). Renormalising the
  // local shares over all endpoints gave a NodePort of such a service 100 % to the local
  // endpoint and 0 % to the others.
  // (Not where a scheduler decides: IPVS keeps share 0 for draining real servers only.)
  const otherPath =
    external &&
    policy !== 'Local' &&
    mode !== 'ipvs' &&
    sp.scheduler === null &&
    sharesOnLocalPath(sp) &&
    sp.endpoints.some((ep) => ep.share !== null)
  // An IPVS virtual server whose real servers disagree with its service port's (kubernetes
  // #89923) sends to its own, whatever the policy says.
  const own = ownEndpoints(sp, fe)
  const unknown = fe.incomplete ?? null
  const reaches =
    fe.action !== 'forward' || unknown !== null
      ? []
      : own
        ? reachable(own.endpoints, null, false)
        : reachable(sp.endpoints, policy, otherPath)
  const notes: string[] = []
  if (own)
    notes.push(
      `Its own real servers differ from the service port's (kubernetes #89923): it ${ownEndpointsDifference(own)} (${plural(own.endpoints.length, 'endpoint')} here, ${sp.endpoints.length} for the service port). kube-proxy gives every frontend of a service port the same endpoints; a resync (restarting kube-proxy) reprograms it.`,
    )
  if (fe.redacted) notes.push('The input redacted this address; kp does not know it.')
  if (onNodeAddress !== null)
    notes.push(
      `${onNodeAddress} is not a service IP; this assumes it is one of this node's addresses.`,
    )

  const clusterWide = state.node.view === 'cluster-wide'
  const onNodes = fe.forwardedOnNodes ?? []
  let verdict: string
  if (unknown !== null) {
    // Unknown is not "no": the chain that decides is not in the input.
    verdict = `Unknown: ${missingText(unknown)}.`
  } else if (fe.action === 'forward' && onNodes.length > 0) {
    verdict = `Forwarded (DNAT) on the ${onNodes.length === 1 ? 'node' : 'nodes'} running an endpoint (${onNodes.join(', ')}) to the endpoints on that node (${policyName}=Local); dropped on every other node.`
  } else if (fe.action === 'reject') {
    verdict =
      'Rejected: the service has no endpoints, so a new connection is refused at once (REJECT, ICMP port unreachable).'
  } else if (fe.action === 'drop') {
    const ip = fe.ip ?? (fe.type === 'LoadBalancer' ? 'the LB IP' : 'the external IP')
    verdict =
      fe.noLocalMarkedForDrop === true && (fe.type === 'LoadBalancer' || fe.type === 'ExternalIP')
        ? // ≤1.24 XLB/SVL -> nat KUBE-MARK-DROP; the kubelet's KUBE-FIREWALL sits in INPUT/OUTPUT, not FORWARD.
          `No local endpoint (${policyName}=Local): marked for drop, but the kubelet drops marked packets only for the node itself; forwarded, it leaves toward ${ip} unchanged; dropped only if ${ip} is one of this node's addresses.`
        : policy === 'Local' && clusterWide
          ? `Dropped on every node: ${policyName}=Local and no usable endpoint of this service runs on a node these objects name, so the client gets no answer and times out.`
          : policy === 'Local'
            ? `Dropped: ${policyName}=Local and no endpoint of this service runs on this node, so the client gets no answer and times out.`
            : 'Dropped: the client gets no answer and times out.'
    const who = shortCircuited(node, sp)
    if (
      external &&
      policy === 'Local' &&
      sp.endpoints.length > 0 &&
      hasShortCircuit(mode) &&
      who !== null
    ) {
      notes.push(
        `Connections ${who} are not dropped: they are short-circuited to the ${plural(sp.endpoints.length, 'endpoint')} elsewhere in the cluster.`,
      )
    }
  } else if (reaches.length === 0) {
    verdict =
      policy === 'Local'
        ? `Accepted, but no endpoint of this service runs on this node (${policyName}=Local), so new connections fail.`
        : 'Accepted, but no endpoint is programmed for it, so new connections fail.'
  } else if (policy === 'Local' && clusterWide) {
    // Only IPVS forwards a Local frontend on every node: no local real server falls back to all.
    verdict = `Forwarded (DNAT) on every node: to the endpoints on that node where it runs one (${policyName}=Local), elsewhere to any of the ${plural(sp.endpoints.length, 'endpoint')} (IPVS falls back to them).`
  } else if (
    policy === 'Local' &&
    reaches.some((r) => r.share === null) &&
    sp.endpoints.some((ep) => ep.local === null)
  ) {
    verdict = `Forwarded (DNAT) only to endpoints on this node (${policyName}=Local); this source does not show which of the ${plural(sp.endpoints.length, 'endpoint')} run here.`
  } else {
    const scope = policy === 'Local' ? ` on this node (${policyName}=Local)` : ''
    const one = reaches.length === 1 ? ' the only endpoint' : ` one of ${reaches.length} endpoints`
    verdict = `Forwarded (DNAT) to${one}${scope}.`
    const who = shortCircuited(node, sp)
    if (
      external &&
      policy === 'Local' &&
      reaches.length < sp.endpoints.length &&
      hasShortCircuit(mode) &&
      who !== null
    ) {
      notes.push(
        `Connections ${who} are short-circuited to all ${plural(sp.endpoints.length, 'endpoint')}, not only the local ones.`,
      )
    }
  }
  if (external && policy === 'Local' && sp.externalFromNode === 'policy' && unknown === null)
    // ≤≈1.14 KUBE-XLB has no "route LOCAL traffic" rule: the node's own connection is any client's.
    notes.push(
      fe.action === 'forward'
        ? `From this node itself${fe.type === 'NodePort' ? ' (127.0.0.1 included)' : ''}: only to the endpoints on this node, like any client; this kube-proxy layout (KUBE-XLB without the 'route LOCAL traffic' rule) does not short-circuit it.`
        : fe.action === 'drop'
          ? `From this node itself${fe.type === 'NodePort' ? ' (127.0.0.1 included)' : ''}: dropped too (the kubelet drops the marked packet in filter OUTPUT); this kube-proxy layout (KUBE-XLB without the 'route LOCAL traffic' rule) does not short-circuit it.`
          : 'From this node itself: the same.',
    )
  if (fe.nodeSourceExcluded === true && fe.action === 'forward') {
    // docs/kube-proxy-layouts.md §2.7: ≈1.7-1.10 jump to the service only from a non-local source, or to a local address.
    notes.push(
      `From this node itself (a host process, hostNetwork pods): not forwarded unless ${fe.ip ?? 'this address'} is one of this node's addresses. This kube-proxy layout skips traffic from a local address (-m addrtype ! --src-type LOCAL), so such a connection leaves for ${fe.ip ?? 'the address'} un-NATed.`,
    )
  }
  if (fe.localhostRejected === true)
    notes.push(
      `On 127.0.0.1:${fe.port ?? '?'} from this node itself: rejected (kube-proxy 1.37+ localhost NodePorts, map localhost-nodeport-reject-ports); not served on localhost.`,
    )
  const hidden = fe.redactedSourceRanges ?? []
  if (hidden.length > 0 && fe.action !== 'reject') {
    // Unknown is not "no": a client outside the known ranges may be inside a hidden one.
    const known = fe.sourceRanges.length > 0 ? `${fe.sourceRanges.join(', ')} and from ` : ''
    notes.push(
      `Only clients from ${known}${plural(hidden.length, 'range')} the input hid (${hidden.join(', ')}) are let in (loadBalancerSourceRanges); the range set is partly unknown, so whether a connection from ${fe.sourceRanges.length > 0 ? 'any other source' : 'a given source'} is let in or dropped is unknown.`,
    )
  } else if (fe.sourceRanges.length > 0 && fe.action !== 'reject') {
    notes.push(
      fe.outsideRangesMarkedForDrop === true
        ? // docs/kube-proxy-layouts.md §2.7: ≤1.24 only marks (nat KUBE-MARK-DROP); the kubelet's KUBE-FIREWALL sits in INPUT/OUTPUT, not FORWARD.
          `Only clients from ${fe.sourceRanges.join(', ')} are load-balanced (loadBalancerSourceRanges). A connection from any other source is not load-balanced: marked for drop, but the kubelet drops marked packets only for the node itself; forwarded, it leaves toward ${fe.ip ?? 'the LB IP'} unchanged. It is dropped only if ${fe.ip ?? 'the LB IP'} is one of this node's addresses.`
        : `Only clients from ${fe.sourceRanges.join(', ')} are let in (loadBalancerSourceRanges); a connection from any other source is dropped.`,
    )
  }
  if (
    fe.type === 'NodePort' &&
    fe.ip === null &&
    node.nodePortAddresses !== null &&
    node.nodePortAddresses.length === 0
  ) {
    notes.push('The NodePort listens on every address of this node.')
  }
  return {
    type: fe.type,
    ip: fe.ip,
    port: fe.port,
    address: frontendAddress(fe),
    ...(fe.redacted ? {redacted: true as const} : {}),
    action: fe.action,
    trafficPolicy: policy,
    verdict,
    masquerade: masqueradeFor(fe, external, policy, node, hasShortCircuit(mode), sp),
    sourceRanges: [...fe.sourceRanges],
    ...(hidden.length > 0 ? {redactedSourceRanges: [...hidden]} : {}),
    ...(fe.outsideRangesMarkedForDrop === true ? {outsideRangesMarkedForDrop: true as const} : {}),
    ...(fe.noLocalMarkedForDrop === true ? {noLocalMarkedForDrop: true as const} : {}),
    ...(fe.localhostRejected === true ? {localhostRejected: true as const} : {}),
    reaches,
    ownEndpoints: own === null ? null : {missing: own.missing, extra: own.extra},
    notes,
    ...(onNodes.length > 0 ? {forwardedOnNodes: [...onNodes]} : {}),
    incomplete: unknown,
  }
}

/**
 * kube-proxy's masquerade decisions (docs/kube-proxy-layouts.md §2.4): the ClusterIP chain marks traffic that
 * the local-traffic detector says is not from a pod; the external chain marks everything under
 * ETP=Cluster, and only node-originated traffic under ETP=Local; --masquerade-all marks all.
 */
function masqueradeFor(
  fe: Frontend,
  external: boolean,
  policy: TrafficPolicy | null,
  node: NodeInfo,
  shortCircuit: boolean,
  sp: ServicePort,
): MasqueradeExplanation {
  if (fe.action === 'reject') {
    // A REJECT read from a fragment (an IPVS virtual server cut before its real servers) is
    // not an answer: what is forwarded, so what is masqueraded, is unknown.
    if (fe.incomplete)
      return {
        when: 'unknown',
        reason: `${fe.incomplete.missing.join(', ')} ${fe.incomplete.missing.length === 1 ? 'is' : 'are'} not in the input, so whether connections here are forwarded, and masqueraded, is unknown; collect with \`${fe.incomplete.collect}\`.`,
      }
    return {when: 'never', reason: 'Nothing is forwarded here, so nothing is masqueraded.'}
  }
  if (node.masqueradeAll === true) {
    return {
      when: 'always',
      reason:
        "kube-proxy runs with --masquerade-all: every connection to a service leaves with this node's address as its source.",
    }
  }
  if (external) {
    if (policy === 'Cluster') {
      return {
        when: 'always',
        reason:
          "externalTrafficPolicy=Cluster: external traffic is always masqueraded, so the endpoint sees this node's address, not the client's.",
      }
    }
    if (policy === 'Local' && sp.externalFromNode === 'policy') {
      const reason =
        "externalTrafficPolicy=Local keeps the client's source address, and this kube-proxy layout (KUBE-XLB without the 'masquerade LOCAL traffic' rule) keeps it for this node's own connections too"
      // ≈1.10–1.14 KUBE-NODEPORTS: "Fix localhost martian source error" -s 127.0.0.0/8 -j KUBE-MARK-MASQ.
      return fe.type === 'NodePort'
        ? {
            when: 'conditional',
            reason: `${reason}; only a 127.0.0.0/8 source is masqueraded, where KUBE-NODEPORTS has kube-proxy's \`-s 127.0.0.0/8 -j KUBE-MARK-MASQ\` rule (≈1.10–1.14).`,
          }
        : {when: 'never', reason: `${reason}.`}
    }
    if (policy === 'Local') {
      return {
        when: 'conditional',
        reason: `externalTrafficPolicy=Local keeps the client's source address; only connections from this node's own addresses are masqueraded${shortCircuit && node.localDetector !== 'none' ? ', and pod traffic is short-circuited without it' : ''}.`,
      }
    }
    return {
      when: 'unknown',
      reason:
        'This source does not show the externalTrafficPolicy, so whether the client address is kept is unknown.',
    }
  }
  const pods = node.podCIDRs.length > 0 ? node.podCIDRs.join(', ') : 'the pod network'
  switch (node.localDetector) {
    case 'cidr':
      return {
        when: 'conditional',
        reason: `Masqueraded unless the client is a pod (source in ${pods}): connections from the node itself or from outside the pod network get this node's address as their source.`,
      }
    case 'interface':
      return {
        when: 'conditional',
        reason: `Masqueraded unless the connection comes in on the pod bridge ${node.localInterface ?? '(interface not shown)'}.`,
      }
    case 'interface-prefix':
      return {
        when: 'conditional',
        reason: `Masqueraded unless the connection comes in on a pod interface (${node.localInterface ?? '?'}*).`,
      }
    case 'none':
      return {
        when: 'never',
        reason:
          'kube-proxy has no way to tell pod traffic apart (no local-traffic detector) and --masquerade-all is off, so the client address is kept.',
      }
    case null:
      return {
        when: 'unknown',
        reason:
          'This source does not show how kube-proxy tells pod traffic apart, so when it masquerades is unknown.',
      }
  }
}
