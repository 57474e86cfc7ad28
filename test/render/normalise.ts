/**
 * The ordering normalisation kube-proxy's own unit tests apply before comparing rule dumps
 * (fixtures/PROVENANCE.md "The tests compare order-insensitively"), written from its description and from
 * the test helpers' behaviour (pkg/proxy/iptables/proxier_test.go sortIPTablesRules,
 * pkg/proxy/nftables/helpers_test.go sortNFTablesTransaction):
 *
 * iptables: tables by name; chains KUBE-NODEPORTS, KUBE-SERVICES, then KUBE-* by name, then the
 * rest by name; rules grouped by chain keeping their order, except that the rules of
 * KUBE-NODEPORTS and KUBE-SERVICES (both tables) are stably sorted by the service name at the
 * start of their comment (up to the first space or colon), with the nat KUBE-SERVICES
 * "must be the last rule" rule kept last; `-X` lines after the rules.
 *
 * nftables: blank and `#` lines dropped; `add table` first, then objects by type
 * (chain < rule < set < map < element) and name; rules keep their order within a chain;
 * other objects of the same name ordered by their text.
 */

interface IptChain {
  name: string
  rules: string[]
  deleted: boolean
}

interface IptTable {
  name: string
  chains: IptChain[]
}

const COMMENT = /--comment (?:"([^"]*)"|(\S+))/

function commentOf(rule: string): string | null {
  const m = COMMENT.exec(rule)
  return m ? (m[1] ?? m[2] ?? null) : null
}

/** orderByCommentServiceName: the comment up to the first space or colon; no comment sorts as equal. */
function byServiceName(a: string, b: string): number {
  const ca = commentOf(a)
  const cb = commentOf(b)
  if (ca === null || cb === null) return 0
  const na = ca.split(/[ :]/, 1)[0]!
  const nb = cb.split(/[ :]/, 1)[0]!
  return na < nb ? -1 : na > nb ? 1 : 0
}

function chainRank(name: string): [number, string] {
  if (name === 'KUBE-NODEPORTS') return [0, '']
  if (name === 'KUBE-SERVICES') return [1, '']
  return [name.startsWith('KUBE-') ? 2 : 3, name]
}

export interface IptablesNormaliseOptions {
  /**
   * Leave out chains that the input declares and then deletes with `-X`. kube-proxy writes those
   * for chains of a previous sync (corpus iptables-syncrepeated-fullresync.dump); they are history,
   * not part of the state, so a renderer cannot reproduce them. Returns their names.
   */
  dropDeletedChains?: boolean
}

export function parseIptablesDump(text: string): IptTable[] {
  const tables: IptTable[] = []
  let table: IptTable | null = null
  const chainsByName = new Map<string, IptChain>()
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    if (line.startsWith('*')) {
      table = {name: line.slice(1), chains: []}
      tables.push(table)
      chainsByName.clear()
      continue
    }
    if (!table) throw new Error(`rule outside a table: ${line}`)
    if (line === 'COMMIT') {
      table = null
      continue
    }
    if (line.startsWith(':')) {
      const name = line.slice(1).split(' ', 1)[0]!
      const chain = {name, rules: [], deleted: false}
      table.chains.push(chain)
      chainsByName.set(name, chain)
      continue
    }
    const [verb, chainName] = line.split(' ', 2)
    const chain = chainsByName.get(chainName ?? '')
    if (!chain) throw new Error(`${verb} on an undeclared chain: ${line}`)
    if (verb === '-A') chain.rules.push(line)
    else if (verb === '-X') chain.deleted = true
    else throw new Error(`unexpected line: ${line}`)
  }
  return tables
}

export function sortIptablesRules(
  text: string,
  opts: IptablesNormaliseOptions = {},
): {text: string; droppedChains: string[]} {
  const tables = parseIptablesDump(text)
  const droppedChains: string[] = []
  tables.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const out: string[] = []
  for (const t of tables) {
    let chains = t.chains
    if (opts.dropDeletedChains) {
      droppedChains.push(...chains.filter((c) => c.deleted).map((c) => `${t.name}/${c.name}`))
      chains = chains.filter((c) => !c.deleted)
    }
    chains.sort((a, b) => {
      const [ra, na] = chainRank(a.name)
      const [rb, nb] = chainRank(b.name)
      return ra - rb || (na < nb ? -1 : na > nb ? 1 : 0)
    })
    for (const c of chains) {
      if (c.name === 'KUBE-NODEPORTS' || (c.name === 'KUBE-SERVICES' && t.name === 'filter'))
        c.rules.sort(byServiceName)
      if (c.name === 'KUBE-SERVICES' && t.name === 'nat') {
        const isLast = (r: string) => (commentOf(r) ?? '').includes('must be the last rule')
        c.rules.sort((a, b) =>
          isLast(a) ? (isLast(b) ? 0 : 1) : isLast(b) ? -1 : byServiceName(a, b),
        )
      }
    }
    out.push(`*${t.name}`)
    for (const c of chains) out.push(`:${c.name} - [0:0]`)
    for (const c of chains) out.push(...c.rules)
    for (const c of chains) if (c.deleted) out.push(`-X ${c.name}`)
    out.push('COMMIT')
  }
  return {text: out.join('\n') + '\n', droppedChains}
}

const NFT_OBJECT_ORDER: Record<string, number> = {
  table: 1,
  chain: 2,
  rule: 3,
  set: 4,
  map: 5,
  element: 6,
}

export interface NftablesNormaliseOptions {
  /**
   * Leave out per-service chains (names with `/`) that are declared but have no rules. kube-proxy
   * flushes chains of deleted services and keeps them empty until a later sync deletes them
   * (docs/kube-proxy-layouts.md §3.5; corpus nftables-syncrepeated-{stalechains,emptied}.dump); they are history,
   * not state. Returns their names.
   */
  dropEmptyServiceChains?: boolean
}

export function sortNftablesTransaction(
  text: string,
  opts: NftablesNormaliseOptions = {},
): {text: string; droppedChains: string[]} {
  let lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))
  const droppedChains: string[] = []
  if (opts.dropEmptyServiceChains) {
    const withRules = new Set(
      lines.filter((l) => l.startsWith('add rule ')).map((l) => l.split(' ')[4]),
    )
    lines = lines.filter((l) => {
      const name = l.split(' ')[4] ?? ''
      const empty = l.startsWith('add chain ') && name.includes('/') && !withRules.has(name)
      if (empty) droppedChains.push(name)
      return !empty
    })
  }
  const words = new Map(lines.map((l) => [l, l.split(' ')]))
  const sorted = lines
    .map((line, index) => ({line, index}))
    .sort((a, b) => {
      const wa = words.get(a.line)!
      const wb = words.get(b.line)!
      const ta = wa[1] ?? ''
      const tb = wb[1] ?? ''
      if (ta === 'table' || tb === 'table')
        return ta === tb ? a.index - b.index : ta === 'table' ? -1 : 1
      if (ta !== tb) return (NFT_OBJECT_ORDER[ta] ?? 99) - (NFT_OBJECT_ORDER[tb] ?? 99)
      const na = wa[4] ?? ''
      const nb = wb[4] ?? ''
      if (na !== nb) return na < nb ? -1 : 1
      if (ta === 'rule') return a.index - b.index
      return a.line < b.line ? -1 : a.line > b.line ? 1 : a.index - b.index
    })
  return {text: sorted.map((s) => s.line).join('\n') + '\n', droppedChains}
}
