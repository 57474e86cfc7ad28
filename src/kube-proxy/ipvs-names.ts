/**
 * The chains and ipsets only kube-proxy's IPVS mode writes (pkg/proxy/ipvs/proxier.go,
 * docs/ipvs-layouts.md a.4); it shares KUBE-SERVICES, KUBE-POSTROUTING,
 * KUBE-MARK-MASQ, KUBE-FORWARD and KUBE-PROXY-FIREWALL with iptables mode (iptables-names.ts).
 */
import type {Family} from '../model/types.js'

export const KUBE_LOAD_BALANCER = 'KUBE-LOAD-BALANCER'
export const KUBE_LOOP_BACK = 'KUBE-LOOP-BACK'
export const KUBE_NODE_PORT = 'KUBE-NODE-PORT'
export const KUBE_IPVS_FILTER = 'KUBE-IPVS-FILTER'
export const KUBE_IPVS_OUT_FILTER = 'KUBE-IPVS-OUT-FILTER'
export const KUBE_SOURCE_RANGES_FIREWALL = 'KUBE-SOURCE-RANGES-FIREWALL'
/** KUBE-IPVS-FILTER, KUBE-IPVS-OUT-FILTER and the KUBE-IPVS-IPS set. */
export const KUBE_IPVS_PREFIX = 'KUBE-IPVS-'
/** The chains only IPVS mode writes (KUBE-NODE-PORT, not iptables mode's KUBE-NODEPORTS). */
export const IPVS_ONLY_CHAINS = [
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
  KUBE_LOAD_BALANCER,
  KUBE_NODE_PORT,
  KUBE_SOURCE_RANGES_FIREWALL,
] as const

/** ipset's limit on a set name. */
const IPSET_NAME_MAX = 31

/** kube-proxy's set name: `KUBE-X`, or for the IPv6 proxier `KUBE-6-X` cut to 31 characters. */
export function ipvsSetName(base: string, family: Family): string {
  return family === 'IPv4' ? `KUBE-${base}` : `KUBE-6-${base}`.slice(0, IPSET_NAME_MAX)
}
