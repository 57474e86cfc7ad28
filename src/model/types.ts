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
   * Optional (added for issue 22 §3): the nftables tables of an nft listing that are not
   * kube-proxy's, as `family name` ("inet firewalld", "ip filter"). [] when there are none;
   * absent or null when the input has no nftables listing. Tables a newer host nft wrote can
   * crash an older kube-proxy's nft, and CNIs show in them.
   */
  otherTables?: string[] | null
  /**
   * Optional (issue 22 §3): the first word of the chains in an iptables dump that neither
   * kube-proxy nor iptables itself made ("cali-", "CILIUM_", "KUBE-ROUTER-"), once each; absent
   * or null when the input has no iptables dump. How kp tells which CNI runs on the node.
   */
  otherChains?: string[] | null
  /**
   * Whose point of view a state of cluster objects takes: one node's (`--node`, or this host when
   * the objects name it), or the whole cluster's, where a Local policy differs per node (then
   * `name` is null). Absent for states read from a node's rules, which are always that node's.
   */
  view?: 'node' | 'cluster-wide'
  /**
   * nftables mode: the kube-proxy layout generations the rules show, e.g. ["1.36+"]; two when the
   * table mixes generations. Added (optional, issue 22) so explain and list can say which
   * releases wrote the rules; absent in states saved before and for other modes.
   */
  kubeProxyLayouts?: string[]
}

export interface Frontend {
  type: FrontendType
  /** null for a NodePort that listens on every node address, or when `redacted`. */
  ip: string | null
  /** null when the source does not show the port; never guessed. */
  port: number | null
  /** loadBalancerSourceRanges that apply to this frontend (normalised CIDRs). */
  sourceRanges: string[]
  /**
   * loadBalancerSourceRanges the input hid behind a placeholder (`x.x.x.x/25`, `<CIDR>`), as
   * written; absent when none was. The range set is then partly unknown: a client outside
   * `sourceRanges` may be inside a hidden one. Added after schemaVersion 1 shipped, so optional.
   */
  redactedSourceRanges?: string[]
  action: FrontendAction
  /**
   * true when kube-proxy leaves connections from the node itself to this address un-NATed
   * unless the address is one of the node's (old iptables layouts match externalIPs with
   * `-m addrtype ! --src-type LOCAL`). Absent when the source shows no such exclusion.
   */
  nodeSourceExcluded?: boolean
  /**
   * true when a connection from outside `sourceRanges` is only marked for drop (≤1.24 nat KUBE-FW
   * ending in KUBE-MARK-DROP): the kubelet drops marked packets only in filter INPUT and OUTPUT, so
   * a forwarded one leaves un-NATed. Absent when the source shows no such mark.
   */
  outsideRangesMarkedForDrop?: boolean
  /**
   * true when `action: 'drop'` comes from a ≤1.24 `has no local endpoints` rule (nat KUBE-XLB / KUBE-SVL
   * -> KUBE-MARK-DROP): only marked, so a forwarded LB IP / externalIP connection leaves un-NATed.
   */
  noLocalMarkedForDrop?: boolean
  /**
   * A NodePort on every node address whose port kube-proxy 1.37+ in nftables mode rejects on
   * 127.0.0.1 (map `localhost-nodeport-reject-ports`, alpha gate KubeProxyNFTablesLocalhostNodePorts).
   * Absent otherwise: nftables mode then leaves 127.0.0.1:port un-NATed.
   */
  localhostRejected?: true
  /**
   * Cluster-wide view only: under a Local policy, the nodes that run a usable endpoint, where this
   * frontend forwards (to that node's endpoints); every other node drops, or in IPVS mode uses
   * every endpoint. Absent otherwise.
   */
  forwardedOnNodes?: string[]
  /**
   * This frontend's own endpoints, present only when they differ from the service port's and no
   * traffic policy explains it: IPVS virtual servers of one service port that disagree
   * (kubernetes #89923). Added after schemaVersion 1's release, so optional (docs/model.md).
   */
  endpoints?: Endpoint[]
  /** true when the input hid the address behind a placeholder (`x.x.x.x`, `<IP>`); `ip` is null then. */
  redacted?: true
  /**
   * Set when what a new connection here gets depends on chains, sets or maps the input references
   * but does not contain (a fragment): `action` is then not an answer. Added after schemaVersion 1
   * shipped, so optional.
   */
  incomplete?: Incomplete
}

/**
 * What the input references but does not contain: a grep of a dump, a partial sync, one table
 * of two. Unknown is not "no": an answer that depends on these is unknown, never a verdict.
 */
export interface Incomplete {
  /** The chain, set or map names, e.g. "KUBE-SVL-ZROLNW67U6B7G27Z", "service-ips". */
  missing: string[]
  /** The read-only command that would collect them, e.g. "iptables-save -t nat". */
  collect: string
}

export interface Endpoint {
  /** null only when `redacted`. */
  ip: string | null
  port: number | null
  /** null when the source cannot tell. */
  local: boolean | null
  /** Effective probability (0..1) that a new connection picks it; null when a scheduler decides. */
  share: number | null
  /** IPVS weight; null in other modes. */
  weight: number | null
  state: EndpointState | null
  /** true when the input hid the address behind a placeholder (`x.x.x.x`, `<IP>`); `ip` is null then. */
  redacted?: true
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
  /**
   * externalTrafficPolicy=Local: where the rules send this node's own connections (a local source
   * address, 127.0.0.1 included) to an external frontend. 'cluster': to every endpoint,
   * masqueraded (the "route LOCAL traffic" rule of KUBE-EXT, 1.24+, and of KUBE-XLB, ≈1.15–1.23);
   * 'policy': as for any client, to this node's endpoints or the "has no local endpoints" drop
   * (KUBE-XLB without that rule, ≤≈1.14). Absent when the source does not show it (added after
   * schemaVersion 1 shipped; only the iptables reader sets it).
   */
  externalFromNode?: 'cluster' | 'policy'
  endpoints: Endpoint[]
  rules: SourceRef[]
  /**
   * Set when the service port was built from a fragment: some of what it references is not in
   * the input, so its endpoints, locality or frontends may be partial. Optional (added after
   * schemaVersion 1 shipped).
   */
  incomplete?: Incomplete
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
  /**
   * false when an error kept part of the input from being read: the state holds what could be
   * read. Absent otherwise (states saved before it was added lack it too).
   */
  complete?: boolean
}

/**
 * kube-proxy's own configuration, as `kp migrate --kube-proxy-config` reads it (the kubeadm
 * ConfigMap `kube-system/kube-proxy`, a KubeProxyConfiguration file, or a command line of flags;
 * docs/model.md "KubeProxyConfig"). Every field is null when the source does not set
 * it: kube-proxy then uses its default, which is what several findings are about.
 */
export interface KubeProxyConfig {
  kind: 'KubeProxyConfig'
  /** The form it was read from. */
  form: 'configmap' | 'file' | 'flags'
  /** `mode` / --proxy-mode as written ("" is the same as unset: the default, iptables). */
  mode: string | null
  nodePortAddresses: string[] | null
  /** detectLocalMode as written (ClusterCIDR, NodeCIDR, BridgeInterface, InterfaceNamePrefix). */
  detectLocalMode: string | null
  /** detectLocalMode read into kp's detector names. */
  localDetector: LocalDetector | null
  /** The detector's interface (bridgeInterface or interfaceNamePrefix). */
  localInterface: string | null
  /** clusterCIDR split at commas. */
  clusterCIDRs: string[] | null
  /** The mode's masqueradeBit (0-31). */
  masqueradeBit: number | null
  masqueradeAll: boolean | null
  /** iptables.localhostNodePorts. */
  localhostNodePorts: boolean | null
  /** conntrack.tcpBeLiberal (kube-proxy then skips its INVALID-drop rule). */
  conntrackTcpBeLiberal: boolean | null
  ipvsScheduler: string | null
  ipvsStrictARP: boolean | null
  ipvsExcludeCIDRs: string[] | null
  featureGates: Record<string, boolean>
  /** Where each field that was set is written, by field name above. */
  at: Record<string, SourceRef>
}
