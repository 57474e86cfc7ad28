/**
 * The pitfalls of 2025-2026 that depend on the kube-proxy release the node will run (issue 22
 * §3; docs/kube-proxy-releases.md): Service names too long for nftables comments, nft binaries
 * that crash on a newer host's tables, sync times at scale, kernel modules beyond the version,
 * the nft binary a host-run kube-proxy needs, ClusterIP ports no Service uses, and the default
 * mode change planned by KEP-5343. The release facts live in src/kube-proxy/releases.ts.
 */
import {servicePortName} from '../../core/state.js'
import {
  DEFAULT_MODE,
  DEFAULT_MODE_KEP,
  FOREIGN_TABLE_CRASH_FIXED_SINCE,
  FOREIGN_TABLE_CRASH_MITIGATED_SINCE,
  NEWER_HOST_NFT,
  NFT_COMMENT_MAX_BYTES,
  NFT_COMMENT_TRUNCATED_SINCE,
  NFT_KERNEL_MODULES,
  NFT_NETLINK_LISTING_SINCE,
  NFT_SCALE_ENDPOINTS,
  NFT_SCALE_IMPROVED_SINCE,
  NFT_SCALE_SERVICE_PORTS,
} from '../../kube-proxy/releases.js'
import {versionAtLeast} from '../../kube-proxy/versions.js'
import {
  type Check,
  DOCS,
  type MigrationContext,
  finding,
  from,
  parseVersion,
  serviceEvidence,
  serviceNames,
  versionBelow,
} from './context.js'

const utf8 = new TextEncoder()

/** Moving into nftables mode (from another mode): the checks of what nftables kube-proxy needs. */
const intoNftables = (ctx: MigrationContext): boolean =>
  ctx.to === 'nftables' && !from(ctx, 'nftables')

/** kubernetes #139515: one ServicePortName over 128 bytes fails every nftables sync before 1.37. */
export const longServiceNames: Check = (ctx) => {
  if (ctx.to !== 'nftables') return []
  if (versionAtLeast(ctx.kubeProxyVersion, NFT_COMMENT_TRUNCATED_SINCE)) return []
  const long = ctx.state.services.filter((sp) => {
    const name = servicePortName(sp)
    return name !== null && utf8.encode(name).length > NFT_COMMENT_MAX_BYTES
  })
  if (long.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_NFT_LONG_NAME',
      severity: 'error',
      title: `${long.length} service port name(s) are longer than the ${NFT_COMMENT_MAX_BYTES} bytes an nftables comment holds`,
      message: `nftables kube-proxy ${ctx.kubeProxyVersion} comments its map elements with the service port name (namespace/name:port) whole. nftables refuses a comment over ${NFT_COMMENT_MAX_BYTES} bytes, so one such Service makes every sync fail: no Service on the node is updated, kube-dns included (kubernetes #139515).`,
      services: serviceNames(long),
      addresses: [],
      evidence: serviceEvidence(long),
      action: `Run kube-proxy ${NFT_COMMENT_TRUNCATED_SINCE} or newer (it cuts the comments, PR #139516), or shorten these Services' namespace, name or port name before switching.`,
      docs: DOCS.longNames,
    }),
  ]
}

/** kubernetes #136786 / #140898: the nft inside kube-proxy crashes on tables a newer host nft wrote. */
export const foreignTablesNewerNft: Check = (ctx) => {
  if (ctx.to !== 'nftables') return []
  if (versionAtLeast(ctx.kubeProxyVersion, FOREIGN_TABLE_CRASH_FIXED_SINCE)) return []
  const v = parseVersion(ctx.state.node.nftVersion)
  if (v === null || versionBelow(v, NEWER_HOST_NFT)) return []
  const tables = ctx.state.node.otherTables
  const mitigated = versionAtLeast(ctx.kubeProxyVersion, FOREIGN_TABLE_CRASH_MITIGATED_SINCE)
  const why = `The host has nft ${ctx.state.node.nftVersion}; tables that nft ${NEWER_HOST_NFT.join('.')} or newer writes (for example firewalld's \`type ifname\` sets) make the older nft inside kube-proxy ${ctx.kubeProxyVersion} crash when it lists the ruleset, so its syncs never finish and no Service works (kubernetes #136786${mitigated ? '; 1.36 lists with --terse, yet #140898 still crashes' : ''}).`
  const action = `Run kube-proxy ${FOREIGN_TABLE_CRASH_FIXED_SINCE} or newer (nft 1.0.6.1, netlink listing; PRs #140405, #137536)${mitigated ? '' : `, or at least ${FOREIGN_TABLE_CRASH_MITIGATED_SINCE} or a patch release with PR #137501`}, before switching.`
  if (tables === undefined || tables === null) {
    return [
      finding({
        id: 'MIGRATE_NFT_FOREIGN_NEWER_NFT_UNVERIFIED',
        severity: 'warning',
        title: 'Cannot verify whether other nftables tables will crash kube-proxy',
        message: `${why} The input has no nftables listing, so kp cannot see whether other tables exist.`,
        services: [],
        addresses: [],
        evidence: [],
        action: `Run \`nft list tables\` on the node (kp collect records the ruleset); if it lists tables other than kube-proxy's: ${action}`,
        docs: DOCS.newerNft,
      }),
    ]
  }
  if (tables.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_NFT_FOREIGN_NEWER_NFT',
      severity: mitigated ? 'warning' : 'error',
      title: `Tables written by nft ${ctx.state.node.nftVersion} can crash kube-proxy ${ctx.kubeProxyVersion}'s nft`,
      message: `${why} Other tables here: ${tables.slice(0, 5).join(', ')}${tables.length > 5 ? ', ...' : ''}.`,
      services: [],
      addresses: [],
      evidence: [],
      action,
      docs: DOCS.newerNft,
    }),
  ]
}

/** kubernetes #135639, #139513: full nftables syncs of minutes on large clusters before 1.36. */
export const nftablesScale: Check = (ctx) => {
  if (ctx.to !== 'nftables') return []
  const ports = ctx.state.services.length
  const endpoints = ctx.state.services.reduce((n, sp) => n + sp.endpoints.length, 0)
  if (ports < NFT_SCALE_SERVICE_PORTS && endpoints < NFT_SCALE_ENDPOINTS) return []
  const improved = versionAtLeast(ctx.kubeProxyVersion, NFT_SCALE_IMPROVED_SINCE)
  return [
    finding({
      id: 'MIGRATE_NFT_SCALE',
      severity: improved ? 'info' : 'warning',
      title: `${ports} service ports and ${endpoints} endpoints: nftables full syncs may take minutes`,
      message: `Full nftables syncs took 13-20 minutes at 5,000 services and 250,000 endpoints and grew faster than the service count (kubernetes #135639, #139513). kp warns from ${NFT_SCALE_SERVICE_PORTS} service ports or ${NFT_SCALE_ENDPOINTS} endpoints. ${improved ? `kube-proxy ${ctx.kubeProxyVersion} has the 1.36 rework (no per-endpoint chains, one masquerade rule)${versionAtLeast(ctx.kubeProxyVersion, '1.37') ? ' and 1.37 single-endpoint rules' : ''}, which shortens them; the rework of full syncs is still pending upstream.` : `kube-proxy ${ctx.kubeProxyVersion} has none of the 1.36 and 1.37 improvements.`}`,
      services: [],
      addresses: [],
      evidence: [],
      action: improved
        ? 'Watch kubeproxy_sync_full_proxy_rules_duration_seconds after the switch, on one node first.'
        : `Run kube-proxy ${NFT_SCALE_IMPROVED_SINCE} or newer (1.37 better still) before switching a cluster this size, and watch kubeproxy_sync_full_proxy_rules_duration_seconds on one node first.`,
      docs: DOCS.nftScale,
    }),
  ]
}

/** Kernel ≥ 5.13 is not enough without nft_fib and the other modules (siderolabs/pkgs #951). */
export const kernelFeatures: Check = (ctx) => {
  if (!intoNftables(ctx)) return []
  const check = ctx.kernelCheck
  if (check !== null && check.loaded === true) return []
  if (check !== null && check.loaded === false) {
    return [
      finding({
        id: 'MIGRATE_NFT_KERNEL_FEATURES_MISSING',
        severity: 'error',
        title: "This node's kernel refuses the nftables rules kube-proxy would write",
        message: `\`nft --check\` of the rendered rules, in a network namespace kp made on this node, failed: ${check.error}. kube-proxy fails the same way on its first sync.`,
        services: [],
        addresses: [],
        evidence: [],
        action: `Load or build the missing modules (${NFT_KERNEL_MODULES.join(', ')}) before switching.`,
        docs: DOCS.kernelFeatures,
      }),
    ]
  }
  return [
    finding({
      id: 'MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED',
      severity: 'info',
      title: 'Cannot verify the kernel modules nftables mode needs',
      message: `A kernel version is not enough: kube-proxy's nftables rules also need ${NFT_KERNEL_MODULES.join(', ')} (custom kernels may lack them). ${check === null ? 'kp did not load the rules into this kernel.' : `kp could not check: ${check.reason}.`}`,
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Run `kp migrate --to nftables --check-kernel` as root on the node (it loads the rendered rules into a namespace it makes and removes), or `nft --check -f FILE` there.',
      docs: DOCS.kernelFeatures,
    }),
  ]
}

/** A kube-proxy run on the host (k3s, rke2, k0s) uses the host's nft (k3s #11267, rke2 #8840). */
export const nftBinary: Check = (ctx) => {
  if (!intoNftables(ctx)) return []
  const json = !versionAtLeast(ctx.kubeProxyVersion, NFT_NETLINK_LISTING_SINCE)
  return [
    finding({
      id: 'MIGRATE_NFT_BINARY_UNVERIFIED',
      severity: 'info',
      title: 'Cannot verify the nft binary a kube-proxy on the host needs',
      message: `kube-proxy in nftables mode runs \`nft\`. The kube-proxy image carries one, but a kube-proxy that runs on the host (k3s, rke2, k0s, distribution packages) uses the host's${json ? `, and ${ctx.kubeProxyVersion} lists its objects with \`nft --json\`: without an nft built with JSON support it exits, or flushes every map on each sync` : ''}.`,
      services: [],
      addresses: [],
      evidence: [],
      action: json
        ? 'On such nodes check `nft --version` and `nft -j list tables`; install an nft with JSON support, or run kube-proxy 1.37 (netlink listing).'
        : 'On such nodes check that `nft` is installed (`nft --version`).',
      docs: DOCS.nftBinary,
    }),
  ]
}

/**
 * nftables mode rejects new connections to a ClusterIP on a port no Service uses
 * (`cluster-ips-check`); iptables mode does not match them, so they leave un-NATed towards the
 * default route and usually time out. Measured in test/live/cluster-ips-check.test.ts. One rule,
 * announced in both directions: refused after iptables -> nftables, open after nftables -> iptables.
 */
export const clusterIpOtherPorts: Check = (ctx) => {
  const rejected = ctx.to === 'nftables' && from(ctx, 'iptables')
  if (!rejected && !(ctx.to === 'iptables' && from(ctx, 'nftables'))) return []
  const sps = ctx.state.services.filter((sp) =>
    sp.frontends.some((f) => f.type === 'ClusterIP' && f.ip !== null),
  )
  if (sps.length === 0) return []
  const ips = [
    ...new Set(
      sps.flatMap((sp) => sp.frontends.filter((f) => f.type === 'ClusterIP').map((f) => f.ip!)),
    ),
  ]
  const here = `${ips.length} ClusterIP(s) here, e.g. ${ips.slice(0, 3).join(', ')}.`
  const common = {
    severity: 'info' as const,
    services: [],
    addresses: ips.slice(0, 20),
    evidence: serviceEvidence(sps.slice(0, 3)),
    docs: DOCS.virtualIps,
  }
  if (!rejected)
    return [
      finding({
        ...common,
        id: 'MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN',
        title: 'Connections to a ClusterIP on a port no Service uses will no longer be refused',
        message: `nftables mode rejects them (chain cluster-ips-check), so clients see "connection refused" at once. iptables mode does not match them: they leave the node un-NATed towards the default route and usually time out. ${here}`,
        action:
          'Ports no Service uses on a ClusterIP now pass un-NATed to whatever routes them: check that the network does not answer for the service CIDR, and clients that rely on the quick refusal.',
      }),
    ]
  return [
    finding({
      ...common,
      id: 'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED',
      title: 'Connections to a ClusterIP on a port no Service uses will be refused',
      message: `iptables mode does not match them: they leave the node un-NATed towards the default route and usually time out. nftables mode rejects them (chain cluster-ips-check), so clients see "connection refused" at once. ${here}`,
      action:
        'Nothing, unless a client or probe relies on the timeout (port scanners, health checks on a wrong port): check them.',
    }),
  ]
}

/** KEP-5343: a node that never set `mode` moves to nftables when the default changes. */
export const defaultModeChange: Check = (ctx) => {
  if (!from(ctx, DEFAULT_MODE)) return []
  const mode = ctx.config?.mode ?? null
  if (ctx.config !== null && mode !== null && mode !== '') return []
  const known = ctx.config !== null
  return [
    finding({
      id: known ? 'MIGRATE_DEFAULT_MODE_CHANGE' : 'MIGRATE_DEFAULT_MODE_CHANGE_UNVERIFIED',
      severity: known ? 'warning' : 'info',
      title: known
        ? "kube-proxy's configuration does not set mode: an upgrade can switch this node"
        : 'Cannot verify whether kube-proxy sets its mode',
      message: `The default mode is still ${DEFAULT_MODE}, and ${DEFAULT_MODE_KEP} plans to make nftables the default. A node whose configuration never sets \`mode\` then migrates on a kube-proxy upgrade, unplanned. ${known ? `The configuration given${ctx.config?.at.mode ? ' sets it to ""' : ' has no mode'}.` : 'kube-proxy configuration was not given (--kube-proxy-config).'}`,
      services: [],
      addresses: [],
      evidence: ctx.config?.at.mode ? [ctx.config.at.mode] : [],
      action: known
        ? `Set \`mode: ${ctx.to}\` when you switch, or \`mode: ${DEFAULT_MODE}\` to stay, so an upgrade does not choose for you.`
        : 'Give the kube-proxy ConfigMap with --kube-proxy-config, or check that it sets `mode`.',
      docs: DOCS.defaultMode,
    }),
  ]
}

export const releaseChecks: Check[] = [
  longServiceNames,
  foreignTablesNewerNft,
  nftablesScale,
  kernelFeatures,
  nftBinary,
  clusterIpOtherPorts,
  defaultModeChange,
]
