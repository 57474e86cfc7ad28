/**
 * Builds one node's IPVS-mode ProxyState from the dumps of that node: `ipvsadm -Ln|-Sn` (the
 * virtual servers), `ipset save|list` (what each virtual server is for), `ip addr` (kube-ipvs0
 * and the node's own addresses) and the IPVS-mode `iptables-save` (node settings), plus the
 * cluster objects of `--cluster`, which are the only source of names.
 *
 * IPVS has one virtual server per (address, port, protocol) and no notion of a Service
 * (docs/ipvs-layouts.md a.3). The builder therefore:
 *
 * 1. merges the virtual servers of every listing (-Ln, -Sn, --stats... of one node);
 * 2. sets aside what kube-proxy never makes (fwmark services, the 198.51.100.0:20000 scheduler
 *    probe, non-masquerading real servers, persistence masks/engines) as `foreign`;
 * 3. classifies each remaining virtual server, from the strongest evidence at hand: the cluster
 *    objects, then kube-proxy's ipsets, then `ip addr`, and only then a documented guess;
 * 4. groups the virtual servers of one service port: by name when the cluster objects say,
 *    otherwise by folding each NodePort / externalIP / LoadBalancer virtual server into the
 *    ClusterIP virtual server that has the same protocol and the same real servers;
 * 5. turns each group into a ServicePort (scheduler, persistence, weights; share null because a
 *    scheduler decides, 0 for a draining weight-0 real server).
 *
 * Steps 1-2 live in virtual-servers.ts, 3 in classify.ts (with kube-sets.ts and node-addresses.ts
 * for the evidence), 4 in group.ts and 5 in service-port.ts; this file runs them in order.
 */
import {pushAll} from '../../core/arrays.js'
import {diag, emptyState} from '../../core/state.js'
import type {Diagnostic, ProxyState} from '../../model/types.js'
import type {IpAddrDump} from '../ip-addr/parse.js'
import type {IpsetDump} from '../ipset/parse.js'
import {countRuleCopy, reportRuleCopies, type RuleCopies} from '../iptables/repeated-rules.js'
import type {IptablesRuleset} from '../iptables/ruleset.js'
import type {ParsedSource, ReadOptions} from '../types.js'
import {iptablesModeChain, readIpvsIptablesFacts} from './iptables-facts.js'
import type {IpvsadmListing} from './parse.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {classify, reportEvidence, type Classified, type ClusterIndex} from './classify.js'
import {groupVirtualServers} from './group.js'
import {KubeSets, reportHealthCheckPorts, reportSetsWithoutVirtualServers} from './kube-sets.js'
import {inNodePortRange, readAddresses} from './node-addresses.js'
import {toServicePort} from './service-port.js'
import {foreignReason, foreignVs, mergeListings, type KubeVirtualServer} from './virtual-servers.js'

/** The sources of one node an IPVS-mode state is read from. */
const IPVS_NODE_FORMATS: ReadonlySet<string> = new Set([
  'ipvsadm',
  'ipset',
  'ip-addr',
  'iptables-save',
])

/**
 * Builds the IPVS-mode ProxyState of one node from its parsed ipvsadm, ipset, ip-addr and
 * iptables-save sources (and `opts.cluster` for names). Never throws on bad input.
 */
export async function buildIpvsState(
  parsed: ParsedSource[],
  opts: ReadOptions,
): Promise<ProxyState> {
  const state = emptyState('ipvs')
  const diagnostics = state.diagnostics
  const of = <T>(format: ParsedSource['format']) =>
    parsed.filter(
      (p) => p.format === format && p.data !== null && p.data !== undefined,
    ) as ParsedSource<T>[]
  const listings = of<IpvsadmListing>('ipvsadm')
  const sets = new KubeSets(of<IpsetDump>('ipset'), diagnostics)
  const addrs = readAddresses(of<IpAddrDump>('ip-addr'), sets)
  state.node.name = opts.node ?? null
  for (const p of parsed) {
    if (IPVS_NODE_FORMATS.has(p.format)) continue
    // Not dropped without a word: cluster objects have their own flag, other dumps their own mode.
    const instead =
      p.format === 'kube'
        ? ' (cluster objects name IPVS virtual servers when given with --cluster)'
        : ''
    diagnostics.push(
      diag(
        'warning',
        'IPVS_WRONG_SOURCE',
        `${p.source.path} is ${p.format} input, which an IPVS-mode state does not read; ignored${instead}`,
        {path: p.source.path, line: 1},
      ),
    )
  }

  for (const p of of<IptablesRuleset>('iptables-save')) applyIptablesFacts(state, p, diagnostics)

  let cluster: ClusterIndex | null = null
  if (opts.cluster && opts.cluster.length > 0) {
    const kube = await import('../kube/build.js')
    const expected = kube.readClusterSources(opts.cluster, {mode: 'ipvs', node: opts.node})
    pushAll(diagnostics, expected.diagnostics)
    cluster = {byKey: kube.indexFrontends(expected.services), key: kube.frontendKey}
  }

  if (listings.length === 0) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_NO_LISTING',
        'no ipvsadm listing among the inputs: ipsets, kube-ipvs0 and iptables rules do not say which real servers a service has; add `ipvsadm -Ln` (or `-Sn`) of the same node',
        null,
      ),
    )
  }

  const merged = mergeListings(listings, diagnostics)
  const kubeVs: KubeVirtualServer[] = []
  for (const vs of merged) {
    const reason = foreignReason(vs)
    if (reason !== null || vs.protocol === null || vs.ip === null || vs.port === null) {
      state.foreign.push(foreignVs(vs, reason ?? 'not a kube-proxy virtual server'))
      continue
    }
    kubeVs.push(vs as KubeVirtualServer)
  }

  // For the last-resort guess only: addresses whose every virtual server is on a NodePort-range port.
  const nodePortOnly = new Map<string, boolean>()
  for (const vs of kubeVs)
    nodePortOnly.set(vs.ip, (nodePortOnly.get(vs.ip) ?? true) && inNodePortRange(vs.port))
  const nodePortOnlyAddresses = new Set(
    [...nodePortOnly].filter(([, only]) => only).map(([ip]) => ip),
  )

  const classified: Classified[] = []
  for (const vs of kubeVs) {
    const c = classify(vs, sets, addrs, cluster, nodePortOnlyAddresses, diagnostics)
    if ('foreign' in c) state.foreign.push(foreignVs(vs, c.foreign))
    else classified.push(c)
  }
  reportEvidence(classified, cluster !== null, diagnostics)
  if (listings.length > 0) reportSetsWithoutVirtualServers(kubeVs, sets, diagnostics)

  const groups = groupVirtualServers(classified, diagnostics)
  state.services = groups.map((g) => toServicePort(g, sets, diagnostics))

  reportHealthCheckPorts(state.services, sets, diagnostics)

  const nodePortAddresses = [
    ...new Set(classified.filter((c) => c.type === 'NodePort').map((c) => c.vs.ip)),
  ]
  if (nodePortAddresses.length > 0) state.node.nodePortAddresses = nodePortAddresses
  return state
}

function applyIptablesFacts(
  state: ProxyState,
  p: ParsedSource<IptablesRuleset>,
  diagnostics: Diagnostic[],
): void {
  const facts = readIpvsIptablesFacts(p.data)
  const node = state.node
  node.masqueradeMark ??= facts.masqueradeMark
  node.randomFully ??= facts.randomFully
  node.masqueradeAll ??= facts.masqueradeAll
  node.localDetector ??= facts.localDetector
  node.localInterface ??= facts.localInterface
  for (const cidr of facts.podCIDRs) if (!node.podCIDRs.includes(cidr)) node.podCIDRs.push(cidr)
  if (!facts.ipvsMode) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_IPTABLES_NOT_IPVS_MODE',
        "this iptables dump has none of IPVS mode's chains (KUBE-IPVS-FILTER, KUBE-NODE-PORT, KUBE-LOAD-BALANCER); it may be of another node or mode",
        {path: p.source.path, line: 1},
      ),
    )
  }
  for (const chain of facts.iptablesModeChains) {
    state.foreign.push({
      kind: 'leftover',
      name: `${chain.table} ${chain.name}`,
      reason:
        'an iptables-mode chain on an IPVS-mode node: left over from a mode switch, or kube-proxy runs in iptables mode',
      source: {path: p.source.path, line: chain.line},
    })
  }
  // Copies of one rule show a node with two iptables versions or backends as in iptables mode;
  // the leftover iptables-mode chains above are left out, as that reader leaves out its own.
  const warn = (code: DiagnosticCode, message: string, line: number): void => {
    diagnostics.push(diag('warning', code, message, {path: p.source.path, line}))
  }
  for (const table of p.data.tables.values()) {
    for (const chain of table.chains.values()) {
      if (chain.ruleCount < 2 || chain.deletedLine !== null || iptablesModeChain(chain.name))
        continue
      const copies: RuleCopies = new Map()
      for (let i = 0; i < chain.ruleCount; i++) countRuleCopy(copies, chain.ruleAt(i))
      reportRuleCopies(copies, table, chain, warn)
    }
  }
}
