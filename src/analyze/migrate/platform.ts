/**
 * Caveats about the node rather than the services: kernel and tool versions for nftables
 * (docs/ipvs-layouts.md (d) caveat 1), the IPVS deprecation and prerequisites when moving to
 * IPVS, and what kube-proxy cleans up, or does not, when it starts in the new mode (caveat 11;
 * `platformCleanup` in cmd/kube-proxy/app/server_linux.go).
 */
import type {ForeignObject} from '../../model/types.js'
import {IPVS_TIMELINE} from '../../kube-proxy/releases.js'
import {
  type Check,
  DOCS,
  type MigrationContext,
  finding,
  from,
  parseVersion,
  versionBelow,
} from './context.js'

const MIN_KERNEL_FOR_NFTABLES = [5, 13] as const
const MIN_NFT_TOOL = [1, 0, 0] as const

/** nftables kube-proxy needs Linux ≥ 5.13 (virtual-ips.md; nftables blog). */
export const nftablesKernel: Check = (ctx) => {
  if (ctx.to !== 'nftables' || from(ctx, 'nftables')) return []
  const kernel = ctx.state.node.kernel
  const v = parseVersion(kernel)
  if (v === null) {
    return [
      finding({
        id: 'MIGRATE_NFT_KERNEL_UNKNOWN',
        severity: 'warning',
        title: 'Cannot verify the kernel version nftables mode needs',
        message: `nftables kube-proxy needs Linux ${MIN_KERNEL_FOR_NFTABLES.join('.')} or newer. The input does not show this node's kernel${kernel ? ` (unreadable: "${kernel}")` : ''}.`,
        services: [],
        addresses: [],
        evidence: [],
        action:
          'Collect `uname -r` (kp collect records it), or check it before switching; on an older kernel stay on iptables mode.',
        docs: DOCS.migrateToNftables,
      }),
    ]
  }
  if (!versionBelow(v, MIN_KERNEL_FOR_NFTABLES)) return []
  return [
    finding({
      id: 'MIGRATE_NFT_KERNEL_TOO_OLD',
      severity: 'error',
      title: `Kernel ${kernel} is older than the ${MIN_KERNEL_FOR_NFTABLES.join('.')} nftables mode needs`,
      message: `nftables kube-proxy needs Linux ${MIN_KERNEL_FOR_NFTABLES.join('.')} or newer; this node runs ${kernel}.`,
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Upgrade the kernel first. On kernels too old for nftables the Kubernetes docs advise iptables mode, not ipvs.',
      docs: DOCS.migrateToNftables,
    }),
  ]
}

/** An `nft` binary older than 1.0.0 on the host can corrupt other users' nftables state (virtual-ips.md). */
export const nftTool: Check = (ctx) => {
  if (ctx.to !== 'nftables' || from(ctx, 'nftables')) return []
  const version = ctx.state.node.nftVersion
  const v = parseVersion(version)
  if (v === null) {
    return [
      finding({
        id: 'MIGRATE_NFT_TOOL_UNKNOWN',
        severity: 'info',
        title: 'Cannot verify the version of the host nft tool',
        message:
          "If the host has an `nft` binary, it must be 1.0.0 or newer once kube-proxy writes nftables rules; older versions can corrupt other users' nftables state. The input does not show it.",
        services: [],
        addresses: [],
        evidence: [],
        action:
          'Run `nft --version` on the node (kp collect records it); upgrade it, or remove it, if it is older than 1.0.0.',
        docs: DOCS.migrateToNftables,
      }),
    ]
  }
  if (!versionBelow(v, MIN_NFT_TOOL)) return []
  return [
    finding({
      id: 'MIGRATE_NFT_TOOL_TOO_OLD',
      severity: 'error',
      title: `The host nft ${version} is older than 1.0.0`,
      message: `nft ${version} on the host can corrupt the nftables state of other users, kube-proxy's included, once kube-proxy runs in nftables mode.`,
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Upgrade nftables on the host to 1.0.0 or newer (or remove the nft binary) before switching.',
      docs: DOCS.migrateToNftables,
    }),
  ]
}

/** IPVS is deprecated as of v1.35 (KEP-5495), with a removal timeline; the docs recommend nftables instead. */
export const ipvsDeprecated: Check = (ctx) => {
  if (ctx.to !== 'ipvs' || from(ctx, 'ipvs')) return []
  return [
    finding({
      id: 'MIGRATE_IPVS_DEPRECATED',
      severity: 'warning',
      title: 'IPVS mode is deprecated',
      message: `kube-proxy's ipvs mode is deprecated as of Kubernetes v${IPVS_TIMELINE.deprecated} (KEP-5495). The plan: the ${IPVS_TIMELINE.gate} feature gate (since ${IPVS_TIMELINE.gateAdded}, on by default) turns off by default in ${IPVS_TIMELINE.defaultOff} and is removed in ${IPVS_TIMELINE.removed}; from then kube-proxy refuses to start in ipvs mode, with no fallback. The documentation recommends nftables, or iptables on kernels too old for nftables.`,
      services: [],
      addresses: [],
      evidence: [],
      action: `Prefer \`--to nftables\` (or stay on iptables); move to ipvs only for a short-term need, and leave it before ${IPVS_TIMELINE.defaultOff} (or set ${IPVS_TIMELINE.gate}=true until ${IPVS_TIMELINE.removed}).`,
      docs: DOCS.ipvsDeprecation,
    }),
  ]
}

/** What IPVS mode checks at start-up and kp cannot see in a dump (docs/ipvs-layouts.md a.1). */
export const ipvsPrerequisites: Check = (ctx) => {
  if (ctx.to !== 'ipvs' || from(ctx, 'ipvs')) return []
  return [
    finding({
      id: 'MIGRATE_IPVS_PREREQUISITES_UNVERIFIED',
      severity: 'info',
      title: 'Cannot verify the IPVS kernel modules and ipset version',
      message:
        'IPVS kube-proxy needs the ip_vs kernel module and the module of its scheduler (ip_vs_rr by default), and ipset 6.0 or newer; it probes the scheduler with a dummy virtual server at start-up. A rules dump does not show them.',
      services: [],
      addresses: [],
      evidence: [],
      action:
        'On the node, check `modprobe -n ip_vs ip_vs_rr` (or `lsmod | grep ip_vs`) and `ipset --version`.',
      docs: DOCS.virtualIps,
    }),
  ]
}

/** kube-proxy's start-up probe (a.1): never a foreign server. */
const SCHEDULER_PROBE = '198.51.100.0:20000'

export function foreignVirtualServers(ctx: MigrationContext): ForeignObject[] {
  return ctx.state.foreign.filter(
    (f) => f.kind === 'ipvs-virtual-server' && !f.name.includes(SCHEDULER_PROBE),
  )
}

/** Does the input hold an IPVS listing, so that "no foreign virtual server" is an observation? */
function showsIpvs(ctx: MigrationContext): boolean {
  return ctx.state.mode === 'ipvs' || ctx.state.sources.some((s) => s.format === 'ipvsadm')
}

/**
 * nftables kube-proxy runs the IPVS cleanup at start-up, which flushes every virtual server on
 * the node, kube-proxy's or not and whatever ipvs.excludeCIDRs says (caveat 11). This happens
 * whatever the old mode was.
 */
export const ipvsFlush: Check = (ctx) => {
  if (ctx.to !== 'nftables' || from(ctx, 'nftables')) return []
  const foreign = foreignVirtualServers(ctx)
  if (foreign.length > 0) {
    return [
      finding({
        id: 'MIGRATE_IPVS_FOREIGN_FLUSHED',
        severity: 'error',
        title: `${foreign.length} IPVS virtual server(s) that kube-proxy did not create will be deleted`,
        message:
          'When kube-proxy starts in nftables mode it flushes every IPVS virtual server on the node, including these (for example keepalived, kube-vip or fwmark services), and ignores ipvs.excludeCIDRs.',
        services: [],
        addresses: foreign.map((f) => f.name),
        evidence: foreign.flatMap((f) => (f.source ? [f.source] : [])),
        action:
          'Move these virtual servers off the node first, or re-create them right after kube-proxy has started in nftables mode.',
        docs: DOCS.platformCleanup,
      }),
    ]
  }
  if (showsIpvs(ctx)) return []
  return [
    finding({
      id: 'MIGRATE_IPVS_FLUSH_UNVERIFIED',
      severity: 'info',
      title: 'Cannot verify that no other component uses IPVS',
      message:
        'When kube-proxy starts in nftables mode it flushes every IPVS virtual server on the node. The input holds no IPVS listing, so kp cannot tell whether keepalived, kube-vip or another component has virtual servers there.',
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Run `ipvsadm -Ln` on the node (or give kp its output with -f); if it lists virtual servers, plan to re-create them.',
      docs: DOCS.platformCleanup,
    }),
  ]
}

/**
 * iptables and ipvs mode are both "iptables based": starting in one does not clean up the other
 * (platformCleanup only cleans when switching to or from nftables). Leftover IPVS virtual
 * servers and kube-ipvs0 addresses keep catching service traffic; leftover KUBE-SVC chains stay.
 */
export const noCleanupBetweenIptablesAndIpvs: Check = (ctx) => {
  const pair =
    (from(ctx, 'ipvs') && ctx.to === 'iptables') || (from(ctx, 'iptables') && ctx.to === 'ipvs')
  if (!pair) return []
  const old =
    ctx.from === 'ipvs'
      ? 'IPVS virtual servers, the kube-ipvs0 interface and the KUBE-* ipsets'
      : 'the KUBE-SVC-*, KUBE-SEP-*, KUBE-EXT-* and KUBE-FW-* chains'
  return [
    finding({
      id: 'MIGRATE_NO_AUTOMATIC_CLEANUP',
      severity: 'warning',
      title: `kube-proxy does not clean up ${ctx.from} mode when it starts in ${ctx.to} mode`,
      message: `kube-proxy cleans up the other modes only when it switches to or from nftables. After a switch from ${ctx.from} to ${ctx.to}, ${old} stay on the node${ctx.from === 'ipvs' ? ' and keep answering for the service addresses' : ''}.`,
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Run `kube-proxy --cleanup` (or reboot the node) between stopping the old mode and starting the new one.',
      docs: DOCS.platformCleanup,
    }),
  ]
}

export const platformChecks: Check[] = [
  nftablesKernel,
  nftTool,
  ipvsDeprecated,
  ipvsPrerequisites,
  ipvsFlush,
  noCleanupBetweenIptablesAndIpvs,
]
