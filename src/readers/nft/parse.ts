/**
 * Stage 1 for nft text: `nft list ruleset` / `nft list table ...` (nested blocks, tabs or
 * spaces, `-a` handle comments, named priorities, element lists over several lines) and the
 * transaction form `add table|chain|set|map|rule|element ...` that kube-proxy feeds to
 * `nft -f` and that knftables' Fake.Dump() prints (fixtures/nft/upstream-*\/input.nft).
 * Both may be mixed in one file, as `nft -f` allows.
 *
 * One pass over the lines. A statement whose braces are not balanced at the end of its line
 * (an `elements = {` list, a multi-line vmap) is carried over to the following lines.
 *
 * Truncated input (a block or statement still open at the end) keeps everything that was
 * complete and reports NFT_TRUNCATED as an error: the services in the missing part are
 * unknown, so the answer cannot be trusted (src/errors.ts EXIT, exit 3).
 */
import type {Diagnostic} from '../../model/types.js'
import type {ParsedSource, SourceText} from '../types.js'
import {
  NFT_FAMILIES,
  NftChain,
  emptyDocument,
  getOrAddTable,
  parseNftDuration,
  resolvePriority,
  unquote,
  type NftDocument,
  type NftElement,
  type NftRule,
  type NftSet,
  type NftTable,
  type CompactRules,
} from './ir.js'
import {indexAtOrBefore, withoutByteOrderMark} from '../../core/text.js'
import {textPieces} from '../bytes.js'
import {
  LINE_BLANK,
  LINE_CLOSE,
  LINE_RULE,
  WordCache,
  chainHeaderName,
  isBlankLine,
  lineShape,
  tokenizeRange,
  type LineTokens,
} from './tokenize.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

/** More "not understood" lines than this are summarised in one diagnostic. */
const MAX_UNKNOWN_REPORTS = 20

type Context =
  | {kind: 'top'}
  | {kind: 'table'; table: NftTable; line: number}
  | {kind: 'chain'; table: NftTable; chain: NftChain; line: number}
  | {kind: 'set'; table: NftTable; set: NftSet; line: number}
  | {kind: 'skip'; what: string; line: number; depth: number}

interface Pending {
  words: string[]
  lines: number[]
  depth: number
}

/** The line of each word of a statement: one number when it is on one line (the common case). */
type WordLines = number[] | number

function lineAt(lines: WordLines, k: number): number {
  return typeof lines === 'number' ? lines : lines[Math.min(k, lines.length - 1)]!
}

const COMMANDS = new Set(['add', 'create', 'insert', 'replace', 'delete', 'destroy', 'flush'])
const TABLE_BLOCKS = new Set([
  'flowtable',
  'counter',
  'quota',
  'ct',
  'limit',
  'secmark',
  'synproxy',
  'tunnel',
])

class TextReader implements CompactRules {
  readonly doc: NftDocument = emptyDocument()
  readonly diagnostics: Diagnostic[] = []
  private readonly stack: Context[] = [{kind: 'top'}]
  private pending: Pending | null = null
  private unknownCount = 0
  private readonly words = new WordCache()
  /**
   * The text, as the pieces of whole lines it was read in (a file is decoded a piece at a time,
   * never into one buffer and one string: src/readers/bytes.ts textPieces), and where each
   * starts in the whole: a compact rule is kept as its line's offset in the whole.
   */
  private readonly pieces: string[] = []
  private readonly pieceStarts: number[] = []
  /** The piece ruleAt found last: rules are mostly asked for in the order of their lines. */
  private lastPiece = 0

  /**
   * `wordByWord`: every line through tokenizeRange and readLine, none kept as a compact rule or
   * taken as a chain's first or last line by its shape: for the tests that check the shortcuts
   * give the same document (test/readers/nft/compact-rules.test.ts).
   */
  constructor(
    private readonly path: string,
    private readonly wordByWord = false,
  ) {}

  /** Every line, once. Returns the number of lines. */
  readAll(text: string | Iterable<string>): number {
    const pieces = (typeof text === 'string' ? [text] : text)[Symbol.iterator]()
    let lineNo = 0
    let base = 0
    let next = pieces.next()
    while (next.done !== true) {
      // The first piece without a byte order mark (withoutByteOrderMark, as a whole text has it).
      const piece = this.pieces.length === 0 ? withoutByteOrderMark(next.value) : next.value
      this.pieces.push(piece)
      this.pieceStarts.push(base)
      const following = pieces.next()
      lineNo = this.readPiece(piece, base, lineNo, following.done === true)
      base += piece.length
      next = following
    }
    return lineNo
  }

  /**
   * The lines of one piece. Every piece but the last ends with a newline; the last also holds
   * what follows the last newline, counted as a line even when empty (as a whole text's is).
   */
  private readPiece(text: string, base: number, lineNo: number, last: boolean): number {
    const n = text.length
    let start = 0
    while (last ? start <= n : start < n) {
      let end = text.indexOf('\n', start)
      if (end < 0) end = n
      lineNo++
      // Most lines of a large dump are the rules of its chains: those are kept as positions
      // and read when the rules are used (NftChain.rules), so reading the dump makes no words
      // for them (ir.ts CompactRules).
      // The lines that open and close a chain (one each per chain) are taken by their shape too.
      const ctx = this.top
      if (this.pending === null && ctx.kind === 'chain' && !this.wordByWord) {
        const shape = lineShape(text, start, end)
        if (shape === LINE_RULE) ctx.chain.addCompactRule(base + start, lineNo)
        else if (shape === LINE_CLOSE) this.closeBlock()
        else if (shape !== LINE_BLANK)
          this.readLine(tokenizeRange(text, start, end, this.words), lineNo)
      } else if (!isBlankLine(text, start, end)) {
        const name =
          this.pending === null && ctx.kind === 'table' && !this.wordByWord
            ? chainHeaderName(text, start, end)
            : null
        if (name !== null && ctx.kind === 'table') this.openChain(ctx.table, name, lineNo)
        else this.readLine(tokenizeRange(text, start, end, this.words), lineNo)
      }
      start = end + 1
      if (end === n) break
    }
    return lineNo
  }

  /** The rule on the line that starts at `offset` of the whole text (the reader keeps only that: readAll). */
  ruleAt(offset: number | string, line: number): NftRule {
    if (typeof offset !== 'number') throw new Error('the text reader keeps rules as line offsets')
    const starts = this.pieceStarts
    let k = this.lastPiece
    if (!(starts[k]! <= offset && (k + 1 === starts.length || offset < starts[k + 1]!))) {
      k = indexAtOrBefore(starts, offset)
      this.lastPiece = k
    }
    const text = this.pieces[k]!
    const from = offset - starts[k]!
    let end = text.indexOf('\n', from)
    if (end < 0) end = text.length
    return toRule(tokenizeRange(text, from, end, this.words).words, line)
  }

  private report(
    severity: Diagnostic['severity'],
    code: DiagnosticCode,
    message: string,
    line: number,
  ): void {
    this.diagnostics.push({severity, code, message, source: {path: this.path, line}})
  }

  private notUnderstood(words: string[], line: number, where: string): void {
    this.unknownCount++
    if (this.unknownCount <= MAX_UNKNOWN_REPORTS) {
      const shown = words.join(' ')
      this.report(
        'warning',
        'NFT_UNKNOWN_STATEMENT',
        `not understood ${where}: ${shown.length > 120 ? shown.slice(0, 120) + '...' : shown}`,
        line,
      )
    }
  }

  private get top(): Context {
    return this.stack[this.stack.length - 1]!
  }

  readLine({words, unterminatedQuote}: LineTokens, lineNo: number): void {
    if (unterminatedQuote)
      this.report(
        'warning',
        'NFT_UNTERMINATED_STRING',
        'a quoted string is not closed on this line; it was read to the end of the line',
        lineNo,
      )
    if (words.length === 0) return
    const ctx = this.top
    if (ctx.kind === 'skip') {
      for (const w of words) {
        if (w === '{') ctx.depth++
        else if (w === '}') ctx.depth--
      }
      if (ctx.depth <= 0) this.closeBlock()
      return
    }
    if (this.pending) {
      this.append(this.pending, words, lineNo)
      if (this.pending.depth <= 0) {
        const p = this.pending
        this.pending = null
        this.statement(p.words, p.lines)
      }
      return
    }
    // A line that closes the current block.
    if (words[0] === '}' && ctx.kind !== 'top') {
      this.closeBlock()
      if (words.length > 1) this.readWords(words.slice(1), lineNo)
      return
    }
    this.readWords(words, lineNo)
  }

  private readWords(line: string[], lineNo: number): void {
    // Leading `}`s close blocks one by one: a loop, not a call (and a copy of the rest) per `}`,
    // which overflowed the stack on a line of 30,000 of them.
    let from = 0
    while (line[from] === '}') {
      if (this.top.kind === 'top')
        this.report('warning', 'NFT_UNBALANCED_BRACE', 'a `}` that closes nothing', lineNo)
      else this.closeBlock()
      from++
    }
    if (from === line.length) return
    const words = from === 0 ? line : line.slice(from)
    const last = words[words.length - 1]
    const opensBlock = last === '{' && this.isBlockOpener(words)
    if (opensBlock) {
      this.openBlock(words, lineNo)
      return
    }
    let depth = 0
    for (const w of words) {
      if (w === '{') depth++
      else if (w === '}') depth--
    }
    if (depth > 0) {
      const p: Pending = {words: [], lines: [], depth: 0}
      this.append(p, words, lineNo)
      this.pending = p
    } else {
      this.statement(words, lineNo)
    }
  }

  private closeBlock(): void {
    const ctx = this.stack.pop()
    if (ctx?.kind === 'chain') ctx.chain.compact()
  }

  private append(p: Pending, words: string[], lineNo: number): void {
    for (const w of words) {
      if (w === '{') p.depth++
      else if (w === '}') p.depth--
      p.words.push(w)
      p.lines.push(lineNo)
    }
  }

  private isBlockOpener(words: string[]): boolean {
    const ctx = this.top
    const first = words[0]!
    if (ctx.kind === 'top') return first === 'table'
    if (ctx.kind === 'table')
      return first === 'chain' || first === 'set' || first === 'map' || TABLE_BLOCKS.has(first)
    return false
  }

  private openBlock(words: string[], lineNo: number): void {
    const ctx = this.top
    const first = words[0]!
    if (ctx.kind === 'top') {
      // table [FAMILY] NAME {
      const spec = words.slice(1, -1)
      const family = spec.length >= 2 && NFT_FAMILIES.has(spec[0]!) ? spec[0]! : 'ip'
      const name = spec.length >= 2 ? spec[1] : spec[0]
      if (!name || spec.length > 2) {
        this.report('warning', 'NFT_SYNTAX', `malformed table header: ${words.join(' ')}`, lineNo)
        this.stack.push({kind: 'skip', what: 'table', line: lineNo, depth: 1})
        return
      }
      this.stack.push({
        kind: 'table',
        table: getOrAddTable(this.doc, family, name, lineNo),
        line: lineNo,
      })
      return
    }
    if (ctx.kind !== 'table') return
    const name = words[1]
    if (
      (first === 'chain' || first === 'set' || first === 'map') &&
      name !== undefined &&
      words.length === 3
    ) {
      if (first === 'chain') {
        this.openChain(ctx.table, name, lineNo)
      } else {
        this.stack.push({
          kind: 'set',
          table: ctx.table,
          set: this.setOf(ctx.table, first, name, lineNo),
          line: lineNo,
        })
      }
      return
    }
    this.report(
      'info',
      'NFT_SKIPPED_OBJECT',
      `${words.slice(0, -1).join(' ')} in table ${ctx.table.family} ${ctx.table.name} is not used by kp and was skipped`,
      lineNo,
    )
    this.stack.push({kind: 'skip', what: first, line: lineNo, depth: 1})
  }

  private openChain(table: NftTable, name: string, lineNo: number): void {
    this.stack.push({kind: 'chain', table, chain: this.chainOf(table, name, lineNo), line: lineNo})
  }

  private chainOf(table: NftTable, name: string, line: number): NftChain {
    let chain = table.chains.get(name)
    if (!chain) {
      chain = new NftChain(name, line, this)
      table.chains.set(name, chain)
    }
    return chain
  }

  private setOf(table: NftTable, kind: 'set' | 'map', name: string, line: number): NftSet {
    let set = table.sets.get(name)
    if (!set) {
      set = {
        kind,
        name,
        line,
        type: '',
        flags: [],
        timeoutSeconds: null,
        comment: null,
        elements: [],
      }
      table.sets.set(name, set)
    }
    return set
  }

  /** One complete statement (braces balanced) in the current context. */
  private statement(words: string[], lines: WordLines): void {
    const ctx = this.top
    const line = lineAt(lines, 0)
    if (ctx.kind === 'top') {
      if (COMMANDS.has(words[0]!)) this.command(words, lines)
      else this.notUnderstood(words, line, 'at the top level')
      return
    }
    if (ctx.kind === 'table') {
      if (words[0] === 'comment' && words.length >= 2) ctx.table.comment = unquote(words[1]!)
      else if (words[0] === 'flags') return
      else this.notUnderstood(words, line, `in table ${ctx.table.family} ${ctx.table.name}`)
      return
    }
    if (ctx.kind === 'chain') {
      for (const part of splitStatements(words, lines)) {
        if (!this.chainProperty(ctx.chain, part.words, lineAt(part.lines, 0)))
          this.addRule(ctx.chain, part.words, lineAt(part.lines, 0), false)
      }
      return
    }
    if (ctx.kind === 'set') {
      for (const part of splitStatements(words, lines)) {
        if (!this.setProperty(ctx.set, part.words, part.lines))
          this.notUnderstood(
            part.words,
            lineAt(part.lines, 0),
            `in ${ctx.set.kind} ${ctx.set.name}`,
          )
      }
    }
  }

  /** `type filter hook input priority filter`, `policy accept`, `comment "..."`, `devices = {...}`. */
  private chainProperty(chain: NftChain, words: string[], line: number): boolean {
    const first = words[0]
    if (first === 'type' && words[2] === 'hook') {
      const prio = words.indexOf('priority')
      const priorityText = prio >= 0 ? words.slice(prio + 1).join(' ') : ''
      const hook = words[3] ?? ''
      chain.hook = {
        type: words[1]!,
        hook,
        priority: resolvePriority(priorityText),
        priorityText,
        policy: chain.hook?.policy ?? null,
      }
      if (prio < 0 || chain.hook.priority === null)
        this.report(
          'warning',
          'NFT_SYNTAX',
          `chain ${chain.name}: cannot read the priority "${priorityText}"`,
          line,
        )
      return true
    }
    if (first === 'policy' && words.length === 2) {
      if (chain.hook) chain.hook.policy = words[1]!
      return true
    }
    if (first === 'comment' && words.length === 2) {
      chain.comment = unquote(words[1]!)
      return true
    }
    if (first === 'devices' || first === 'device') return true
    return false
  }

  private setProperty(set: NftSet, words: string[], lines: WordLines): boolean {
    const first = words[0]
    if (first === 'type' || first === 'typeof') {
      set.type = words.slice(1).join(' ')
      return true
    }
    if (first === 'flags') {
      set.flags = words
        .slice(1)
        .join('')
        .split(',')
        .filter((f) => f !== '')
      return true
    }
    if (first === 'timeout' && words.length === 2) {
      set.timeoutSeconds = parseNftDuration(words[1]!)
      if (set.timeoutSeconds === null)
        this.report(
          'warning',
          'NFT_SYNTAX',
          `${set.kind} ${set.name}: cannot read the timeout "${words[1]}"`,
          lineAt(lines, 0),
        )
      return true
    }
    if (first === 'comment' && words.length === 2) {
      set.comment = unquote(words[1]!)
      return true
    }
    if (first === 'elements' && words[1] === '=' && words[2] === '{') {
      this.addElements(set, words, lines, 2)
      return true
    }
    return (
      first === 'size' ||
      first === 'gc-interval' ||
      first === 'policy' ||
      first === 'auto-merge' ||
      first === 'counter'
    )
  }

  private addRule(chain: NftChain, words: string[], line: number, atStart: boolean): void {
    chain.addRule(toRule(words, line), atStart)
  }

  /** Elements between the `{` at words[open] and its matching `}`. */
  private addElements(set: NftSet, words: string[], lines: WordLines, open: number): void {
    const close = matchingBrace(words, open)
    for (const el of splitElements(
      words,
      lines,
      open + 1,
      close < 0 ? words.length : close,
      set.kind === 'map',
    ))
      set.elements.push(el)
  }

  // ---- transaction form ------------------------------------------------------------------

  private command(words: string[], lines: WordLines): void {
    const line = lineAt(lines, 0)
    const verb = words[0]!
    const object = words[1]
    if (object === 'ruleset') {
      if (verb === 'flush') this.doc.tables.clear()
      else this.notUnderstood(words, line, 'as a command')
      return
    }
    let i = 2
    let family = 'ip'
    if (
      words[i] !== undefined &&
      NFT_FAMILIES.has(words[i]!) &&
      words[i + 1] !== undefined &&
      words[i + 1] !== '{'
    ) {
      family = words[i]!
      i++
    }
    const tableName = words[i]
    if (tableName === undefined || tableName === '{') {
      this.report('warning', 'NFT_SYNTAX', `incomplete command: ${words.join(' ')}`, line)
      return
    }
    i++
    if (object === 'table') {
      if (verb === 'delete' || verb === 'destroy') {
        this.doc.tables.delete(`${family} ${tableName}`)
        return
      }
      const table = getOrAddTable(this.doc, family, tableName, line)
      if (verb === 'flush') {
        for (const c of table.chains.values()) c.clearRules()
        for (const s of table.sets.values()) s.elements = []
        return
      }
      for (const part of blockStatements(words, lines, i)) {
        if (part.words[0] === 'comment' && part.words.length === 2)
          table.comment = unquote(part.words[1]!)
        else if (part.words[0] !== 'flags')
          this.notUnderstood(part.words, lineAt(part.lines, 0), `in table ${family} ${tableName}`)
      }
      return
    }
    const objectName = words[i]
    if (objectName === undefined || objectName === '{') {
      this.report('warning', 'NFT_SYNTAX', `incomplete command: ${words.join(' ')}`, line)
      return
    }
    i++
    const existing = this.doc.tables.get(`${family} ${tableName}`)
    if ((verb === 'delete' || verb === 'destroy') && !existing) return
    const table = existing ?? getOrAddTable(this.doc, family, tableName, line)
    if (!existing)
      this.report(
        'info',
        'NFT_UNDECLARED',
        `table ${family} ${tableName} is used before it is added; taken as declared here`,
        line,
      )
    switch (object) {
      case 'chain':
        return this.chainCommand(verb, table, objectName, words, lines, i)
      case 'set':
      case 'map':
        return this.setCommand(verb, object, table, objectName, words, lines, i)
      case 'rule':
        return this.ruleCommand(verb, table, objectName, words, lines, i)
      case 'element':
        return this.elementCommand(verb, table, objectName, words, lines, i)
      default:
        this.notUnderstood(words, line, 'as a command')
    }
  }

  private chainCommand(
    verb: string,
    table: NftTable,
    name: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    if (verb === 'delete' || verb === 'destroy') {
      table.chains.delete(name)
      return
    }
    const chain = this.chainOf(table, name, lineAt(lines, 0))
    if (verb === 'flush') {
      chain.clearRules()
      return
    }
    for (const part of blockStatements(words, lines, i)) {
      if (!this.chainProperty(chain, part.words, lineAt(part.lines, 0)))
        this.notUnderstood(part.words, lineAt(part.lines, 0), `in chain ${name}`)
    }
  }

  private setCommand(
    verb: string,
    kind: 'set' | 'map',
    table: NftTable,
    name: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    if (verb === 'delete' || verb === 'destroy') {
      table.sets.delete(name)
      return
    }
    const set = this.setOf(table, kind, name, lineAt(lines, 0))
    if (verb === 'flush') {
      set.elements = []
      return
    }
    for (const part of blockStatements(words, lines, i)) {
      if (!this.setProperty(set, part.words, part.lines))
        this.notUnderstood(part.words, lineAt(part.lines, 0), `in ${kind} ${name}`)
    }
  }

  private ruleCommand(
    verb: string,
    table: NftTable,
    chainName: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    const line = lineAt(lines, 0)
    if (verb === 'delete' || verb === 'destroy' || verb === 'replace') {
      // Rules are addressed by kernel handle here, which a saved transaction cannot resolve.
      this.report(
        'warning',
        'NFT_UNSUPPORTED',
        `\`${verb} rule\` addresses a rule by its handle, which kp cannot resolve from text; ignored`,
        line,
      )
      return
    }
    let chain = table.chains.get(chainName)
    if (!chain) {
      this.report(
        'info',
        'NFT_UNDECLARED',
        `chain ${chainName} gets a rule before it is added; taken as declared here`,
        line,
      )
      chain = this.chainOf(table, chainName, line)
    }
    const atStart = verb === 'insert'
    const position = words[i]
    if (
      (position === 'position' || position === 'handle' || position === 'index') &&
      words[i + 1] !== undefined
    ) {
      this.report(
        'info',
        'NFT_UNSUPPORTED',
        `\`${verb} rule ... ${position} ${words[i + 1]}\`: the position cannot be resolved from text; the rule is ${atStart ? 'put first' : 'appended'}`,
        line,
      )
      i += 2
    }
    if (i >= words.length) {
      this.report('warning', 'NFT_SYNTAX', `empty rule for chain ${chainName}`, line)
      return
    }
    this.addRule(chain, words.slice(i), lineAt(lines, i), atStart)
  }

  private elementCommand(
    verb: string,
    table: NftTable,
    setName: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    const line = lineAt(lines, 0)
    if (words[i] !== '{') {
      this.report(
        'warning',
        'NFT_SYNTAX',
        `element command without { ... }: ${words.join(' ')}`,
        line,
      )
      return
    }
    let set = table.sets.get(setName)
    if (verb === 'delete' || verb === 'destroy') {
      if (!set) return
      const close = matchingBrace(words, i)
      const gone = new Set(
        splitElements(words, lines, i + 1, close < 0 ? words.length : close, false).map((e) =>
          e.key.join(' . '),
        ),
      )
      set.elements = set.elements.filter((e) => !gone.has(e.key.join(' . ')))
      return
    }
    if (!set) {
      this.report(
        'info',
        'NFT_UNDECLARED',
        `set ${setName} gets elements before it is added; taken as declared here`,
        line,
      )
      set = this.setOf(table, 'set', setName, line)
    }
    const close = matchingBrace(words, i)
    const elements = splitElements(words, lines, i + 1, close < 0 ? words.length : close, true)
    // A set first seen through its elements: mapped values make it a map.
    if (set.type === '' && elements.some((e) => e.value !== null)) set.kind = 'map'
    for (const el of elements) set.elements.push(el)
  }

  finish(lineCount: number): void {
    if (this.pending) {
      this.report(
        'error',
        'NFT_TRUNCATED',
        `the input ends inside a statement that starts here (a \`{\` is not closed); it was dropped, and the input looks truncated`,
        this.pending.lines[0]!,
      )
      this.pending = null
    }
    for (let k = this.stack.length - 1; k > 0; k--) {
      const ctx = this.stack[k]!
      const what =
        ctx.kind === 'table'
          ? `table ${ctx.table.family} ${ctx.table.name}`
          : ctx.kind === 'chain'
            ? `chain ${ctx.chain.name}`
            : ctx.kind === 'set'
              ? `${ctx.set.kind} ${ctx.set.name}`
              : ctx.kind === 'skip'
                ? ctx.what
                : ''
      const opened = ctx.kind === 'top' ? 1 : ctx.line
      this.report(
        'error',
        'NFT_TRUNCATED',
        `the input ends inside ${what} (opened at line ${opened}); what was complete is kept, but the rest of the ruleset is missing`,
        lineCount,
      )
    }
    if (this.unknownCount > MAX_UNKNOWN_REPORTS) {
      this.report(
        'warning',
        'NFT_UNKNOWN_STATEMENT',
        `${this.unknownCount - MAX_UNKNOWN_REPORTS} more statements were not understood (only the first ${MAX_UNKNOWN_REPORTS} are listed)`,
        lineCount,
      )
    }
  }
}

/** Index of the `}` that closes the `{` at `open`, or -1. */
function matchingBrace(words: string[], open: number): number {
  let depth = 0
  for (let k = open; k < words.length; k++) {
    if (words[k] === '{') depth++
    else if (words[k] === '}' && --depth === 0) return k
  }
  return -1
}

interface Part {
  words: string[]
  lines: WordLines
}

/** Splits at top-level `;` (`type nat hook output priority -100 ; policy accept ;`). */
function splitStatements(words: string[], lines: WordLines): Part[] {
  if (!words.includes(';')) return [{words, lines}]
  const out: Part[] = []
  let start = 0
  let depth = 0
  const cut = (end: number): void => {
    if (end > start)
      out.push({
        words: words.slice(start, end),
        lines: typeof lines === 'number' ? lines : lines.slice(start, end),
      })
  }
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!
    if (w === '{') depth++
    else if (w === '}') depth--
    else if (w === ';' && depth === 0) {
      cut(k)
      start = k + 1
    }
  }
  cut(words.length)
  return out
}

/** The `;`-separated statements of the `{ ... }` block that starts at words[i], if any. */
function blockStatements(words: string[], lines: WordLines, i: number): Part[] {
  if (words[i] !== '{') return []
  const close = matchingBrace(words, i)
  const end = close < 0 ? words.length : close
  return splitStatements(
    words.slice(i + 1, end),
    typeof lines === 'number' ? lines : lines.slice(i + 1, end),
  )
}

/** A rule's words without its trailing `comment "..."` (nft prints it last). */
function toRule(words: string[], line: number): NftRule {
  let end = words.length
  while (end > 0 && words[end - 1] === ';') end--
  let comment: string | null = null
  const c = end - 2
  if (c >= 0 && words[c] === 'comment' && words[c + 1]!.startsWith('"')) {
    comment = unquote(words[c + 1]!)
    end = c
  }
  return {tokens: end === words.length ? words : words.slice(0, end), comment, line}
}

const KEY_END = new Set([':', 'comment', 'timeout', 'expires', 'counter'])

/** Elements of `{ a . b : v , c . d : w }` between words[from] and words[to] (exclusive). */
function splitElements(
  words: string[],
  lines: WordLines,
  from: number,
  to: number,
  allowValue: boolean,
): NftElement[] {
  const out: NftElement[] = []
  let k = from
  while (k < to) {
    while (k < to && words[k] === ',') k++
    if (k >= to) break
    const line = lineAt(lines, k)
    const key: string[] = []
    let part = ''
    while (k < to && words[k] !== ',' && !KEY_END.has(words[k]!)) {
      const w = words[k]!
      if (w === '.') {
        key.push(part)
        part = ''
      } else {
        part = part === '' ? w : `${part} ${w}`
      }
      k++
    }
    key.push(part)
    let comment: string | null = null
    let value: string[] | null = null
    while (k < to && words[k] !== ',') {
      const w = words[k]!
      if (w === 'comment' && k + 1 < to) {
        comment = unquote(words[k + 1]!)
        k += 2
      } else if ((w === 'timeout' || w === 'expires') && k + 1 < to) {
        k += 2
      } else if (w === 'counter') {
        k++
        while (k < to && (words[k] === 'packets' || words[k] === 'bytes')) k += 2
      } else if (w === ':' && allowValue) {
        k++
        const v: string[] = []
        let depth = 0
        while (k < to && (depth > 0 || words[k] !== ',')) {
          const x = words[k]!
          if (x === '{') depth++
          else if (x === '}') depth--
          v.push(x)
          k++
        }
        value = v
      } else {
        k++
      }
    }
    out.push({key, value, comment, line})
  }
  return out
}

/** `text`: the whole text, or its pieces of whole lines in order (textPieces). */
export function parseNftText(
  text: string | Iterable<string>,
  path: string,
  {wordByWord = false}: {wordByWord?: boolean} = {},
): {doc: NftDocument; diagnostics: Diagnostic[]} {
  const reader = new TextReader(path, wordByWord)
  const lineCount = reader.readAll(text)
  reader.finish(Math.max(1, lineCount))
  return {doc: reader.doc, diagnostics: reader.diagnostics}
}

export function parse(src: SourceText): ParsedSource<NftDocument> {
  // A file is read in pieces, never into one buffer and one string (docs/performance.md).
  const {doc, diagnostics} = parseNftText(src.bytes ? textPieces(src.bytes) : src.text, src.path)
  return {
    format: 'nft',
    source: {path: src.path, format: 'nft', tool: src.tool ?? null},
    data: doc,
    diagnostics,
  }
}
