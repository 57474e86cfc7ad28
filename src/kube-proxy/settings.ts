/**
 * kube-proxy's and the API's defaults that rules and objects leave unsaid, for every mode.
 */

/**
 * The masquerade mark, bit 14 (--iptables-masquerade-bit), as the upstream tests write it: set
 * by KUBE-MARK-MASQ in iptables and IPVS mode, and by the mark rule of nftables mode.
 */
export const DEFAULT_MASQUERADE_MARK = '0x4000'

/** The API default of sessionAffinityConfig.clientIP.timeoutSeconds (3 hours). */
export const DEFAULT_AFFINITY_TIMEOUT_SECONDS = 10800

/**
 * kube-proxy's `--nodeport-addresses` keywords beside CIDRs (1.37, PR #138427): `primary` = the
 * node's primary IP of each family, `localhost` = the loopback addresses, `all` = every local
 * address. nftables mode defaults to `primary` (an empty list means it too); the other modes to
 * every local address (docs/kube-proxy-layouts.md §3.10).
 */
export const NODEPORT_ADDRESS_KEYWORDS = ['primary', 'localhost', 'all'] as const
export type NodePortAddressKeyword = (typeof NODEPORT_ADDRESS_KEYWORDS)[number]
export const NFTABLES_DEFAULT_NODEPORT_ADDRESSES = ['primary']

export function isNodePortAddressKeyword(value: string): value is NodePortAddressKeyword {
  return (NODEPORT_ADDRESS_KEYWORDS as readonly string[]).includes(value)
}
