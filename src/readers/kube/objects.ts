/**
 * The fields of Services, EndpointSlices and legacy Endpoints that kube-proxy reads, as the
 * cluster-objects reader (./parse.ts) reads them, each with the line of its object.
 */
import type {Protocol, SourceRef} from '../../model/types.js'

export interface KubeServicePort {
  /** "" for an unnamed port (the EndpointSlice port is then also ""). */
  name: string
  protocol: Protocol
  port: number
  /** 0 when absent: no NodePort. */
  nodePort: number
}

export interface KubeLoadBalancerIngress {
  ip: string
  /** "VIP", "Proxy", or null when unset (unset means VIP). */
  ipMode: string | null
}

export interface KubeService {
  ref: SourceRef
  namespace: string
  name: string
  labels: Record<string, string>
  /** spec.type; "ClusterIP" when absent (the API default). */
  type: string
  /** spec.clusterIPs, or [spec.clusterIP] when clusterIPs is absent; "None" kept as written. */
  clusterIPs: string[]
  ports: KubeServicePort[]
  externalIPs: string[]
  loadBalancerIngress: KubeLoadBalancerIngress[]
  loadBalancerSourceRanges: string[]
  externalTrafficPolicy: string | null
  internalTrafficPolicy: string | null
  healthCheckNodePort: number
  /** "ClientIP" or "None". */
  sessionAffinity: string
  /** sessionAffinityConfig.clientIP.timeoutSeconds, null when absent. */
  affinityTimeoutSeconds: number | null
}

export interface KubeSlicePort {
  /** null when the port has no name at all: kube-proxy ignores such a port. */
  name: string | null
  protocol: Protocol
  /** null when absent or 0: kube-proxy ignores such a port. */
  port: number | null
}

export interface KubeSliceEndpoint {
  addresses: string[]
  /** Conditions as written; null = absent (ready and serving then count as true, terminating as false). */
  ready: boolean | null
  serving: boolean | null
  terminating: boolean | null
  nodeName: string | null
  /** The zone of the endpoint's node (topology.kubernetes.io/zone), when written. */
  zone: string | null
  zoneHints: string[]
  nodeHints: string[]
}

export interface KubeEndpointSlice {
  ref: SourceRef
  namespace: string
  name: string
  labels: Record<string, string>
  /** "IPv4", "IPv6" or "FQDN". */
  addressType: string
  ports: KubeSlicePort[]
  endpoints: KubeSliceEndpoint[]
  /** Set when the slice was made by kp from a legacy v1 Endpoints object. */
  synthesizedFrom: 'Endpoints' | null
}

export interface KubeLegacyEndpoints {
  ref: SourceRef
  namespace: string
  name: string
  labels: Record<string, string>
  subsets: Array<{
    addresses: Array<{ip: string; nodeName: string | null}>
    notReadyAddresses: Array<{ip: string; nodeName: string | null}>
    ports: KubeSlicePort[]
  }>
}

/** What one kube source says: the objects kube-proxy would look at. */
export interface KubeObjects {
  services: KubeService[]
  slices: KubeEndpointSlice[]
  legacyEndpoints: KubeLegacyEndpoints[]
}
