/**
 * Stage 2 of the iptables reader: the parsed iptables-save sources of one node (an IPv4 and
 * an IPv6 dump, say) -> one ProxyState in mode 'iptables'. Each family's ruleset is read by an
 * IptablesFamilyReader (./family-reader.ts, which lists the stages); this joins the families.
 *
 * How a service port is recovered (docs/kube-proxy-layouts.md §2, §5), without scanning the dump per service:
 * names come from whichever comment has them (large clusters drop the SEP and SVC->SEP
 * comments, fixtures/iptables/handmade-node-with-cni; old releases wrote other words,
 * fixtures/iptables/legacy-k8s-1.1), and every chain name is checked against the hash
 * recomputed from that name.
 *
 * Policies in the model are null when the dump cannot show them (an ETP without any external
 * frontend; an ITP when the ClusterIP is only REJECTed). The corpus writes "Cluster" for that;
 * test/readers/iptables/conformance.test.ts maps null to "Cluster" explicitly.
 */
import {diag, emptyNodeInfo, emptyState} from '../../core/state.js'
import {toCidr} from '../../core/address.js'
import {
  KUBE_CHAIN_PREFIX,
  KUBE_FIREWALL,
  KUBE_KUBELET_CANARY,
  KUBE_MARK_DROP,
  KUBE_PROXY_CANARY,
} from '../../kube-proxy/iptables-names.js'
import {KUBE_IPVS_PREFIX} from '../../kube-proxy/ipvs-names.js'
import type {Diagnostic, ProxyState} from '../../model/types.js'
import type {ParsedSource, ReadOptions} from '../types.js'
import {IptablesFamilyReader} from './family-reader.js'
import {otherChainWords} from './foreign.js'
import {IPVS_MODE_CHAINS, isPerServiceChain, SEP_PREFIX} from './groups.js'
import {findMatch, type IptablesChain, type IptablesRuleset} from './ruleset.js'

/** Chains kubelet writes whatever kube-proxy's mode is (or kube-proxy's canary): they do not show kube-proxy's iptables mode. */
const NOT_KUBE_PROXY_EVIDENCE: ReadonlySet<string> = new Set([
  KUBE_KUBELET_CANARY,
  KUBE_FIREWALL,
  KUBE_MARK_DROP,
  KUBE_PROXY_CANARY,
])

/** Why this dump may not be an iptables-mode kube-proxy dump; null when it is one. */
function notIptablesMode(ruleset: IptablesRuleset, path: string): Diagnostic | null {
  let kubeChains = 0
  let kubeletOnly = 0
  let perService = 0
  let ipvsLine: number | null = null
  let chains = 0
  // In a callback: this runs once per dump, over every chain.
  const count = (chain: IptablesChain): void => {
    chains++
    if (!chain.name.startsWith(KUBE_CHAIN_PREFIX)) return
    if (NOT_KUBE_PROXY_EVIDENCE.has(chain.name)) {
      kubeletOnly++
      return
    }
    kubeChains++
    if (chain.name.startsWith(SEP_PREFIX) || isPerServiceChain(chain.name)) perService++
    if (
      ipvsLine === null &&
      (IPVS_MODE_CHAINS.has(chain.name) || chain.name.startsWith(KUBE_IPVS_PREFIX))
    )
      ipvsLine = chain.line
  }
  ruleset.tables.forEach((table) => table.chains.forEach(count))
  // Only a dump without per-service chains can be IPVS mode's; do not scan the rules of the others.
  if (ipvsLine === null && perService === 0) {
    for (const rule of ruleset.rules) {
      const set = findMatch(rule, '--match-set')
      if (set?.values[0]?.startsWith(KUBE_CHAIN_PREFIX)) {
        ipvsLine = rule.line
        break
      }
    }
  }
  if (kubeChains === 0) {
    const why =
      kubeletOnly > 0
        ? `its only KUBE-* chains are kubelet's (KUBE-KUBELET-CANARY, KUBE-FIREWALL, ...); kube-proxy may run in nftables or IPVS mode on this node`
        : `none of its ${chains} chain(s) is a KUBE-* chain (is kube-proxy running in iptables mode on this node, and is this the right backend, legacy or nf_tables?)`
    return diag('error', 'IPT_NO_KUBE_PROXY', `no kube-proxy rules in this dump: ${why}`, {
      path,
      line: 1,
    })
  }
  if (ipvsLine !== null && perService === 0) {
    return diag(
      'error',
      'IPT_IPVS_MODE',
      'this iptables dump comes from kube-proxy in IPVS mode (KUBE-LOOP-BACK / KUBE-IPVS-* chains, --match-set KUBE-* ipsets) and has no per-service chains; read it together with `ipvsadm -Sn` and `ipset save` (one -f each)',
      {path, line: ipvsLine},
    )
  }
  return null
}

/** Stage 2: one node's iptables-save sources -> ProxyState (mode 'iptables'). */
export function buildIptablesState(parsed: ParsedSource[], opts: ReadOptions): ProxyState {
  const state = emptyState('iptables')
  const node = emptyNodeInfo()
  const podCIDRs = new Set<string>()
  let masqueradeAllVotes: boolean | null = null
  const seenFamilies = new Map<string, string>()
  for (const p of parsed) {
    if (p.format !== 'iptables-save' || p.data === null || typeof p.data !== 'object') {
      state.diagnostics.push(
        diag(
          'warning',
          'IPT_WRONG_SOURCE',
          `${p.source.path} is ${p.format} input, which an iptables-mode state does not read; ignored`,
          {path: p.source.path, line: 1},
        ),
      )
      continue
    }
    const ruleset = p.data as IptablesRuleset
    const path = p.source.path
    const problem = notIptablesMode(ruleset, path)
    if (problem) {
      state.diagnostics.push(problem)
      continue
    }
    const family = ruleset.family ?? 'IPv4'
    const earlier = seenFamilies.get(family)
    if (earlier !== undefined) {
      state.diagnostics.push(
        diag(
          'warning',
          'IPT_DUPLICATE_FAMILY',
          `${path} is a second ${family} dump for this node (after ${earlier}); its service ports are listed as well, so some may appear twice`,
          {path, line: 1},
        ),
      )
    }
    seenFamilies.set(family, path)
    const r = new IptablesFamilyReader(
      ruleset,
      path,
      family,
      opts.servicesOnly === true,
      opts.refsPerPort ?? Number.POSITIVE_INFINITY,
    ).read()
    // concat, not push(...): a large node has more service ports than a call takes arguments.
    state.services = state.services.concat(r.services)
    state.foreign = state.foreign.concat(r.foreign)
    // Every read sees every chain's declaration (a focused one too), so this is the same for all.
    node.otherChains = [...new Set([...(node.otherChains ?? []), ...otherChainWords(ruleset)])]
    state.diagnostics = state.diagnostics.concat(r.diagnostics)
    const e = r.node
    // Rule addresses drop /32 and /128; the model's pod CIDRs are CIDRs (one place for every rule that shows one).
    for (const c of e.podCIDRs) podCIDRs.add(toCidr(c))
    // Without interfaces (iptables -L without -v) only a source-CIDR detector is seen for sure.
    const hidden = ruleset.interfacesHidden === true
    if (!hidden || e.detector === 'cidr') {
      node.localDetector ??= e.detector
      node.localInterface ??= e.localInterface
    }
    node.masqueradeMark ??= e.masqueradeMark
    node.randomFully ??= e.randomFully
    node.localhostNodePorts ??= e.localhostNodePorts
    node.conntrackInvalidDrop ??= e.conntrackInvalidDrop
    if (e.nodePortAddresses !== null)
      node.nodePortAddresses = [...(node.nodePortAddresses ?? []), ...e.nodePortAddresses]
    // masquerade-all: every internal masquerade rule lacks the local-detector part (docs/kube-proxy-layouts.md §2.4).
    // A masquerade rule that shows no detector part may have had `! -i` where interfaces are hidden.
    if (e.masqMatchedAll && !e.masqMatchedLocal) {
      if (!hidden) masqueradeAllVotes = true
    } else if (e.masqMatchedLocal) masqueradeAllVotes ??= false
    if (
      !hidden &&
      e.sawInternalChain &&
      e.detector === null &&
      !e.masqMatchedAll &&
      !e.masqMatchedLocal
    ) {
      // Internal chains exist, yet no rule shows a detector and none masquerades all: the no-op detector.
      node.localDetector ??= 'none'
      masqueradeAllVotes ??= false // masquerade-all would have written the rule without a detector part
    }
  }
  node.podCIDRs = [...podCIDRs]
  node.masqueradeAll = masqueradeAllVotes
  if (node.nodePortAddresses) node.nodePortAddresses = [...new Set(node.nodePortAddresses)]
  state.node = node
  return state
}
