/**
 * Where kube-proxy (and the kubelet) hook their iptables chains into the kernel's built-in
 * chains (pkg/proxy/iptables/proxier.go iptablesJumpChains, iptablesKubeletJumpChains), and what
 * its drop and reject rules mean. kube-proxy's own test expectations and many pasted dumps lack
 * the built-in chains: a walk of such a dump assumes these jumps, and says so.
 */
import {
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_MARK_DROP,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from './iptables-names.js'
import {KUBE_IPVS_FILTER, KUBE_IPVS_OUT_FILTER, KUBE_SOURCE_RANGES_FIREWALL} from './ipvs-names.js'

export interface IptablesHook {
  table: 'filter' | 'nat'
  /** The built-in chain. */
  builtin: string
  /** The chain it jumps to. */
  chain: string
  /** Only new connections (`-m conntrack --ctstate NEW`). */
  newOnly: boolean
}

/** In the order kube-proxy inserts them (each at the top of its built-in chain, kubelet's last). */
export const IPTABLES_HOOKS: readonly IptablesHook[] = [
  {table: 'filter', builtin: 'INPUT', chain: KUBE_PROXY_FIREWALL, newOnly: true},
  {table: 'filter', builtin: 'INPUT', chain: KUBE_NODEPORTS, newOnly: false},
  {table: 'filter', builtin: 'INPUT', chain: KUBE_EXTERNAL_SERVICES, newOnly: true},
  {table: 'filter', builtin: 'INPUT', chain: KUBE_FIREWALL, newOnly: false},
  {table: 'filter', builtin: 'FORWARD', chain: KUBE_PROXY_FIREWALL, newOnly: true},
  {table: 'filter', builtin: 'FORWARD', chain: KUBE_FORWARD, newOnly: false},
  {table: 'filter', builtin: 'FORWARD', chain: KUBE_SERVICES, newOnly: true},
  {table: 'filter', builtin: 'FORWARD', chain: KUBE_EXTERNAL_SERVICES, newOnly: true},
  {table: 'filter', builtin: 'OUTPUT', chain: KUBE_PROXY_FIREWALL, newOnly: true},
  {table: 'filter', builtin: 'OUTPUT', chain: KUBE_SERVICES, newOnly: true},
  {table: 'filter', builtin: 'OUTPUT', chain: KUBE_FIREWALL, newOnly: false},
  {table: 'nat', builtin: 'OUTPUT', chain: KUBE_SERVICES, newOnly: false},
  {table: 'nat', builtin: 'PREROUTING', chain: KUBE_SERVICES, newOnly: false},
  {table: 'nat', builtin: 'POSTROUTING', chain: KUBE_POSTROUTING, newOnly: false},
]

/**
 * Why a kube-proxy rule drops or rejects a new connection, from the comment kube-proxy writes on
 * it; null when the comment is not one of kube-proxy's.
 */
export function iptablesDropReason(
  comment: string | null,
  source: string,
  chain = '',
): string | null {
  // IPVS mode's filter chains carry no comment on the rules that drop: their chain says it.
  if (chain === KUBE_SOURCE_RANGES_FIREWALL)
    return `source ${source} is outside the service's loadBalancerSourceRanges`
  if (chain === KUBE_IPVS_FILTER || chain === KUBE_IPVS_OUT_FILTER)
    return "no service on this port: the address is a service's, and kube-proxy's IPVS filter rejects new connections to its other ports"
  if (comment === null) return null
  if (comment.endsWith(' has no endpoints'))
    return 'the service has no endpoints, so kube-proxy rejects new connections'
  if (comment.endsWith(' has no local endpoints'))
    return 'externalTrafficPolicy=Local and no endpoint of this service runs on this node'
  if (comment.includes(' traffic not accepted by '))
    return `source ${source} is outside the service's loadBalancerSourceRanges`
  if (comment === 'block incoming localnet connections')
    return 'connections to 127.0.0.0/8 from outside the node are blocked (the route_localnet guard)'
  return null
}

/**
 * The mark chains whose effect is fixed (the kubelet's KUBE-MARK-DROP: mark 0x8000, dropped by its
 * KUBE-FIREWALL; KUBE-MARK-MASQ: mark 0x4000, masqueraded in KUBE-POSTROUTING), for a walk of a
 * dump that leaves them out.
 */
export const KUBELET_MARK_CHAINS: Readonly<Record<string, 'drop' | 'masquerade'>> = {
  [KUBE_MARK_DROP]: 'drop',
  [KUBE_MARK_MASQ]: 'masquerade',
}
