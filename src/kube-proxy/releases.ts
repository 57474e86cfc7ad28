/**
 * What changed in kube-proxy's releases that a migration must know: bugs fixed in one release
 * and not before, limits, feature gates and the deprecation plans of 2025-2026. Each constant
 * names its upstream issue or PR; docs/kube-proxy-releases.md restates them with their sources.
 */
import type {KubeProxyVersion} from './versions.js'
import {NFT_COMMENT_MAX_BYTES} from './nftables-names.js'

export {NFT_COMMENT_MAX_BYTES}

/**
 * nftables keeps at most 128 bytes of an element comment (NFTNL_UDATA_COMMENT_MAXLEN); kube-proxy
 * comments each map element with the ServicePortName (`ns/name:port`). Before PR #139516 it wrote
 * the name whole, so one longer name failed the whole transaction: every sync, every Service
 * (kubernetes #139515). Since 1.37 it cuts the comment to 128 bytes.
 */
export const NFT_COMMENT_TRUNCATED_SINCE: KubeProxyVersion = '1.37'

/**
 * The `nft` binary inside kube-proxy crashed on tables written by a newer host nft (≥ 1.1.3,
 * e.g. `type ifname` sets with user data): syncs never finish (kubernetes #136786). kube-proxy
 * 1.36 lists with `--terse` (PR #137501, backported to the 1.33-1.35 patch releases of March
 * 2026); 1.37 ships nft 1.0.6.1 and lists over netlink (PRs #140405, #137536). A further crash on
 * 1.36 (#140898) is not fixed in a release kp knows.
 */
export const NEWER_HOST_NFT = [1, 1, 3] as const
export const FOREIGN_TABLE_CRASH_FIXED_SINCE: KubeProxyVersion = '1.37'
export const FOREIGN_TABLE_CRASH_MITIGATED_SINCE: KubeProxyVersion = '1.36'

/**
 * Full nftables syncs took 13-20 minutes at 5,000 services / 250,000 endpoints (kubernetes
 * #135639) and grew super-linearly (#139513). 1.36 removed the per-endpoint chains and the
 * per-service masquerade rules (PRs #135800, #136499); 1.37 the single-endpoint maps (#140723).
 * The thresholds are a tenth of the reported case, where syncs already take minutes
 * (docs/kube-proxy-releases.md "scale").
 */
export const NFT_SCALE_SERVICE_PORTS = 500
export const NFT_SCALE_ENDPOINTS = 25_000
export const NFT_SCALE_IMPROVED_SINCE: KubeProxyVersion = '1.36'

/**
 * From 1.37 kube-proxy lists its nftables objects over netlink (gate NFTablesNetlink, beta, on);
 * before, it runs `nft --json list`, so a kube-proxy on the host (k3s, rke2, k0s) needs an nft
 * built with JSON support (k3s #11267, rke2 #8840, PR #137536).
 */
export const NFT_NETLINK_LISTING_SINCE: KubeProxyVersion = '1.37'

/**
 * IPVS mode: deprecated in 1.35 (KEP-5495, PR #134539); the `KubeProxyIPVS` gate exists since
 * 1.37 (default on, PR #139397); planned off by default in 1.40 and removed in 1.43, after which
 * `mode: ipvs` makes kube-proxy fail to start (enhancements #6120). Plans, not releases.
 */
export const IPVS_TIMELINE = {
  deprecated: '1.35',
  gateAdded: '1.37',
  gate: 'KubeProxyIPVS',
  defaultOff: '1.40',
  removed: '1.43',
} as const

/** KEP-5343 plans to make nftables the default mode; 1.37 still defaults to iptables. */
export const DEFAULT_MODE = 'iptables'
export const DEFAULT_MODE_KEP = 'KEP-5343'

/**
 * Localhost NodePorts in nftables mode: alpha in 1.37 behind this gate (PR #138427, KEP-6032),
 * TCP only (a userspace proxy; UDP and SCTP are rejected), and kubernetes #142183: the proxy does
 * not start after a restart with new nodePortAddresses.
 */
export const NFT_LOCALHOST_NODEPORTS_GATE = 'KubeProxyNFTablesLocalhostNodePorts'
export const NFT_LOCALHOST_NODEPORTS_SINCE: KubeProxyVersion = '1.37'

/**
 * The kernel modules nftables kube-proxy's rules use beyond nf_tables itself (kernel ≥ 5.13 is
 * not enough on custom kernels without them: siderolabs/pkgs #951).
 */
export const NFT_KERNEL_MODULES = [
  'nft_fib_ipv4',
  'nft_fib_ipv6',
  'nft_numgen',
  'nft_nat',
  'nft_masq',
  'nft_reject_inet',
  'nft_ct',
] as const
