/**
 * Stage 1 for `iptables -L` listings (`iptables [-t nat] -L [CHAIN] [-n] [-v] [-x]
 * [--line-numbers]`, and ip6tables'): each line is translated, in place, to the iptables-save
 * line it stands for (`Chain X (policy ACCEPT)` -> `:X ACCEPT [0:0]`, a rule -> `-A X ...`,
 * column headers -> blank), and that text is read by the iptables reader (../iptables/parse.ts)
 * with the tables opened where each listing starts. One line for one line: every rule keeps its
 * listing's line number, and the reader's fast path reads the translated rules.
 *
 * A listing does not name its table: a new table starts where a chain is listed again, and which
 * table it is comes from its built-in chains or its targets (../iptables/table-inference.ts).
 * What a listing cannot show is said, never guessed: without -n, names for addresses and ports
 * (IPT_LIST_NAMES); without -v, interfaces (IPT_LIST_NO_INTERFACES); match text kp cannot
 * translate (IPT_LIST_UNKNOWN_MATCH). docs/iptables-list.md describes the format.
 */
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {diag} from '../../core/state.js'
import type {Diagnostic, Severity} from '../../model/types.js'
import {KUBE_CHAIN_PREFIX} from '../../kube-proxy/iptables-names.js'
import {parseIptablesText, type ListedTable} from '../iptables/parse.js'
import type {IptablesRuleset} from '../iptables/ruleset.js'
import {inferTable, type TableEvidence} from '../iptables/table-inference.js'
import type {ParsedSource, ReadOptions, SourceText} from '../types.js'
import {translateMatchText} from './match-text.js'

/** `-p` for the protocol numbers iptables 1.8.9 prints with -n (older ones print names). */
const PROTOCOL_NUMBERS: Readonly<Record<string, string>> = {
  '0': '',
  all: '',
  '6': 'tcp',
  '17': 'udp',
  '132': 'sctp',
  '1': 'icmp',
  '58': 'ipv6-icmp',
}

/** How many rules of a table are kept to tell its table by (the first ones say it). */
const EVIDENCE_RULES = 200

/** Which columns the rule lines under a header have (`num`, `pkts bytes`, `in out`). */
interface Columns {
  num: boolean
  counters: boolean
  interfaces: boolean
}

interface Block extends TableEvidence {
  /** 0-based line of its first `Chain` line. */
  line: number
  names: Set<string>
  rules: TableEvidence['rules'][number][]
  table?: string
}

/** A numeric address or network as -n prints it (IPv4, or IPv6 with a colon; an optional /len). */
function isNumericAddress(word: string): boolean {
  const v6 = word.includes(':')
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i)
    if ((c >= 48 && c <= 57) || c === 46 /* . */ || c === 47 /* / */) continue
    if (v6 && (c === 58 /* : */ || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) continue
    return false
  }
  return v6 || word.includes('.')
}

const isOptWord = (w: string): boolean => w === '--' || w === '-f' || w === '!f'

/** Reads a listing's lines into iptables-save lines (one for one) and what it cannot show. */
class ListingTranslator {
  readonly diagnostics: Diagnostic[] = []
  readonly out: string[] = []
  readonly blocks: Block[] = []
  private block: Block | null = null
  private chain: string | null = null
  private columns: Columns = {num: false, counters: false, interfaces: false}
  private sawHeader = false
  private namesLine = 0
  private names = 0
  private namesExample = ''
  private noInterfacesLine = 0
  /** Some rule was listed without the in/out columns (no -v). */
  get interfacesHidden(): boolean {
    return this.noInterfacesLine > 0
  }
  /** Reused word positions of one rule line. */
  private readonly starts: number[] = []
  private readonly ends: number[] = []

  constructor(private readonly path: string) {}

  private note(severity: Severity, code: DiagnosticCode, message: string, line: number): void {
    this.diagnostics.push(diag(severity, code, message, {path: this.path, line}))
  }

  translate(text: string): void {
    let pos = 0
    let idx = 0
    for (;;) {
      const nl = text.indexOf('\n', pos)
      const end = nl < 0 ? text.length : nl
      if (nl < 0 && pos >= text.length) break
      this.out.push(
        this.line(text, pos, end > pos && text.charCodeAt(end - 1) === 13 ? end - 1 : end, idx),
      )
      idx++
      if (nl < 0) break
      pos = nl + 1
    }
    this.finish()
  }

  /** The iptables-save line for text[pos, end), line `idx` (0-based). */
  private line(text: string, pos: number, end: number, idx: number): string {
    while (pos < end && text.charCodeAt(pos) === 32) pos++
    if (pos >= end) return ''
    if (text.startsWith('Chain ', pos)) return this.chainLine(text.slice(pos, end), idx)
    if (
      text.startsWith('target ', pos) ||
      text.startsWith('pkts ', pos) ||
      text.startsWith('num ', pos)
    )
      return this.header(text.slice(pos, end))
    if (this.chain === null || !this.sawHeader) {
      this.note(
        'error',
        'IPT_SYNTAX',
        `not a line of an iptables -L listing (no "Chain" line before it): ${text.slice(pos, Math.min(end, pos + 80))}`,
        idx + 1,
      )
      return ''
    }
    return this.rule(text, pos, end, idx)
  }

  /** `Chain NAME (policy ACCEPT[ 0 packets, 0 bytes])` or `Chain NAME (N references)`. */
  private chainLine(line: string, idx: number): string {
    const nameEnd = line.indexOf(' ', 6)
    const name = nameEnd < 0 ? line.slice(6) : line.slice(6, nameEnd)
    const policyAt = line.indexOf('(policy ')
    let policy = '-'
    if (policyAt >= 0) {
      const from = policyAt + 8
      let to = from
      while (to < line.length && line.charCodeAt(to) !== 32 && line.charCodeAt(to) !== 41) to++
      policy = line.slice(from, to)
    }
    // A chain listed again starts the next listing (`iptables -t nat -L; iptables -L`).
    if (this.block === null || this.block.names.has(name)) {
      this.block = {line: idx, names: new Set(), builtins: new Set(), rules: []}
      this.blocks.push(this.block)
    }
    this.block.names.add(name)
    if (policyAt >= 0) this.block.builtins.add(name)
    this.chain = name
    this.sawHeader = false
    return `:${name} ${policy} [0:0]`
  }

  private header(line: string): string {
    this.sawHeader = true
    this.columns = {
      num: line.startsWith('num '),
      counters: line.includes('pkts '),
      interfaces: line.includes(' in '),
    }
    return ''
  }

  /** Splits the line's first `count` words; returns how many it found. */
  private splitColumns(text: string, pos: number, end: number, count: number): number {
    const {starts, ends} = this
    let n = 0
    let i = pos
    while (n < count) {
      while (i < end && text.charCodeAt(i) === 32) i++
      if (i >= end) break
      starts[n] = i
      while (i < end && text.charCodeAt(i) !== 32) i++
      ends[n++] = i
    }
    return n
  }

  private rule(text: string, pos: number, end: number, idx: number): string {
    const {num, counters, interfaces} = this.columns
    const lead = (num ? 1 : 0) + (counters ? 2 : 0)
    // target prot opt [in out] source destination; the target column is blank for a rule without one.
    const wanted = lead + 5 + (interfaces ? 2 : 0)
    const found = this.splitColumns(text, pos, end, wanted)
    const {starts, ends} = this
    const word = (k: number) => text.slice(starts[k]!, ends[k]!)
    if (found < lead + 2) return this.bad(text, pos, end, idx, 'too few columns')
    let k = lead
    let target = ''
    if (!isOptWord(word(k + 1))) target = word(k++)
    // The words of a rule without a target end one column sooner (its last split word is match text).
    if (found < wanted - (target === '' ? 1 : 0))
      return this.bad(text, pos, end, idx, 'too few columns')
    const prot = word(k++)
    if (!isOptWord(word(k++))) return this.bad(text, pos, end, idx, 'no opt column (--)')
    let rule = `-A ${this.chain}`
    let inIf = '*'
    let outIf = '*'
    if (interfaces) {
      inIf = word(k++)
      outIf = word(k++)
    }
    const source = word(k++)
    const destination = word(k++)
    const matchFrom = ends[k - 1]!
    rule += this.address('-s', source, idx) + this.address('-d', destination, idx)
    if (inIf !== '*') rule += inIf.startsWith('!') ? ` ! -i ${inIf.slice(1)}` : ` -i ${inIf}`
    if (outIf !== '*') rule += outIf.startsWith('!') ? ` ! -o ${outIf.slice(1)}` : ` -o ${outIf}`
    const negatedProt = prot.startsWith('!')
    const protName = negatedProt ? prot.slice(1) : prot
    const p = PROTOCOL_NUMBERS[protName] ?? protName
    if (p !== '') rule += negatedProt ? ` ! -p ${p}` : ` -p ${p}`
    if (!interfaces && this.noInterfacesLine === 0) this.noInterfacesLine = idx + 1
    const m = translateMatchText(text, matchFrom, end, target)
    if (m.namedPort) this.noteName(idx, 'a port name')
    if (m.unknown !== '') {
      const inKube =
        this.chain!.startsWith(KUBE_CHAIN_PREFIX) || target.startsWith(KUBE_CHAIN_PREFIX)
      this.note(
        inKube ? 'error' : 'warning',
        'IPT_LIST_UNKNOWN_MATCH',
        `cannot translate "${m.unknown.length > 80 ? `${m.unknown.slice(0, 80)}…` : m.unknown}" of this rule in ${this.chain}; it is read without it${inKube ? ', so what kp says of it may be wrong' : ''}`,
        idx + 1,
      )
    }
    rule += m.matches
    if (target !== '') rule += `${m.goto ? ' -g' : ' -j'} ${target}${m.targetOptions}`
    const block = this.block!
    if (block.rules.length < EVIDENCE_RULES)
      block.rules.push({target: target === '' ? null : target, chain: this.chain!, line: idx + 1})
    return rule
  }

  /** ` -s X` for a source or destination column; nothing for any address. */
  private address(option: string, value: string, idx: number): string {
    if (value === '0.0.0.0/0' || value === '::/0' || value === 'anywhere') return ''
    const negated = value.startsWith('!')
    const addr = negated ? value.slice(1) : value
    if (!isNumericAddress(addr)) this.noteName(idx, `"${addr}"`)
    return negated ? ` ! ${option} ${addr}` : ` ${option} ${addr}`
  }

  private noteName(idx: number, what: string): void {
    if (this.names++ === 0) {
      this.namesLine = idx + 1
      this.namesExample = what
    }
  }

  private bad(text: string, pos: number, end: number, idx: number, why: string): string {
    this.note(
      'error',
      'IPT_SYNTAX',
      `not a rule of an iptables -L listing (${why}): ${text.slice(pos, Math.min(end, pos + 80))}`,
      idx + 1,
    )
    return ''
  }

  private finish(): void {
    if (this.names > 0)
      this.note(
        'error',
        'IPT_LIST_NAMES',
        `listed without -n: ${this.names} address(es) or port(s) are names, such as ${this.namesExample}, which kp does not resolve; the rules that use them are not known. List with -n`,
        this.namesLine,
      )
    if (this.noInterfacesLine > 0)
      this.note(
        'warning',
        'IPT_LIST_NO_INTERFACES',
        'listed without -v: in/out interfaces are not shown, so rules that match them (local-traffic detection by interface) read as if they had no interface; list with -v',
        this.noInterfacesLine,
      )
    for (const block of this.blocks) {
      const {table, why} = inferTable(block)
      block.table = table
      this.note(
        'info',
        'IPT_TABLE_INFERRED',
        `an iptables -L listing does not name its table: the chains from line ${block.line + 1} on are read as the ${table} table, because ${why}`,
        block.line + 1,
      )
    }
  }
}

export function parse(src: SourceText, _opts?: ReadOptions): ParsedSource<IptablesRuleset> {
  const t = new ListingTranslator(src.path)
  t.translate(src.text)
  const listedTables: ListedTable[] = t.blocks.map((b) => ({line: b.line, table: b.table!}))
  const {ruleset, diagnostics} = parseIptablesText(`${t.out.join('\n')}\n`, src.path, undefined, {
    listedTables,
  })
  if (t.interfacesHidden) ruleset.interfacesHidden = true
  return {
    // The data is an iptables ruleset like iptables-save's: the iptables and IPVS builders read it so.
    format: 'iptables-save',
    source: {path: src.path, format: 'iptables-list', tool: src.tool ?? null},
    data: ruleset,
    diagnostics: [...t.diagnostics, ...diagnostics],
  }
}
