/**
 * Caveat 5 (docs/ipvs-layouts.md (d)): iptables mode drops ctstate INVALID packets in
 * KUBE-FORWARD to work around a conntrack bug of kernels before 6.1 that resets long-lived
 * connections; nftables and ipvs modes install nothing.
 */
import {
  type Check,
  DOCS,
  type MigrationContext,
  finding,
  parseVersion,
  sysctl,
  versionBelow,
} from './context.js'

const KERNEL_WITH_FIX = [6, 1] as const
const BE_LIBERAL = 'net.netfilter.nf_conntrack_tcp_be_liberal'

function kernelHasBug(ctx: MigrationContext): boolean | null {
  const v = parseVersion(ctx.state.node.kernel)
  return v === null ? null : versionBelow(v, KERNEL_WITH_FIX)
}

export const conntrackInvalidDrop: Check = (ctx) => {
  if (ctx.from === null || ctx.from === ctx.to) return []
  const liberal = sysctl(ctx, BE_LIBERAL) === '1'
  const bug = kernelHasBug(ctx)
  const kernelNote =
    bug === null
      ? 'The input does not show the kernel version.'
      : bug
        ? `This node runs kernel ${ctx.state.node.kernel}, which has the bug.`
        : `This node runs kernel ${ctx.state.node.kernel}, which has the fix.`

  if (ctx.from === 'iptables') {
    const hasRule = ctx.state.node.conntrackInvalidDrop
    if (hasRule === false || (hasRule === null && liberal)) return []
    if (hasRule === null) {
      return [
        finding({
          id: 'MIGRATE_CONNTRACK_INVALID_DROP_UNVERIFIED',
          severity: 'info',
          title: 'Cannot verify whether the conntrack INVALID-drop workaround is in use',
          message: `iptables mode drops conntrack INVALID packets (unless conntrack.tcpBeLiberal is set) to protect long-lived connections on kernels before 6.1; ${ctx.to} mode does not. The input shows neither the KUBE-FORWARD rules nor the ${BE_LIBERAL} sysctl. ${kernelNote}`,
          services: [],
          addresses: [],
          evidence: [],
          action:
            'Check the kube-proxy metric iptables_ct_state_invalid_dropped_packets_total; if it is not zero, run the new mode with conntrack.tcpBeLiberal: true.',
          docs: DOCS.virtualIps,
        }),
      ]
    }
    return [
      finding({
        id: 'MIGRATE_CONNTRACK_INVALID_DROP',
        severity: bug === false ? 'info' : 'warning',
        title: `The conntrack INVALID-drop rule goes away in ${ctx.to} mode`,
        message: `iptables mode has \`-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\`, a workaround for a kernel bug (before 6.1) that resets long-lived connections; ${ctx.to} mode installs nothing. ${kernelNote}`,
        services: [],
        addresses: [],
        evidence: [],
        action:
          'Run kube-proxy with `--conntrack-tcp-be-liberal` (config conntrack.tcpBeLiberal: true); the iptables_ct_state_invalid_dropped_packets_total metric shows whether the rule drops anything today.',
        docs: DOCS.virtualIps,
      }),
    ]
  }

  if (ctx.to === 'iptables') {
    if (liberal || ctx.target.conntrackInvalidDrop === false) return []
    return [
      finding({
        id: 'MIGRATE_CONNTRACK_INVALID_DROP_ADDED',
        severity: 'info',
        title: 'iptables mode adds a conntrack INVALID-drop rule',
        message: `iptables mode drops conntrack INVALID packets in KUBE-FORWARD unless conntrack.tcpBeLiberal is set; ${ctx.from} mode has no such rule.`,
        services: [],
        addresses: [],
        evidence: [],
        action:
          'Nothing to do unless traffic relies on INVALID packets being forwarded; then set conntrack.tcpBeLiberal: true.',
        docs: DOCS.virtualIps,
      }),
    ]
  }

  // ipvs <-> nftables: neither has the rule, so behaviour does not change; the kernel bug is worth a note.
  if (bug !== true) return []
  return [
    finding({
      id: 'MIGRATE_CONNTRACK_KERNEL_BUG',
      severity: 'info',
      title: `Kernel ${ctx.state.node.kernel} has the conntrack bug that resets long-lived connections`,
      message: `Neither ${ctx.from} nor ${ctx.to} mode installs the INVALID-drop workaround, so nothing changes, but kernels before 6.1 can reset long-lived connections.`,
      services: [],
      addresses: [],
      evidence: [],
      action: 'Consider conntrack.tcpBeLiberal: true, or a kernel 6.1 or newer.',
      docs: DOCS.virtualIps,
    }),
  ]
}

/**
 * nftables mode always masquerades with `masquerade fully-random` (docs/kube-proxy-layouts.md §3, chain
 * masquerading); iptables and IPVS modes add --random-fully only where iptables supports it.
 * Rules without it today (every upstream iptables dump: fixtures/iptables/upstream-*) change
 * how SNAT source ports are picked: nothing breaks, but it is a change the operator should see.
 */
export const masqueradeFullyRandom: Check = (ctx) => {
  if (ctx.to !== 'nftables' || ctx.from === null || ctx.from === 'nftables') return []
  const today = ctx.state.node.randomFully
  if (today === true) return []
  return [
    finding({
      id:
        today === false
          ? 'MIGRATE_MASQUERADE_FULLY_RANDOM'
          : 'MIGRATE_MASQUERADE_FULLY_RANDOM_UNVERIFIED',
      severity: 'info',
      title: 'Masquerading becomes fully-random in nftables mode',
      message:
        today === false
          ? `The ${ctx.from}-mode MASQUERADE rule has no --random-fully; nftables mode always writes \`masquerade fully-random\`, so SNAT source ports of masqueraded service traffic are chosen at random instead of preserving the client's port where possible.`
          : `nftables mode always writes \`masquerade fully-random\`; the input does not show whether today's MASQUERADE rule uses --random-fully.`,
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Nothing to do unless something downstream relies on SNAT keeping source ports (rare); check firewall or logging rules that match on source ports of masqueraded traffic.',
      docs: DOCS.virtualIps,
    }),
  ]
}

export const conntrackChecks: Check[] = [conntrackInvalidDrop, masqueradeFullyRandom]
