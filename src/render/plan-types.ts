/**
 * The per-service-port plan: one service port restated as kube-proxy's own inputs (frontends,
 * policies, endpoints in its order and categories), which each renderer writes in its own layout.
 */
import type {Family, ServicePort, SourceRef} from '../model/types.js'
import type {CategorizableEndpoint} from '../kube-proxy/endpoints.js'

/** One endpoint as kube-proxy sees it. */
export interface PlannedEndpoint extends CategorizableEndpoint {
  ip: string
  port: number
  local: boolean
  /** false when the source does not say whether it runs on this node (`local` is then false). */
  localKnown: boolean
  /** Go net.JoinHostPort: `ip:port`, `[ipv6]:port`. */
  endpointString: string
}

export interface PlannedFrontend {
  ip: string
  port: number
  sourceRanges: string[]
}

export interface ServicePlan {
  sp: ServicePort
  /** displayName(sp), for findings. */
  display: string
  family: Family
  namespace: string
  name: string
  portName: string
  /** ServicePortName.String(): `ns/name:port`, or `ns/name` for an unnamed port. */
  spn: string
  /** true when the names were made up because the source does not show them. */
  syntheticName: boolean
  /** `tcp`, `udp`, `sctp`. */
  protocol: string
  clusterIP: PlannedFrontend | null
  externalIPs: PlannedFrontend[]
  loadBalancerIPs: PlannedFrontend[]
  /** The loadBalancerSourceRanges (the union over LB frontends). */
  sourceRanges: string[]
  nodePort: number | null
  healthCheckNodePort: number | null
  internalLocal: boolean
  externalLocal: boolean
  externallyAccessible: boolean
  affinitySeconds: number | null
  /** The source's IPVS scheduler when it is a scheduler name (setting-values.ts isSchedulerName); null when unknown or left out. */
  scheduler: string | null
  /** Endpoints in kube-proxy's order (sorted by endpoint string). */
  allEndpoints: PlannedEndpoint[]
  clusterEndpoints: PlannedEndpoint[]
  localEndpoints: PlannedEndpoint[]
  allLocallyReachable: PlannedEndpoint[]
  hasEndpoints: boolean
  usesClusterEndpoints: boolean
  usesLocalEndpoints: boolean
  /** The decisions syncProxyRules makes per service port, shared by both rule-writing modes. */
  usesClusterPolicyChain: boolean
  usesLocalPolicyChain: boolean
  /** false: ClusterIP traffic is rejected (no endpoints) or dropped (ITP=Local, none local). */
  hasInternalEndpoints: boolean
  /** false: external traffic is rejected (no endpoints) or dropped (ETP=Local, none local). */
  hasExternalEndpoints: boolean
  /** The external chain exists when there are endpoints anywhere and the port is reachable from outside. */
  usesExternalChain: boolean
  /**
   * No endpoint is known, yet the source drops (does not reject) this port's ClusterIP /
   * external traffic under a Local policy: what kube-proxy does when the service has endpoints,
   * none of them on this node, and all it writes then (fixtures/iptables/realsave-handmade-ipv6,
   * ns10/svc10). The target drops that traffic too instead of rejecting it as "no endpoints".
   */
  internalDropsNoLocal: boolean
  externalDropsNoLocal: boolean
  evidence: SourceRef[]
}
