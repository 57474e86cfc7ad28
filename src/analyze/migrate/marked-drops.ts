/**
 * Drops that old iptables layouts (≤1.24) only mark: a source outside loadBalancerSourceRanges
 * (KUBE-FW ends in KUBE-MARK-DROP) and an externalTrafficPolicy=Local LB IP or externalIP with no
 * local endpoint (KUBE-XLB/KUBE-SVL → KUBE-MARK-DROP). The kubelet's KUBE-FIREWALL drops the
 * mark in INPUT and OUTPUT only, so a forwarded connection leaves un-NATed toward the address.
 * Every layout kp renders, and nftables mode, drop it in filter, forwarded or not.
 */
import {
  type Check,
  DOCS,
  finding,
  frontendAddress,
  serviceEvidence,
  serviceNames,
} from './context.js'

export const markedDropsEnforced: Check = (ctx) => {
  if (ctx.to === 'ipvs') return []
  const marked = (f: {outsideRangesMarkedForDrop?: boolean; noLocalMarkedForDrop?: boolean}) =>
    f.outsideRangesMarkedForDrop === true || f.noLocalMarkedForDrop === true
  const sps = ctx.state.services.filter((sp) => sp.frontends.some(marked))
  if (sps.length === 0) return []
  const frontends = sps.flatMap((sp) => sp.frontends.filter(marked))
  return [
    finding({
      id: 'MIGRATE_MARKED_DROPS_ENFORCED',
      severity: 'warning',
      title: 'Connections an old layout only marked for drop will be dropped',
      message: `Today's rules come from an old kube-proxy layout (≤1.24) that only marks these connections for drop (from outside loadBalancerSourceRanges, or to an externalTrafficPolicy=Local address with no endpoint on this node); the kubelet drops the mark only for the node's own traffic, so a forwarded connection leaves toward the address un-NATed today. In ${ctx.to} mode kube-proxy drops it.`,
      services: serviceNames(sps),
      addresses: frontends.map(frontendAddress),
      evidence: serviceEvidence(sps),
      action:
        'Check whether anything behind this node answers at these addresses for clients outside the source ranges (or for services without a local endpoint); after the switch those connections are dropped here.',
      docs: DOCS.trafficPolicies,
    }),
  ]
}

export const markedDropChecks: Check[] = [markedDropsEnforced]
