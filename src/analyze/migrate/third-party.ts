/**
 * Caveat 6 (docs/ipvs-layouts.md (d)): components that are not kube-proxy but depend on the
 * objects the old mode creates (KUBE-* chains and ipsets, the masquerade mark, kube-ipvs0).
 * kp sees them as the state's foreign objects: rules that jump to or match kube-proxy objects.
 */
import type {ForeignObject} from '../../model/types.js'
import {type Check, DOCS, type MigrationContext, finding, from} from './context.js'
import {DEFAULT_MASQUERADE_MARK} from '../../kube-proxy/settings.js'

/** Which object names vanish for each switch. Built once; tested against each foreign object's text. */
const VANISHING: Record<string, RegExp> = {
  // Everything kube-proxy made in iptables or ipvs mode moves to `table ip|ip6 kube-proxy`.
  'iptables>nftables': /\bKUBE-[A-Z0-9-]+|kube-ipvs0/,
  'ipvs>nftables': /\bKUBE-[A-Z0-9-]+|kube-ipvs0/,
  // IPVS mode keeps KUBE-SERVICES, KUBE-MARK-MASQ, KUBE-POSTROUTING and KUBE-FORWARD, but has no per-service chains.
  'iptables>ipvs': /\bKUBE-(SVC|SEP|SVL|EXT|FW)-[A-Z0-9]+|\bKUBE-NODEPORTS\b|\bKUBE-MARK-DROP\b/,
  // iptables mode has no ipsets, no kube-ipvs0 and none of IPVS mode's filter chains.
  'ipvs>iptables':
    /--match-set\s+KUBE-|\bKUBE-(6-)?(CLUSTER-IP|LOOP-BACK|EXTERNAL-IP|LOAD-BALANCER|NODE-PORT|HEALTH-CHECK-NODE-PORT|IPVS)[A-Z0-9-]*|\bKUBE-SOURCE-RANGES-FIREWALL\b|kube-ipvs0/,
}

/** The masquerade mark stops existing only when kube-proxy leaves iptables (both iptables and ipvs modes use it). */
function markPattern(ctx: MigrationContext): RegExp | null {
  if (ctx.to !== 'nftables') return null
  const mark = Number.parseInt(ctx.state.node.masqueradeMark ?? DEFAULT_MASQUERADE_MARK, 16)
  if (Number.isNaN(mark)) return null
  // Written 0x4000 or 0x00004000 (docs/kube-proxy-layouts.md §1); 0x8000 was KUBE-MARK-DROP's mark in older releases.
  return new RegExp(`\\b0x0*(${mark.toString(16)}|8000)\\b`, 'i')
}

const describe = (f: ForeignObject): string => `${f.kind} ${f.name} ${f.reason}`

export const foreignReferences: Check = (ctx) => {
  if (ctx.from === null || ctx.from === ctx.to || ctx.from === 'nftables') return [] // nftables objects cannot be referenced from another table
  const vanishing = VANISHING[`${ctx.from}>${ctx.to}`]
  if (!vanishing) return []
  if (ctx.state.mode === 'cluster') {
    return [
      finding({
        id: 'MIGRATE_FOREIGN_REFERENCES_UNVERIFIED',
        severity: 'info',
        title: "Cannot verify whether other components use kube-proxy's objects",
        message:
          "The input holds cluster objects only, not the node's rules, so kp cannot see CNI, NetworkPolicy or DNS-cache rules that refer to kube-proxy's chains, ipsets or mark.",
        services: [],
        addresses: [],
        evidence: [],
        action:
          'Run kp migrate on a node dump (`kp collect`, or -f iptables-save.txt) to list them.',
        docs: DOCS.nftablesBlog,
      }),
    ]
  }
  const mark = markPattern(ctx)
  const hits = ctx.state.foreign.filter(
    (f) =>
      f.kind !== 'leftover' &&
      f.kind !== 'ipvs-virtual-server' &&
      (vanishing.test(describe(f)) || (mark !== null && mark.test(describe(f)))),
  )
  if (hits.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_FOREIGN_REFERENCES',
      severity: 'warning',
      title: `${hits.length} rule(s) of other components refer to kube-proxy objects that ${ctx.to} mode does not create`,
      message: `These rules were not written by kube-proxy but jump to, match or mark with objects of ${ctx.from} mode (for example CNI or NetworkPolicy chains such as cali-*, KUBE-ROUTER-*, CILIUM_*, or node-local-dns NOTRACK rules). After the switch they refer to nothing.`,
      services: [],
      addresses: [],
      evidence: hits.flatMap((f) => (f.source ? [f.source] : [])),
      action: `Confirm that each component (${[...new Set(hits.map((f) => f.name))].slice(0, 5).join(', ')}${hits.length > 5 ? ', ...' : ''}) supports kube-proxy in ${ctx.to} mode before switching.`,
      docs: DOCS.nftablesBlog,
    }),
  ]
}

/** Agents that detect IPVS mode by kube-ipvs0 or allowlist its chains; nothing in a dump shows them. */
export const ipvsAwareAgents: Check = (ctx) => {
  if (!from(ctx, 'ipvs') || ctx.to === 'ipvs') return []
  return [
    finding({
      id: 'MIGRATE_IPVS_AWARE_AGENTS_UNVERIFIED',
      severity: 'info',
      title: 'Cannot verify agents configured for IPVS mode',
      message:
        'Some components adapt to IPVS mode: Calico detects it by kube-ipvs0, monitoring agents allowlist KUBE-IPVS-FILTER, and NodeLocal DNSCache in IPVS mode binds only its link-local IP. A dump does not show their configuration.',
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Check the CNI and NetworkPolicy plugin versions for support of the new mode, and the node-local-dns Corefile `bind` line (the IPVS-style configuration keeps working).',
      docs: DOCS.nftablesBlog,
    }),
  ]
}

/** Objects another mode left behind: stale state that the switch may or may not clean up. */
export const leftovers: Check = (ctx) => {
  const stale = ctx.state.foreign.filter((f) => f.kind === 'leftover')
  if (stale.length === 0 || ctx.from === ctx.to) return []
  return [
    finding({
      id: 'MIGRATE_LEFTOVERS',
      severity: 'info',
      title: `${stale.length} leftover object(s) of another proxy mode are on the node`,
      message: `These belong to a mode kube-proxy does not run now: ${stale
        .map((f) => f.name)
        .slice(0, 10)
        .join(
          ', ',
        )}${stale.length > 10 ? ', ...' : ''}. They can confuse the switch and later diagnosis.`,
      services: [],
      addresses: [],
      evidence: stale.flatMap((f) => (f.source ? [f.source] : [])),
      action: 'Remove them with `kube-proxy --cleanup` (or a reboot) before switching.',
      docs: DOCS.platformCleanup,
    }),
  ]
}

export const thirdPartyChecks: Check[] = [foreignReferences, ipvsAwareAgents, leftovers]
