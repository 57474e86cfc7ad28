/**
 * Which kube-proxy layout generation an nftables dump comes from (docs/kube-proxy-layouts.md
 * §3.10): the readers note the signs they meet (NodeFacts.sign), this turns them into the
 * node's `kubeProxyLayouts` and warns when they mix generations.
 */
import {NFT_LAYOUT_SIGNS, nftLayoutOf} from '../../kube-proxy/nftables-layouts.js'
import type {NodeInfo} from '../../model/types.js'
import type {NodeFacts} from './node-facts.js'
import type {Reporter} from './reporter.js'

export function applyLayoutGeneration(facts: NodeFacts, node: NodeInfo, reporter: Reporter): void {
  const layout = nftLayoutOf(new Set(facts.layoutSigns.keys()))
  node.kubeProxyLayouts = layout.labels
  if (!layout.mixed) return
  const what = (signs: typeof layout.older): string =>
    signs.map((s) => NFT_LAYOUT_SIGNS[s].what).join(', ')
  const at = facts.layoutSigns.get(layout.newer[0]!)!
  reporter.report(
    'warning',
    'NFT_LAYOUT_MIXED',
    `the table mixes kube-proxy layouts: ${what(layout.older)} (${layout.labels[0]} layout) beside ${what(layout.newer)} (${layout.labels[1] ?? layout.labels[0]} layout); an upgrade half done or stale chains`,
    at,
  )
}
