/**
 * The common model (docs/model.md, schemaVersion 1). Types only: this module imports nothing,
 * and every reader, renderer and analysis speaks in these shapes. `kp list --json` prints a
 * ProxyState; `-f state.json` reads one back.
 */

export type Mode = 'iptables' | 'ipvs' | 'nftables' | 'cluster'
export type Protocol = 'TCP' | 'UDP' | 'SCTP'
export type Family = 'IPv4' | 'IPv6'
export type Severity = 'error' | 'warning' | 'info'
export type FrontendType = 'ClusterIP' | 'NodePort' | 'ExternalIP' | 'LoadBalancer' | 'External'
export type FrontendAction = 'forward' | 'reject' | 'drop'
export type TrafficPolicy = 'Cluster' | 'Local'
export type EndpointState = 'ready' | 'serving-terminating' | 'draining'
/** How kube-proxy told pod traffic from other traffic (pkg/proxy/util/localdetector.go). */
export type LocalDetector = 'cidr' | 'interface' | 'interface-prefix' | 'none'

/** A position in one of the sources: 1-based line. */
export interface SourceRef {
  path: string
  line: number
}

export interface SourceInfo {
  /** A file path, "-" for stdin, or "live:<command>". */
  path: string
  /** A format id from the reader registry (src/readers/registry.ts). */
  format: string
  /** The tool that produced it, e.g. "iptables v1.8.9 (nf_tables)", when the source says so. */
  tool: string | null
}

export interface NodeInfo {
  name: string | null
  podCIDRs: string[]
  localDetector: LocalDetector | null
  /**
   * The bridge interface or interface prefix ("veth+" / "veth*" written as "veth") for the
   * interface detectors; null otherwise. Added to docs/model.md because `localDetector` alone
   * cannot be rendered back into rules.
   */
  localInterface: string | null
  /** As written in the rules, e.g. "0x4000"; null when no rule shows it. */
  masqueradeMark: string | null
  masqueradeAll: boolean | null
  randomFully: boolean | null
  localhostNodePorts: boolean | null
  /**
   * Node addresses that accept NodePort traffic. [] means every local address (kube-proxy's
   * default); null means the source does not show it.
   */
  nodePortAddresses: string[] | null
  conntrackInvalidDrop: boolean | null
  kernel: string | null
  nftVersion: string | null
  iptablesBackends: string[] | null
  /**
   * nftables mode: the kube-proxy layout generations the rules show, e.g. ["1.36+"]; two when the
   * table mixes generations. Added (optional, issue 22) so explain and list can say which
   * releases wrote the rules; absent in states saved before and for other modes.
   */
  kubeProxyLayouts?: string[]
}

export interface Frontend {
  type: FrontendType
  /** null for a NodePort that listens on every node address. */
  ip: string | null
  /** null when the source does not show the port; never guessed. */
  port: number | null
  /** loadBalancerSourceRanges that apply to this frontend (normalised CIDRs). */
  sourceRanges: string[]
  action: FrontendAction
}

export interface Endpoint {
  ip: string
  port: number | null
  /** null when the source cannot tell. */
  local: boolean | null
  /** Effective probability (0..1) that a new connection picks it; null when a scheduler decides. */
  share: number | null
  /** IPVS weight; null in other modes. */
  weight: number | null
  state: EndpointState | null
}

export interface SessionAffinity {
  type: 'ClientIP'
  timeoutSeconds: number | null
}

export interface ServicePort {
  namespace: string | null
  name: string | null
  /** "" for an unnamed port; null when unknown. */
  portName: string | null
  protocol: Protocol
  family: Family
  frontends: Frontend[]
  healthCheckNodePort: number | null
  internalTrafficPolicy: TrafficPolicy | null
  externalTrafficPolicy: TrafficPolicy | null
  sessionAffinity: SessionAffinity | null
  scheduler: string | null
  endpoints: Endpoint[]
  rules: SourceRef[]
}

export interface ForeignObject {
  /** e.g. "iptables-chain", "iptables-rule", "ipvs-virtual-server", "nft-table", "leftover". */
  kind: string
  name: string
  reason: string
  source: SourceRef | null
}

export interface Diagnostic {
  severity: Severity
  /** A stable code with a per-format prefix (IPT_*, NFT_*, KUBE_*, ...), one of src/catalog/diagnostics.ts. */
  code: string
  message: string
  source: SourceRef | null
}

export interface ProxyState {
  schemaVersion: 1
  kind: 'ProxyState'
  mode: Mode
  sources: SourceInfo[]
  node: NodeInfo
  services: ServicePort[]
  foreign: ForeignObject[]
  diagnostics: Diagnostic[]
}
