/**
 * Table inference for headerless input (`iptables [-t TABLE] -S`, or a grep of a dump): which
 * table a block of lines without a `*table` line belongs to, told by its built-in chains and
 * by the targets and chains only one table has.
 */
import {
  KUBE_CHAIN_PREFIX,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_MARK_DROP,
  KUBE_MARK_MASQ,
  KUBE_MARK_PREFIX,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  PER_SERVICE_CHAIN_PREFIXES,
} from '../../kube-proxy/iptables-names.js'
import type {ParsedChain} from './chain.js'
import type {IptablesRule} from './ruleset.js'

/** Targets that only the nat table accepts; used to tell the table of headerless `-S` output. */
const NAT_TARGETS: ReadonlySet<string> = new Set([
  'DNAT',
  'SNAT',
  'MASQUERADE',
  'REDIRECT',
  'NETMAP',
  KUBE_MARK_MASQ,
  KUBE_MARK_DROP,
  KUBE_POSTROUTING,
])
const NAT_CHAIN_PREFIXES = [...PER_SERVICE_CHAIN_PREFIXES, KUBE_MARK_PREFIX, KUBE_POSTROUTING]
const FILTER_TARGETS: ReadonlySet<string> = new Set(['REJECT'])
const FILTER_CHAINS: ReadonlySet<string> = new Set([
  KUBE_FORWARD,
  KUBE_EXTERNAL_SERVICES,
  KUBE_PROXY_FIREWALL,
  KUBE_FIREWALL,
])

/** Lines read without a table header, up to the next table or block. */
export interface PendingBlock {
  line: number
  chains: Map<string, ParsedChain>
  rules: IptablesRule[]
  builtins: Set<string>
}

/** What tells a block's table: its built-in chains, and (some of) its rules' targets and chains. */
export interface TableEvidence {
  builtins: Set<string>
  rules: readonly Pick<IptablesRule, 'target' | 'chain' | 'line'>[]
}

export const isNatEvidence = (r: Pick<IptablesRule, 'target' | 'chain'>): boolean => {
  const t = r.target ?? ''
  return (
    NAT_TARGETS.has(t) || NAT_CHAIN_PREFIXES.some((p) => t.startsWith(p) || r.chain.startsWith(p))
  )
}

/**
 * The nat table refuses DROP and REJECT, and these chains exist only in filter. nat KUBE-NODEPORTS
 * never ACCEPTs; the health check node port rule of filter KUBE-NODEPORTS does (IPVS mode's nat
 * KUBE-SERVICES does ACCEPT, so the chain decides, not the target alone).
 */
const isFilterOnly = (r: IptablesRule): boolean =>
  r.target === 'REJECT' ||
  r.target === 'DROP' ||
  FILTER_CHAINS.has(r.chain) ||
  (r.target === 'ACCEPT' && r.chain === KUBE_NODEPORTS)

export function inferTable(block: TableEvidence): {table: string; why: string} {
  const b = block.builtins
  if (b.has('PREROUTING') && b.has('FORWARD'))
    return {table: 'mangle', why: 'its built-in chains are those of mangle'}
  if (b.has('POSTROUTING'))
    return {table: 'nat', why: 'it has PREROUTING/POSTROUTING policies but no FORWARD'}
  if (b.has('PREROUTING'))
    return {table: 'raw', why: 'it has a PREROUTING policy but no POSTROUTING or FORWARD'}
  let nat = 0
  let filter = 0
  let natWhy = ''
  let filterWhy = ''
  for (const r of block.rules) {
    const t = r.target ?? ''
    if (isNatEvidence(r)) {
      nat++
      natWhy ||= `line ${r.line} (${r.chain} -j ${t})`
    } else if (
      FILTER_TARGETS.has(t) ||
      FILTER_CHAINS.has(r.chain) ||
      (r.chain.startsWith(KUBE_CHAIN_PREFIX) && (t === 'ACCEPT' || t === 'DROP'))
    ) {
      filter++
      filterWhy ||= `line ${r.line} (${r.chain} -j ${t})`
    }
  }
  if (nat > filter) return {table: 'nat', why: `it holds nat-only rules such as ${natWhy}`}
  if (filter > 0) return {table: 'filter', why: `it holds filter rules such as ${filterWhy}`}
  if (b.has('FORWARD')) return {table: 'filter', why: 'its built-in chains are those of filter'}
  return {
    table: 'filter',
    why: 'nothing in it tells, and filter is the default table of `iptables -S`',
  }
}

/**
 * Files a headerless block's chains under the table(s) inferred (`addToTable(table, chain)`);
 * returns what the IPT_TABLE_INFERRED diagnostic says.
 */
export function placeBlock(
  block: PendingBlock,
  addToTable: (table: string, chain: ParsedChain) => void,
): string {
  // A grep of a whole dump (`iptables-save | grep svc`, fixtures/iptables/fragment-grep-xlb) has
  // no -P lines and may mix both tables: KUBE-SERVICES exists in nat and in filter. Then each
  // rule goes where it can live: REJECT/DROP and the filter-only chains to filter, the rest to nat.
  if (
    block.builtins.size === 0 &&
    block.rules.some(isNatEvidence) &&
    block.rules.some(isFilterOnly)
  ) {
    for (const chain of block.chains.values()) {
      const filterRules = chain.rules.filter(isFilterOnly)
      const natRules = chain.rules.filter((r) => !isFilterOnly(r))
      if (filterRules.length > 0 || FILTER_CHAINS.has(chain.name))
        addToTable('filter', chain.copy('filter', filterRules))
      if (natRules.length > 0 || (filterRules.length === 0 && !FILTER_CHAINS.has(chain.name)))
        addToTable('nat', chain.copy('nat', natRules))
    }
    return `no table header, and rules of both tables from line ${block.line} on (a fragment of a dump?): REJECT/DROP rules and the filter-only chains are read as filter, the rest as nat`
  }
  const {table: name, why} = inferTable(block)
  for (const chain of block.chains.values()) addToTable(name, chain)
  return `no table header (iptables -S output, or a fragment of a dump): read the rules from line ${block.line} on as the ${name} table, because ${why}`
}
