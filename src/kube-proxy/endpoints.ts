/**
 * Which endpoints kube-proxy uses for a service port, and over which path a share is counted.
 * kube-proxy decides this once for every mode (pkg/proxy/topology.go CategorizeEndpoints,
 * serviceport.go UsesClusterEndpoints / UsesLocalEndpoints); the cluster-objects reader, the
 * renderers and explain ask the same questions, so they ask them here.
 *
 * Names follow kube-proxy's: the cluster endpoints (Cluster traffic policy), the local
 * endpoints (Local traffic policy), allReachableEndpoints (their union) and hasAnyEndpoints.
 * "Usable" means ready, falling back to serving-and-terminating, for each set on its own.
 */
import type {
  Endpoint,
  EndpointState,
  Frontend,
  Mode,
  ServicePort,
  TrafficPolicy,
} from '../model/types.js'

/** topology.go's modes: "" (no topology), PreferSameZone (zone hints), PreferSameNode (node hints). */
export type TopologyMode = '' | 'PreferSameZone' | 'PreferSameNode'

/** An endpoint as CategorizeEndpoints sees it (pkg/proxy/endpoint.go); no hints when absent. */
export interface CategorizableEndpoint {
  ready: boolean
  serving: boolean
  terminating: boolean
  local: boolean
  zoneHints?: readonly string[]
  nodeHints?: readonly string[]
}

/** The node kube-proxy runs on, for topology hints; zone null when not known. */
export interface NodeTopology {
  node: string
  zone: string | null
}

/** serviceport.go UsesClusterEndpoints / UsesLocalEndpoints of one service port. */
export interface EndpointUse {
  usesClusterEndpoints: boolean
  usesLocalEndpoints: boolean
}

/** The result of CategorizeEndpoints for one service port. */
export interface EndpointCategories<E> {
  /** null when the service port never uses Cluster traffic policy. */
  clusterEndpoints: E[] | null
  /** null when the service port never uses Local traffic policy. */
  localEndpoints: E[] | null
  /** The union of the two, cluster endpoints first (kube-proxy's order is a map's; callers sort). */
  allReachableEndpoints: E[]
  /** Whether the service has a usable endpoint anywhere in the cluster (drop rather than reject). */
  hasAnyEndpoints: boolean
  topologyMode: TopologyMode
}

/**
 * serviceport.go: the cluster endpoints are used unless internalTrafficPolicy is Local, and
 * whenever the port is reachable from outside, even with externalTrafficPolicy=Local (the
 * short-circuit of pod and node traffic jumps to the cluster chain); the local endpoints under
 * either Local policy (the external one only where there is an external frontend).
 */
export function endpointUse(
  internalPolicyLocal: boolean,
  externalPolicyLocal: boolean,
  externallyAccessible: boolean,
): EndpointUse {
  return {
    usesClusterEndpoints: !internalPolicyLocal || externallyAccessible,
    usesLocalEndpoints: internalPolicyLocal || (externallyAccessible && externalPolicyLocal),
  }
}

export function isServingTerminating(
  e: Pick<CategorizableEndpoint, 'serving' | 'terminating'>,
): boolean {
  return e.serving && e.terminating
}

/**
 * topology.go topologyModeFromHints: hints count only when every ready endpoint has one of that
 * kind and at least one names this node (node hints, PreferSameTrafficDistribution: on by
 * default since 1.34) or this node's zone (zone hints).
 */
export function topologyModeFromHints(
  endpoints: readonly CategorizableEndpoint[],
  topology: NodeTopology,
): TopologyMode {
  const {node, zone} = topology
  const ready = endpoints.filter((e) => e.ready)
  if (ready.length === 0) return ''
  if (ready.every((e) => hasHints(e.nodeHints)) && ready.some((e) => e.nodeHints!.includes(node)))
    return 'PreferSameNode'
  if (
    zone !== null &&
    ready.every((e) => hasHints(e.zoneHints)) &&
    ready.some((e) => e.zoneHints!.includes(zone))
  )
    return 'PreferSameZone'
  return ''
}

function hasHints(hints: readonly string[] | undefined): boolean {
  return hints !== undefined && hints.length > 0
}

/** topology.go availableForTopology: no fallback here, that is in choosing the mode. */
function availableForTopology(
  e: CategorizableEndpoint,
  mode: TopologyMode,
  topology: NodeTopology | null,
): boolean {
  if (mode === '' || topology === null) return true
  if (mode === 'PreferSameNode') return e.nodeHints?.includes(topology.node) ?? false
  return topology.zone !== null && (e.zoneHints?.includes(topology.zone) ?? false)
}

/**
 * topology.go CategorizeEndpoints. `key` is the endpoint's identity (Endpoint.String(),
 * `ip:port`) for the union; `topology` null when hints do not apply (a state read from rules
 * has none).
 */
export function categorizeEndpoints<E extends CategorizableEndpoint>(
  endpoints: readonly E[],
  use: EndpointUse,
  key: (e: E) => string,
  topology: NodeTopology | null = null,
): EndpointCategories<E> {
  let clusterEndpoints: E[] | null = null
  let localEndpoints: E[] | null = null
  let hasAnyEndpoints = false
  let topologyMode: TopologyMode = ''
  if (use.usesClusterEndpoints) {
    if (topology !== null) topologyMode = topologyModeFromHints(endpoints, topology)
    clusterEndpoints = endpoints.filter(
      (e) => e.ready && availableForTopology(e, topologyMode, topology),
    )
    // No ready endpoint anywhere (topology already gave way if none was ready for this node):
    // fall back to the serving-terminating ones.
    if (clusterEndpoints.length === 0) clusterEndpoints = endpoints.filter(isServingTerminating)
    hasAnyEndpoints = clusterEndpoints.length > 0
  }
  if (!use.usesLocalEndpoints)
    return {
      clusterEndpoints,
      localEndpoints,
      allReachableEndpoints: clusterEndpoints ?? [],
      hasAnyEndpoints,
      topologyMode,
    }
  let localReady = false
  let localServingTerminating = false
  for (const e of endpoints) {
    if (e.ready) {
      hasAnyEndpoints = true
      if (e.local) localReady = true
    } else if (isServingTerminating(e)) {
      hasAnyEndpoints = true
      if (e.local) localServingTerminating = true
    }
  }
  localEndpoints = localReady
    ? endpoints.filter((e) => e.local && e.ready)
    : localServingTerminating
      ? endpoints.filter((e) => e.local && isServingTerminating(e))
      : []
  if (clusterEndpoints === null)
    return {
      clusterEndpoints,
      localEndpoints,
      allReachableEndpoints: localEndpoints,
      hasAnyEndpoints,
      topologyMode,
    }
  // The local set may hold terminating or topologically unavailable endpoints the cluster set
  // has not.
  const allReachableEndpoints = [...clusterEndpoints]
  const seen = new Set(clusterEndpoints.map(key))
  for (const e of localEndpoints) if (!seen.has(key(e))) allReachableEndpoints.push(e)
  return {clusterEndpoints, localEndpoints, allReachableEndpoints, hasAnyEndpoints, topologyMode}
}

/**
 * The endpoints a path under a Local policy takes: the local ones, or the cluster ones when none
 * is local. This is what an IPVS virtual server does (PR #97081: no real server is no answer),
 * and which set the shares of a service port are counted over: a share is for a new connection
 * to the ClusterIP, which under internalTrafficPolicy=Local takes the local endpoints when there
 * are any (without, it has no local chain and the readers of rules see the cluster chain's).
 */
export function localOrCluster<E>(
  policyLocal: boolean,
  clusterEndpoints: E[],
  localEndpoints: E[],
): E[] {
  return policyLocal && localEndpoints.length > 0 ? localEndpoints : clusterEndpoints
}

// ---------------------------------------------------------------------------------------------
// The same questions asked of the common model, whose endpoints carry a state, not conditions.

/**
 * kube-proxy's conditions of an endpoint in the model: cluster objects say `ready` or
 * `serving-terminating`; rules do not say (null), and kube-proxy wrote them, so ready; `draining`
 * (IPVS weight 0, a real server being deleted) is not an endpoint kube-proxy uses.
 */
export function conditionsOfState(
  state: EndpointState | null,
): Pick<CategorizableEndpoint, 'ready' | 'serving' | 'terminating'> {
  if (state === 'serving-terminating') return {ready: false, serving: true, terminating: true}
  if (state === 'draining') return {ready: false, serving: false, terminating: true}
  return {ready: true, serving: true, terminating: false}
}

const CLUSTER_ONLY: EndpointUse = {usesClusterEndpoints: true, usesLocalEndpoints: false}

/** kube-proxy's cluster endpoints among these model endpoints (no topology: the model has no hints). */
export function clusterSet(endpoints: readonly Endpoint[]): Endpoint[] {
  const seen = endpoints.map((ep) => ({
    ep,
    local: ep.local === true,
    ...conditionsOfState(ep.state),
  }))
  const cats = categorizeEndpoints(seen, CLUSTER_ONLY, (e) => `${e.ep.ip}|${e.ep.port}`)
  return cats.clusterEndpoints!.map((e) => e.ep)
}

/** Whether the endpoints' shares are the local path's (localOrCluster of the ClusterIP). */
export function sharesOnLocalPath(sp: ServicePort): boolean {
  return sp.internalTrafficPolicy === 'Local' && sp.endpoints.some((ep) => ep.local === true)
}

/**
 * Whether a frontend follows a Local policy: internalTrafficPolicy for the ClusterIP,
 * externalTrafficPolicy for the others.
 */
export function frontendPolicyLocal(sp: ServicePort, fe: Frontend): boolean {
  return fe.type === 'ClusterIP'
    ? sp.internalTrafficPolicy === 'Local'
    : sp.externalTrafficPolicy === 'Local'
}

/**
 * The endpoints one frontend of a cluster-built service port sends new connections to, in the
 * given mode: an IPVS virtual server's real servers, or an iptables/nftables frontend's DNAT
 * targets. Under a Local policy these are the local endpoints; without any, IPVS falls back to
 * the cluster path and the other modes have none (the frontend's action says drop or reject).
 * Otherwise the cluster path: the endpoints with a share (the cluster-objects reader gives every
 * other endpoint share 0), or, where the shares are the local set's (sharesOnLocalPath), the
 * cluster set by state (clusterSet).
 */
export function frontendEndpoints(sp: ServicePort, fe: Frontend, mode: Mode): Endpoint[] {
  const clusterPath = sharesOnLocalPath(sp)
    ? clusterSet(sp.endpoints)
    : sp.endpoints.filter((e) => (e.share ?? 0) > 0)
  if (!frontendPolicyLocal(sp, fe)) return clusterPath
  const local = sp.endpoints.filter((e) => e.local === true)
  if (local.length > 0) return local
  return mode === 'ipvs' ? clusterPath : []
}

/**
 * Whether the real servers of one service port's IPVS virtual servers are ones kube-proxy gives
 * them (proxier.go syncService / syncEndpoint): the ClusterIP takes the internal policy's set,
 * every NodePort, externalIP and LoadBalancer virtual server the external policy's, so those are
 * all equal; and under a Local policy a set is the local subset of the other (or, with no local
 * endpoint, all of them: PR #97081). `external` holds one set per external virtual server; a
 * policy null is unknown and explains either subset. Sets are `ip:port` keys.
 */
export function ipvsFrontendSetsExplained(
  clusterIp: ReadonlySet<string> | null,
  external: readonly ReadonlySet<string>[],
  internalPolicy: TrafficPolicy | null,
  externalPolicy: TrafficPolicy | null,
): boolean {
  const first = external[0]
  if (!first) return true
  if (external.some((e) => !sameKeys(e, first))) return false
  if (clusterIp === null || sameKeys(clusterIp, first)) return true
  // The external path is the local subset of the ClusterIP's: not under externalTrafficPolicy=Cluster.
  if (isSubset(first, clusterIp)) return externalPolicy !== 'Cluster'
  // The ClusterIP's is the local subset: only under internalTrafficPolicy=Local, ETP=Cluster.
  if (isSubset(clusterIp, first)) return internalPolicy !== 'Cluster' && externalPolicy !== 'Local'
  return false
}

function sameKeys(x: ReadonlySet<string>, y: ReadonlySet<string>): boolean {
  return x.size === y.size && isSubset(x, y)
}

function isSubset(x: ReadonlySet<string>, y: ReadonlySet<string>): boolean {
  for (const k of x) if (!y.has(k)) return false
  return true
}
