/**
 * Stage 2 for nftables input (text or JSON, already in the IR of ir.ts): one node's
 * ProxyState from its `ip kube-proxy` / `ip6 kube-proxy` tables.
 *
 * * No kube-proxy table, but KUBE-* chains in iptables-nft's `ip nat` / `ip filter`: the node
 *   runs kube-proxy in iptables mode and the operator pasted `nft list ruleset`; read those
 *   (iptables-nft.ts) and return mode "iptables".
 * * Neither: NFT_NO_KUBE_PROXY, an error at line 1 (exit 3).
 * * Other tables: `foreign` when they touch kube-proxy's mark 0x4000 or are iptables-mode
 *   leftovers; otherwise counted in one info diagnostic.
 */
import {pushAll} from '../../core/arrays.js'
import {emptyState} from '../../core/state.js'
import type {ForeignObject, ProxyState} from '../../model/types.js'
import type {ParsedSource, ReadOptions} from '../types.js'
import {IptablesNftReader, hasKubeChains} from './iptables-nft.js'
import type {NftDocument, NftTable} from './ir.js'
import {KubeProxyTableReader} from './kube-proxy-table.js'
import {NodeFacts} from './node-facts.js'
import {applyLayoutGeneration} from './layout-generation.js'
import {Reporter} from './reporter.js'
import {markValue} from './words.js'
import {DEFAULT_MASQUERADE_MARK} from '../../kube-proxy/settings.js'
import {NFT_TABLE} from '../../kube-proxy/nftables-names.js'

const KUBE_PROXY_MARK = Number(DEFAULT_MASQUERADE_MARK)

interface SourcedTable {
  table: NftTable
  path: string
}

function isDocument(data: unknown): data is NftDocument {
  return typeof data === 'object' && data !== null && (data as NftDocument).tables instanceof Map
}

/** Does any rule of this table test or set kube-proxy's masquerade mark? */
function touchesKubeProxyMark(table: NftTable): boolean {
  for (const chain of table.chains.values()) {
    for (const rule of chain.rules()) {
      const w = rule.tokens
      for (let i = 0; i < w.length; i++) {
        const x = w[i]!
        if (x.charCodeAt(0) !== 48 && x !== '16384') continue
        // a number next to a `mark` expression: `meta mark & 0x00004000`, `mark set mark or 0x4000`
        const near = w.slice(Math.max(0, i - 4), i).includes('mark')
        if (near && markValue(x) === KUBE_PROXY_MARK) return true
      }
    }
  }
  return false
}

export function buildNftablesState(parsed: ParsedSource[], _opts: ReadOptions): ProxyState {
  const reporter = new Reporter()
  const facts = new NodeFacts()
  const firstPath = parsed[0]?.source.path ?? '-'
  const all: SourcedTable[] = []
  const seen = new Map<string, string>()
  for (const p of parsed) {
    // Only nft text and JSON: an iptables-save ruleset also keeps its tables in a Map, but its
    // chains are not nft chains (reading their rules threw a TypeError).
    if (p.format !== 'nft' && p.format !== 'nft-json') {
      reporter.report(
        'warning',
        'NFT_WRONG_SOURCE',
        `${p.source.path} is ${p.format} input, which an nftables state does not read; ignored`,
        {path: p.source.path, line: 1},
      )
      continue
    }
    if (!isDocument(p.data)) continue
    for (const [key, table] of p.data.tables) {
      const earlier = seen.get(key)
      if (earlier !== undefined) {
        reporter.report(
          'warning',
          'NFT_DUPLICATE_TABLE',
          `table ${key} is also in ${earlier}; this copy was ignored`,
          {path: p.source.path, line: table.line},
        )
        continue
      }
      seen.set(key, p.source.path)
      all.push({table, path: p.source.path})
    }
  }

  const kubeProxy = all.filter(
    (t) => t.table.name === NFT_TABLE && (t.table.family === 'ip' || t.table.family === 'ip6'),
  )
  const iptablesNft = all.filter(
    (t) => (t.table.family === 'ip' || t.table.family === 'ip6') && hasKubeChains(t.table),
  )
  const mode = kubeProxy.length === 0 && iptablesNft.length > 0 ? 'iptables' : 'nftables'
  const state = emptyState(mode)

  if (kubeProxy.length === 0 && iptablesNft.length === 0) {
    reporter.report(
      'error',
      'NFT_NO_KUBE_PROXY',
      'no `table ip kube-proxy` or `table ip6 kube-proxy` here, and no iptables-nft KUBE-* chains: this ruleset has no kube-proxy state (is kube-proxy running in IPVS mode, or was the wrong table listed?)',
      {path: firstPath, line: 1},
    )
  }

  if (mode === 'nftables') {
    for (const {table, path} of kubeProxy)
      pushAll(state.services, new KubeProxyTableReader(table, path, facts, reporter).read())
    // nft mode never accepts NodePorts on localhost (docs/kube-proxy-layouts.md §3; docs/model.md, localhostNodePorts).
    if (kubeProxy.length > 0) facts.applyTo(state.node)
    if (kubeProxy.length > 0) applyLayoutGeneration(facts, state.node, reporter)
    if (kubeProxy.length > 0) state.node.localhostNodePorts = false
  } else {
    for (const family of ['ip', 'ip6']) {
      const nat = iptablesNft.find((t) => t.table.family === family && t.table.name === 'nat')
      const filter = all.find((t) => t.table.family === family && t.table.name === 'filter')
      if (!nat && !filter) continue
      const path = (nat ?? filter)!.path
      pushAll(
        state.services,
        new IptablesNftReader(nat?.table, filter?.table, family, path, facts, reporter).read(),
      )
    }
    facts.applyTo(state.node)
    state.node.iptablesBackends = ['nf_tables']
    reporter.report(
      'info',
      'NFT_IPTABLES_MODE',
      'this is iptables-mode kube-proxy seen through iptables-nft; services are identified by address and port where comments are missing',
      {path: firstPath, line: 1},
    )
  }

  const foreign: ForeignObject[] = []
  // Every other table, whoever wrote it: tables of a newer host nft crash an older kube-proxy's
  // nft (kubernetes #136786), and a CNI shows in its table names (src/analyze/migrate/).
  state.node.otherTables = [
    ...new Set(
      all
        .filter(({table}) => !kubeProxy.some((k) => k.table === table))
        .map(({table}) => `${table.family} ${table.name}`),
    ),
  ]
  let ignored = 0
  for (const {table, path} of all) {
    if (kubeProxy.some((k) => k.table === table)) continue
    const source = {path, line: table.line}
    if (mode === 'nftables' && hasKubeChains(table)) {
      foreign.push({
        kind: 'leftover',
        name: `table ${table.family} ${table.name}`,
        reason: 'iptables-mode kube-proxy chains (KUBE-*) left in an iptables-nft table',
        source,
      })
    } else if (mode === 'iptables' && iptablesNft.some((k) => k.table === table)) {
      continue
    } else if (
      mode === 'iptables' &&
      table.name === 'filter' &&
      (table.family === 'ip' || table.family === 'ip6')
    ) {
      continue
    } else if (touchesKubeProxyMark(table)) {
      foreign.push({
        kind: 'nft-table',
        name: `table ${table.family} ${table.name}`,
        reason: "its rules test or set kube-proxy's masquerade mark 0x4000",
        source,
      })
    } else {
      ignored++
    }
  }
  state.foreign = foreign
  if (ignored > 0)
    reporter.report(
      'info',
      'NFT_OTHER_TABLES',
      `${ignored} other tables that do not touch kube-proxy's objects were ignored`,
      {path: firstPath, line: 1},
    )
  state.diagnostics = reporter.finish()
  return state
}
