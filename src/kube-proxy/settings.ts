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
