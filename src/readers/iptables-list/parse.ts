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
import {LineWords, OutBytes} from './out-bytes.js'
import {bytePieces, memoryBytes} from '../bytes.js'
import {decodeText} from '../../core/text.js'

/** `-p` for the protocol numbers iptables 1.8.9 prints with -n (older ones print names); '' for all. */
const PROTOCOL_NUMBERS: Readonly<Record<string, string>> = {
  '0': '',
  all: '',
  '6': 'tcp',
  '17': 'udp',
  '132': 'sctp',
  '1': 'icmp',
  '58': 'ipv6-icmp',
}

/** Targets whose options the listing prints after the matches (./match-text.ts). */
const TARGETS_WITH_OPTIONS = ['DNAT', 'SNAT', 'MASQUERADE', 'MARK', 'REJECT'] as const

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
  /** Decided when the text of its first line is handed on (ListingTranslator.piece). */
  table?: string
  why?: string
}

/** More lines that are not listing lines than this are counted, not listed. */
const MAX_SYNTAX_DIAGNOSTICS = 100

/** About how much translated text one piece holds (../bytes.ts cuts the input alike). */
const PIECE_BYTES = 1 << 20

/** Word k is `0.0.0.0/0`, `::/0` or `anywhere` (no -n): no address condition. */
const isAnyAddress = (w: LineWords, k: number): boolean =>
  w.is(k, '0.0.0.0/0') || w.is(k, '::/0') || w.is(k, 'anywhere')

/** A numeric address or network as -n prints it (IPv4, or IPv6 with a colon; an optional /len). */
function isNumericAddress(src: Buffer, from: number, to: number): boolean {
  const v6 = src.indexOf(58, from) >= 0 && src.indexOf(58, from) < to
  let dot = false
  for (let i = from; i < to; i++) {
    const c = src[i]!
    if (c === 46) dot = true
    if ((c >= 48 && c <= 57) || c === 46 /* . */ || c === 47 /* / */) continue
    if (v6 && (c === 58 /* : */ || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) continue
    return false
  }
  return v6 || dot
}

/** `--`, `-f` or `!f`: the opt column. */
const isOptWord = (w: LineWords, k: number): boolean =>
  w.is(k, '--') || w.is(k, '-f') || w.is(k, '!f')

/**
 * Reads a listing's lines into iptables-save lines, one for one, written as bytes, and says what
 * the listing cannot show.
 */
class ListingTranslator {
  readonly diagnostics: Diagnostic[] = []
  readonly blocks: Block[] = []
  /** Where each block's table starts, for the iptables reader; grows as pieces are handed on. */
  readonly listedTables: ListedTable[] = []
  private readonly out = new OutBytes(PIECE_BYTES + (PIECE_BYTES >> 1))
  /** The piece of the source being translated. */
  private src: Buffer = Buffer.alloc(0)
  private block: Block | null = null
  /** The chain being listed, and its name's bytes (a piece's bytes are gone with the next piece). */
  private chain: string | null = null
  private chainBytes: Buffer = Buffer.allocUnsafeSlow(256)
  private chainLength = 0
  private columns: Columns = {num: false, counters: false, interfaces: false}
  private sawHeader = false
  private namesLine = 0
  private names = 0
  private namesExample = ''
  private noInterfacesLine = 0
  private badLines = 0
  private firstUnlistedBad = 0
  private readonly words = new LineWords()

  constructor(private readonly path: string) {}

  /** Some rule was listed without the in/out columns (no -v). */
  get interfacesHidden(): boolean {
    return this.noInterfacesLine > 0
  }

  private note(severity: Severity, code: DiagnosticCode, message: string, line: number): void {
    this.diagnostics.push(diag(severity, code, message, {path: this.path, line}))
  }

  /**
   * The translated text, in pieces of whole lines, translated as they are asked for: the input
   * and the output are each one reused buffer, never the whole text.
   */
  *translate(pieces: Iterable<Buffer>): Generator<string> {
    const {out} = this
    let idx = 0
    for (const piece of pieces) {
      this.src = piece
      for (let pos = 0; pos < piece.length; idx++) {
        const nl = piece.indexOf(10, pos)
        const next = nl < 0 ? piece.length : nl + 1
        let end = nl < 0 ? piece.length : nl
        if (end > pos && piece[end - 1] === 13) end--
        this.line(pos, end, idx)
        out.byte(10)
        pos = next
        if (out.at >= PIECE_BYTES && this.tableKnown()) yield this.piece()
      }
    }
    this.finish()
    yield this.piece()
  }

  /**
   * Whether the table of the block being read can be told now: its built-in chains are all seen
   * (a listing lists them first) or it has enough rules to tell by.
   */
  private tableKnown(): boolean {
    const b = this.block
    return (
      b === null ||
      b.rules.length >= EVIDENCE_RULES ||
      (b.builtins.size > 0 && b.names.size > b.builtins.size)
    )
  }

  /** The text translated since the last piece; the tables of the blocks begun in it are decided. */
  private piece(): string {
    for (let i = this.listedTables.length; i < this.blocks.length; i++) {
      const block = this.blocks[i]!
      const {table, why} = inferTable(block)
      block.table = table
      block.why = why
      this.listedTables.push({line: block.line, table})
    }
    const text = decodeText(this.out.buf.subarray(0, this.out.at))
    this.out.at = 0
    return text
  }

  /** Writes the iptables-save line for src[pos, end), line `idx` (0-based); nothing for a blank one. */
  private line(pos: number, end: number, idx: number): void {
    const {src} = this
    while (pos < end && src[pos] === 32) pos++
    if (pos >= end) return
    const c = src[pos]!
    // Rule lines start with a digit (counters, --line-numbers) or a target; headers and titles with these words.
    if (c === 67 /* C */ && this.startsAt(pos, end, 'Chain ')) return this.chainLine(pos, end, idx)
    if (
      this.startsAt(pos, end, 'target ') ||
      this.startsAt(pos, end, 'pkts ') ||
      this.startsAt(pos, end, 'num ')
    )
      return this.header(pos, end)
    if (this.chain === null || !this.sawHeader) {
      this.bad(pos, end, idx, 'no "Chain" line and column titles before it')
      return
    }
    this.rule(pos, end, idx)
  }

  private startsAt(pos: number, end: number, text: string): boolean {
    if (end - pos < text.length) return false
    for (let i = 0; i < text.length; i++) if (this.src[pos + i] !== text.charCodeAt(i)) return false
    return true
  }

  /** `Chain NAME (policy ACCEPT[ 0 packets, 0 bytes])` or `Chain NAME (N references)`. */
  private chainLine(pos: number, end: number, idx: number): void {
    const w = this.words.split(this.src, pos, end, 4)
    if (w.count < 3) return this.bad(pos, end, idx, 'a chain title without a name')
    const name = w.text(1)
    const builtin = w.is(2, '(policy')
    // A chain listed again starts the next listing (`iptables -t nat -L; iptables -L`).
    if (this.block === null || this.block.names.has(name)) {
      this.block = {line: idx, names: new Set(), builtins: new Set(), rules: []}
      this.blocks.push(this.block)
    }
    this.block.names.add(name)
    if (builtin) this.block.builtins.add(name)
    this.chain = name
    this.chainLength = w.length(1)
    if (this.chainLength > this.chainBytes.length)
      this.chainBytes = Buffer.allocUnsafeSlow(this.chainLength)
    this.src.copy(this.chainBytes, 0, w.start[1], w.end[1])
    this.sawHeader = false
    const {out} = this
    out.byte(58 /* : */)
    out.copy(this.chainBytes, 0, this.chainLength)
    if (builtin && w.count > 3) {
      out.byte(32)
      // `ACCEPT)` without -v, `ACCEPT` before the counters with it.
      let to = w.end[3]!
      if (this.src[to - 1] === 41 /* ) */) to--
      out.copy(this.src, w.start[3]!, to)
      out.ascii(' [0:0]')
    } else out.ascii(' - [0:0]')
  }

  private header(pos: number, end: number): void {
    this.sawHeader = true
    const w = this.words.split(this.src, pos, end)
    this.columns = {num: w.is(0, 'num'), counters: false, interfaces: false}
    for (let k = 0; k < w.count; k++) {
      if (w.is(k, 'pkts')) this.columns.counters = true
      if (w.is(k, 'in')) this.columns.interfaces = true
    }
  }

  private rule(pos: number, end: number, idx: number): void {
    const {src, out} = this
    const {num, counters, interfaces} = this.columns
    const lead = (num ? 1 : 0) + (counters ? 2 : 0)
    // target prot opt [in out] source destination; the target column is blank for a rule without one.
    const wanted = lead + 5 + (interfaces ? 2 : 0)
    const w = this.words.split(src, pos, end, wanted)
    if (w.count < lead + 2) return this.bad(pos, end, idx, 'too few columns')
    let k = lead
    let targetFrom = 0
    let targetTo = 0
    if (!isOptWord(w, k + 1)) {
      targetFrom = w.start[k]!
      targetTo = w.end[k]!
      k++
    }
    // Without a target the words end a column sooner (the last one split is match text).
    if (w.count < wanted - (targetTo > targetFrom ? 0 : 1))
      return this.bad(pos, end, idx, 'too few columns')
    const prot = k++
    if (!isOptWord(w, k++)) return this.bad(pos, end, idx, 'no opt column (--)')
    const inIf = interfaces ? k++ : -1
    const outIf = interfaces ? k++ : -1
    const source = k++
    const destination = k++
    out.ascii('-A ')
    out.copy(this.chainBytes, 0, this.chainLength)
    this.address(' -s ', source, idx)
    this.address(' -d ', destination, idx)
    if (inIf >= 0) this.iface(' -i ', inIf)
    if (outIf >= 0) this.iface(' -o ', outIf)
    else if (this.noInterfacesLine === 0) this.noInterfacesLine = idx + 1
    this.protocol(w, prot)
    let target = ''
    if (targetTo > targetFrom)
      for (const t of TARGETS_WITH_OPTIONS) if (w.is(prot - 1, t)) target = t
    const matchFrom = w.end[destination]!
    const chain = this.chain!
    const m = translateMatchText(src, matchFrom, end, target, targetFrom, targetTo, out)
    if (m.namedPort) this.noteName(idx, 'a port name')
    if (m.unknown !== '') {
      const inKube =
        chain.startsWith(KUBE_CHAIN_PREFIX) ||
        (targetTo > targetFrom && this.startsAt(targetFrom, targetTo, KUBE_CHAIN_PREFIX))
      this.note(
        inKube ? 'error' : 'warning',
        'IPT_LIST_UNKNOWN_MATCH',
        `cannot translate "${m.unknown.length > 80 ? `${m.unknown.slice(0, 80)}…` : m.unknown}" of this rule in ${chain}; it is read without it${inKube ? ', so what kp says of it may be wrong' : ''}`,
        idx + 1,
      )
    }
    const block = this.block!
    if (block.rules.length < EVIDENCE_RULES)
      block.rules.push({
        target: targetTo > targetFrom ? src.toString('utf8', targetFrom, targetTo) : null,
        chain,
        line: idx + 1,
      })
  }

  /** ` -s X` for a source or destination column; nothing for any address. */
  private address(option: string, k: number, idx: number): void {
    const w = this.words
    if (isAnyAddress(w, k)) return
    let from = w.start[k]!
    const to = w.end[k]!
    if (this.src[from] === 33 /* ! */) {
      from++
      this.out.ascii(' !')
    }
    if (!isNumericAddress(this.src, from, to))
      this.noteName(idx, `"${this.src.toString('utf8', from, to)}"`)
    this.out.ascii(option)
    this.out.copy(this.src, from, to)
  }

  private iface(option: string, k: number): void {
    const w = this.words
    if (w.is(k, '*')) return
    let from = w.start[k]!
    if (this.src[from] === 33 /* ! */) {
      from++
      this.out.ascii(' !')
    }
    this.out.ascii(option)
    this.out.copy(this.src, from, w.end[k]!)
  }

  private protocol(w: LineWords, k: number): void {
    let from = w.start[k]!
    const to = w.end[k]!
    const negated = this.src[from] === 33
    if (negated) from++
    // The common ones compared in place; any other is looked up as text.
    const first = this.src[from]
    let name: string | undefined
    if (to - from === 1 && first === 48 /* 0 */) return
    if (to - from === 1 && first === 54 /* 6 */) name = 'tcp'
    else if (to - from === 2 && first === 49 /* 1 */ && this.src[from + 1] === 55 /* 7 */)
      name = 'udp'
    else {
      const word = this.src.toString('latin1', from, to)
      name = PROTOCOL_NUMBERS[word] ?? word
    }
    if (name === '') return
    this.out.ascii(negated ? ' ! -p ' : ' -p ')
    this.out.ascii(name)
  }

  private noteName(idx: number, what: string): void {
    if (this.names++ === 0) {
      this.namesLine = idx + 1
      this.namesExample = what
    }
  }

  private bad(pos: number, end: number, idx: number, why: string): void {
    // As the iptables reader does: the first ones listed, the rest counted (a binary file must not flood stderr).
    if (++this.badLines > MAX_SYNTAX_DIAGNOSTICS) {
      if (this.badLines === MAX_SYNTAX_DIAGNOSTICS + 1) this.firstUnlistedBad = idx + 1
      return
    }
    this.note(
      'error',
      'IPT_SYNTAX',
      `not a line of an iptables -L listing (${why}): ${this.src.toString('utf8', pos, Math.min(end, pos + 80))}`,
      idx + 1,
    )
  }

  private finish(): void {
    if (this.badLines > MAX_SYNTAX_DIAGNOSTICS)
      this.note(
        'error',
        'IPT_SYNTAX',
        `${this.badLines - MAX_SYNTAX_DIAGNOSTICS} more lines that are not listing lines from here on, not listed`,
        this.firstUnlistedBad,
      )
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
        'listed without -v: in/out interfaces are not shown, so what they tell (the local-traffic detector, masquerade-all) is unknown; list with -v',
        this.noInterfacesLine,
      )
    for (const block of this.blocks) {
      const {table, why} = block.table ? {table: block.table, why: block.why} : inferTable(block)
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
  const bytes = src.bytes ?? memoryBytes(Buffer.from(src.text, 'utf8'))
  const {ruleset, diagnostics} = parseIptablesText(
    t.translate(bytePieces(bytes)),
    src.path,
    undefined,
    {
      listedTables: t.listedTables,
    },
  )
  if (t.interfacesHidden) ruleset.interfacesHidden = true
  return {
    // The data is an iptables ruleset like iptables-save's: the iptables and IPVS builders read it so.
    format: 'iptables-save',
    source: {path: src.path, format: 'iptables-list', tool: src.tool ?? null},
    data: ruleset,
    diagnostics: [...t.diagnostics, ...diagnostics],
  }
}
