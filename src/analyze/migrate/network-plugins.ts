/**
 * The CNI must follow kube-proxy into nftables (issue 22 §3; docs/kube-proxy-releases.md): Calico
 * needs `nftablesMode: Enabled` (calico #8025, kubespray #12198), kube-router gained an nftables
 * mode only in 2026 (kube-router #2064). kp tells which CNI runs from the chains and tables it
 * writes: the words of other components' iptables chains (node.otherChains), the other nftables
 * tables (node.otherTables) and the foreign objects.
 */
import {type Check, DOCS, type MigrationContext, finding, from} from './context.js'

interface NetworkPlugin {
  name: string
  /** The first word of its iptables chains, as node.otherChains lists it. */
  chainWord: RegExp
  /** Its own nftables tables: it already runs its nftables dataplane. */
  nftTable: RegExp
  setting: string
  docs: string
}

const PLUGINS: readonly NetworkPlugin[] = [
  {
    name: 'Calico',
    chainWord: /^cali-/,
    nftTable: /\bcalico\b/,
    setting:
      'Switch Calico to its nftables dataplane first: FelixConfiguration `nftablesMode: Enabled` (or the operator Installation `linuxDataplane: Nftables`); Calico in iptables mode next to nftables kube-proxy errors ("incompatible nft rules").',
    docs: DOCS.calicoNftables,
  },
  {
    name: 'kube-router',
    chainWord: /^KUBE-ROUTER-/,
    nftTable: /\bkube-router\b/,
    setting:
      "kube-router's NetworkPolicy controller writes iptables rules; its nftables mode is new in 2026. Upgrade kube-router to a release with nftables support and enable it, or keep kube-proxy in iptables mode.",
    docs: DOCS.kubeRouterNftables,
  },
]

/** Where each plugin shows: in iptables (chains) or nftables (its tables). */
function seen(ctx: MigrationContext, p: NetworkPlugin): 'iptables' | 'nftables' | null {
  const node = ctx.state.node
  if ((node.otherTables ?? []).some((t) => p.nftTable.test(t))) return 'nftables'
  if ((node.otherChains ?? []).some((w) => p.chainWord.test(w))) return 'iptables'
  const inForeign = ctx.state.foreign.some((f) =>
    f.name.split(/[\s/]/).some((word) => p.chainWord.test(word)),
  )
  return inForeign ? 'iptables' : null
}

export const cniNftablesMode: Check = (ctx) => {
  if (ctx.to !== 'nftables' || from(ctx, 'nftables')) return []
  const found = PLUGINS.map((p) => ({p, where: seen(ctx, p)}))
  const onIptables = found.filter((x) => x.where === 'iptables')
  if (onIptables.length > 0) {
    return onIptables.map(({p}) =>
      finding({
        id: 'MIGRATE_CNI_NFTABLES_MODE',
        severity: 'warning',
        title: `${p.name} runs here in iptables mode; it must follow kube-proxy to nftables`,
        message: `The node's iptables rules have ${p.name}'s chains. ${p.setting}`,
        services: [],
        addresses: [],
        evidence: ctx.state.foreign
          .filter((f) => f.source && f.name.split(/[\s/]/).some((w) => p.chainWord.test(w)))
          .flatMap((f) => (f.source ? [f.source] : []))
          .slice(0, 5),
        action: p.setting.split('; ')[0]!,
        docs: p.docs,
      }),
    )
  }
  if (found.some((x) => x.where === 'nftables')) return []
  const node = ctx.state.node
  const sawRules = (node.otherChains ?? null) !== null || (node.otherTables ?? null) !== null
  if (sawRules) return [] // the rules were seen, and no CNI kp knows writes iptables rules here
  return [
    finding({
      id: 'MIGRATE_CNI_NFTABLES_MODE_UNVERIFIED',
      severity: 'info',
      title: 'Cannot verify that the CNI supports nftables kube-proxy',
      message:
        "Calico must run its nftables dataplane (nftablesMode: Enabled) next to nftables kube-proxy, and kube-router needs a 2026 release with nftables support. The input shows neither the node's other iptables chains nor its other nftables tables.",
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Run kp migrate on a full node dump (`kp collect`, or -f iptables-save.txt) or check the CNI and its mode before switching.',
      docs: DOCS.calicoNftables,
    }),
  ]
}

export const networkPluginChecks: Check[] = [cniNftablesMode]
