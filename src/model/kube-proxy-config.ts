/**
 * kube-proxy's own configuration, as `kp migrate --kube-proxy-config` reads it (the kubeadm
 * ConfigMap `kube-system/kube-proxy`, a KubeProxyConfiguration file, or a command line of flags;
 * docs/model.md "KubeProxyConfig"). Types only. Every field is null when the source does not set
 * it: kube-proxy then uses its default, which is what several findings are about.
 */
import type {LocalDetector, SourceRef} from './types.js'

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
