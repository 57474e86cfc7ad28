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
 *
 * This file reads the lines and the block form; the transaction form is in parse-commands.ts,
 * the objects both describe in parse-objects.ts, the word-level helpers in parse-words.ts.
 */
import type {Diagnostic} from '../../model/types.js'
import type {ParsedSource, SourceText} from '../types.js'
import {
  NFT_FAMILIES,
  getOrAddTable,
  unquote,
  type NftChain,
  type NftDocument,
  type NftRule,
  type NftSet,
  type NftTable,
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
import {NftCommandReader} from './parse-commands.js'
import {MAX_UNKNOWN_REPORTS, SKIPPED_TABLE_OBJECTS} from './parse-objects.js'
import {lineAt, splitStatements, toRule, type WordLines} from './parse-words.js'

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

const COMMANDS = new Set(['add', 'create', 'insert', 'replace', 'delete', 'destroy', 'flush'])

/**
 * The block form, line by line, on top of the transaction form (NftCommandReader) and the
 * objects both describe (NftObjectReader).
 */
class TextReader extends NftCommandReader {
  private readonly stack: Context[] = [{kind: 'top'}]
  private pending: Pending | null = null
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
    path: string,
    private readonly wordByWord = false,
  ) {
    super(path)
  }

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
      // nft and knftables end every line with a newline: a last line without one was cut in the
      // middle (`tcp dport 4` of `tcp dport 443`), so it is not read. One that ends with `}` lost
      // only the newline: a cut inside its braces leaves them open (finish reports that).
      if (last && end === n && !isBlankLine(text, start, end) && !endsWithBrace(text, start, end)) {
        this.report(
          'error',
          'NFT_TRUNCATED',
          `the input ends in the middle of line ${lineNo} (no newline after it): it is cut off, so that line was not read and what followed it is missing (if only the final newline was lost, add it)`,
          lineNo,
        )
        break
      }
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
      return (
        first === 'chain' || first === 'set' || first === 'map' || SKIPPED_TABLE_OBJECTS.has(first)
      )
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
    this.skippedObject(words, `${ctx.table.family} ${ctx.table.name}`, lineNo)
    this.stack.push({kind: 'skip', what: first, line: lineNo, depth: 1})
  }

  private openChain(table: NftTable, name: string, lineNo: number): void {
    this.stack.push({kind: 'chain', table, chain: this.chainOf(table, name, lineNo), line: lineNo})
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
      // `counter NAME { packets 0 bytes 0 }` on one line.
      else if (SKIPPED_TABLE_OBJECTS.has(words[0]!) && words.includes('{'))
        this.skippedObject(words, `${ctx.table.family} ${ctx.table.name}`, line)
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

/** Whether the line text[start, end) ends with `}` (before blanks). */
function endsWithBrace(text: string, start: number, end: number): boolean {
  return text.slice(start, end).trimEnd().endsWith('}')
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
