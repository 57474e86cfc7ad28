/**
 * The intermediate representation both nftables readers produce (stage 1): the text reader
 * (`nft list ruleset|table`, with or without `-a`, and the `add table|chain|...` transaction
 * form) and the JSON reader (`nft -j list ...`). Stage 2 (build.ts) only ever sees this shape,
 * so every input form of the same ruleset yields the same ProxyState.
 *
 * Rules are kept as token lists in nft's own list syntax: the JSON reader renders its
 * expressions back into those tokens (nft-json/parse.ts), so one interpreter serves both.
 * Quoted strings keep their quotes (`"eth0"`), so a name can never be mistaken for a keyword.
 */

export const NFT_FAMILIES: ReadonlySet<string> = new Set([
  'ip',
  'ip6',
  'inet',
  'arp',
  'bridge',
  'netdev',
])

export interface NftRule {
  /** The rule's statements as nft prints them, without its trailing `comment "..."`. */
  tokens: string[]
  /** The rule comment, unquoted; null when it has none. */
  comment: string | null
  line: number
}

export interface NftHook {
  type: string
  hook: string
  /** The numeric priority (named priorities such as `dstnat - 10` resolved); null if unreadable. */
  priority: number | null
  /** The priority as written (`dstnat - 10`, `-110`). */
  priorityText: string
  policy: string | null
}

/**
 * Makes the rules a reader kept in a compact form. A large dump has 200,000+ rules; kept as
 * objects with their words, they made the garbage collector copy them all, twice, while the
 * dump was read. The text reader keeps where a rule's line is, the JSON reader its words joined
 * in one string; NftChain.rules() asks for the NftRule when a rule is used.
 */
export interface CompactRules {
  /** The rule kept as `ref` (whatever its reader chose) that starts at `line`. */
  ruleAt(ref: number | string, line: number): NftRule
}

export class NftChain {
  hook: NftHook | null = null
  comment: string | null = null
  /**
   * Set by the kube-proxy table reader (../nft/kube-proxy-table.ts) when a map element or rule of
   * the table points at this chain; what stays false is a leftover. A mark, not a set of names: a
   * large table has one chain per service port and endpoint.
   */
  pointedAt = false
  /** The rules in order: an NftRule, or a compact rule as two entries, its ref and its line. */
  private entries: (NftRule | number | string)[] = []
  private count = 0

  constructor(
    readonly name: string,
    readonly line: number,
    private readonly compactRules: CompactRules | null = null,
  ) {}

  get ruleCount(): number {
    return this.count
  }

  /** The rules in order. Compact rules are made again on each call: call once per use. */
  rules(): NftRule[] {
    const out: NftRule[] = []
    const entries = this.entries
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k]!
      if (typeof e === 'object') out.push(e)
      else out.push(this.compactRules!.ruleAt(e, entries[++k] as number))
    }
    return out
  }

  addRule(rule: NftRule, atStart: boolean): void {
    if (atStart) this.entries.unshift(rule)
    else this.append(rule)
    this.count++
  }

  /** A rule this chain's CompactRules makes from `ref` when asked. */
  addCompactRule(ref: number | string, line: number): void {
    this.append(ref, line)
    this.count++
  }

  clearRules(): void {
    this.entries = []
    this.count = 0
  }

  /** Gives back the spare room of the rule list once no more rules are expected (end of a `chain {}` block). */
  compact(): void {
    // Up to 8 entries, append already grew it to the exact size.
    if (this.entries.length > 8) this.entries = this.entries.slice()
  }

  private append(...items: (NftRule | number | string)[]): void {
    // Most chains of a large dump have one to three rules, and a growing array takes room for
    // 17 entries at its first push: up to 8 entries, grow to the exact size instead.
    if (this.entries.length + items.length <= 8) this.entries = this.entries.concat(items)
    else this.entries.push(...items)
  }
}

export interface NftElement {
  /** The key, split at the concatenation dots: `172.30.0.41 . tcp . 80` -> ['172.30.0.41', 'tcp', '80']. */
  key: string[]
  /** The mapped value's tokens (`['goto', 'service-...']`, `['drop']`); null for a plain set. */
  value: string[] | null
  comment: string | null
  line: number
}

export interface NftSet {
  kind: 'set' | 'map'
  name: string
  line: number
  /** The `type` (or `typeof`) as written, e.g. `ipv4_addr . inet_proto . inet_service : verdict`. */
  type: string
  flags: string[]
  /** The set's default element timeout in seconds; null when it has none. */
  timeoutSeconds: number | null
  comment: string | null
  elements: NftElement[]
}

export interface NftTable {
  family: string
  name: string
  line: number
  comment: string | null
  chains: Map<string, NftChain>
  sets: Map<string, NftSet>
}

export interface NftDocument {
  /** Keyed by `family name`, in the order they were first seen. */
  tables: Map<string, NftTable>
  /** The nft version the JSON output names (metainfo), e.g. "nftables v1.0.6 (Lester Gooch #5)". */
  tool: string | null
}

export function tableKey(family: string, name: string): string {
  return `${family} ${name}`
}

export function emptyDocument(): NftDocument {
  return {tables: new Map(), tool: null}
}

export function getOrAddTable(
  doc: NftDocument,
  family: string,
  name: string,
  line: number,
): NftTable {
  const key = tableKey(family, name)
  let table = doc.tables.get(key)
  if (!table) {
    table = {family, name, line, comment: null, chains: new Map(), sets: new Map()}
    doc.tables.set(key, table)
  }
  return table
}

/** `"abc"` -> `abc`; anything else unchanged. */
export function unquote(token: string): string {
  return token.length >= 2 &&
    token.charCodeAt(0) === 34 &&
    token.charCodeAt(token.length - 1) === 34
    ? token.slice(1, -1)
    : token
}

/** Named chain priorities of the ip/ip6/inet families (nft(8), "CHAIN PRIORITIES"). */
const NAMED_PRIORITIES: Record<string, number> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
  out: 100,
  dnat: -100,
}

/** `dstnat - 10` -> -110, `-110` -> -110, `filter` -> 0; null when it is neither. */
export function resolvePriority(text: string): number | null {
  const parts = text.split(' ').filter((p) => p !== '')
  const base = parts[0]
  if (base === undefined) return null
  let value: number
  if (base in NAMED_PRIORITIES) value = NAMED_PRIORITIES[base]!
  else if (/^-?\d+$/.test(base)) value = Number(base)
  else return null
  if (parts.length === 1) return value
  const op = parts[1]
  const n = parts[2]
  if (parts.length !== 3 || (op !== '+' && op !== '-') || n === undefined || !/^\d+$/.test(n))
    return null
  return op === '+' ? value + Number(n) : value - Number(n)
}

/** nft time strings (`10800s`, `3h`, `1d2h3m4s`, `500ms`) -> whole seconds; null when unreadable. */
export function parseNftDuration(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text)
  let total = 0
  let matched = ''
  for (const m of text.matchAll(/(\d+)(ms|d|h|m|s)/g)) {
    const n = Number(m[1])
    const unit = m[2]
    total +=
      unit === 'd'
        ? n * 86400
        : unit === 'h'
          ? n * 3600
          : unit === 'm'
            ? n * 60
            : unit === 's'
              ? n
              : n / 1000
    matched += m[0]
  }
  return matched === text && text !== '' ? Math.round(total) : null
}
