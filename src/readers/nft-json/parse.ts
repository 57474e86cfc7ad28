/**
 * Stage 1 for `nft -j list ruleset|table ...`: JSON.parse of each entry of the `nftables` array
 * in turn (readByEntry; the whole document at once when it is not plainly that shape), in one
 * walk into the same intermediate representation as the text reader
 * (src/readers/nft/ir.ts). Rule expressions are rendered back into the words `nft list`
 * prints (`ip daddr . meta l4proto . th dport vmap @service-ips`), so one interpreter
 * (src/readers/nft/build.ts) reads every form; marks come out as `0x00004000`, as nft lists them.
 *
 * Lines: JSON has no statement lines. When the document is pretty-printed (several lines,
 * e.g. `nft -j ... | jq .`), each object's line is the line where it starts, found in the same
 * single scan. `nft -j` itself prints one line; then the "line" of an object is 1 + its index
 * in the `nftables` array (so `path:5` means the fifth object), which is stable and searchable
 * with `jq '.nftables[4]'`.
 */
import {joinHostPort} from '../../core/address.js'
import {pushAll} from '../../core/arrays.js'
import type {Diagnostic} from '../../model/types.js'
import {
  NftChain,
  emptyDocument,
  getOrAddTable,
  type CompactRules,
  type NftDocument,
  type NftElement,
  type NftRule,
  type NftSet,
  type NftTable,
} from '../nft/ir.js'
import {jsonSyntaxError} from '../json-lines.js'
import {entryRanges} from './entries.js'
import type {ParsedSource, SourceText} from '../types.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

export type Json = null | boolean | number | string | Json[] | {[key: string]: Json}
type JsonObject = {[key: string]: Json}

/** Thrown by `word` for a missing value, null, an object or an array where nft -j has a name, number or word; `read` skips the entry. */
class NotAWord {}

/**
 * A JSON value where nft -j has a name, number or word, as text. Anything else there is bad
 * input: the entry is skipped with a warning (see EntryReader.read). String() would have named a
 * chain "[object Object]", or thrown on an object whose "toString" member is not a function; and
 * a missing member would have become a table, chain or jump target named "undefined".
 */
function word(v: Json | undefined): string {
  if (v === undefined || typeof v === 'object') throw new NotAWord()
  return String(v)
}

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** Start line of each element of the top-level `nftables` array (depth 2), in one scan. */
export function objectLines(text: string): number[] | null {
  if (text.indexOf('\n') < 0 || text.indexOf('\n') === text.length - 1) return null
  const lines: number[] = []
  let line = 1
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) {
      line++
      continue
    }
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
      continue
    }
    if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (depth === 2 && c === 123) lines.push(line)
      depth++
    } else if (c === 125 || c === 93) depth--
  }
  return lines
}

const UNQUALIFIED_META = new Set([
  'iif',
  'oif',
  'iifname',
  'oifname',
  'iiftype',
  'oiftype',
  'skuid',
  'skgid',
])
const BINOPS = ['&', '|', '^', '<<', '>>']

/** `meta mark` / `ct mark`: the operands next to it are marks, which nft prints as 0x%08x. */
function isMarkExpression(x: Json): boolean {
  if (!isObject(x)) return false
  const inner = isObject(x.meta) ? x.meta : isObject(x.ct) ? x.ct : null
  return inner !== null && inner.key === 'mark'
}

function hex8(n: number): string {
  return '0x' + n.toString(16).padStart(8, '0')
}

/** Renders a JSON expression as nft list words. `markContext` prints numbers as nft prints marks. */
function expr(e: Json | undefined, out: string[], markContext = false): void {
  if (e === null || e === undefined) return
  if (typeof e === 'string') {
    out.push(e)
    return
  }
  if (typeof e === 'number') {
    out.push(markContext ? hex8(e) : word(e))
    return
  }
  if (typeof e === 'boolean') {
    out.push(word(e))
    return
  }
  if (Array.isArray(e)) {
    // ct state / flags lists: `established,related`
    out.push(
      e.map((x) => (typeof x === 'string' || typeof x === 'number' ? word(x) : '?')).join(','),
    )
    return
  }
  const key = Object.keys(e)[0]
  if (key === undefined) return
  const v = e[key]
  switch (key) {
    case 'payload':
      if (isObject(v) && typeof v.protocol === 'string') out.push(v.protocol, word(v.field))
      else if (isObject(v)) out.push(`@${word(v.base)},${word(v.offset)},${word(v.len)}`)
      return
    case 'meta':
      if (isObject(v)) {
        const k = word(v.key)
        if (UNQUALIFIED_META.has(k)) out.push(k)
        else out.push('meta', k)
      }
      return
    case 'ct':
      if (isObject(v)) out.push('ct', ...(typeof v.dir === 'string' ? [v.dir] : []), word(v.key))
      return
    case 'fib':
      if (isObject(v)) {
        const flags = Array.isArray(v.flags) ? v.flags.map(word) : [word(v.flags)]
        out.push('fib', flags.join(' . '), word(v.result))
      }
      return
    case 'numgen':
      if (isObject(v)) {
        out.push('numgen', word(v.mode), 'mod', word(v.mod))
        if (typeof v.offset === 'number' && v.offset !== 0) out.push('offset', word(v.offset))
      }
      return
    case 'prefix':
      if (isObject(v)) out.push(`${word(v.addr)}/${word(v.len)}`)
      return
    case 'range':
      if (Array.isArray(v)) out.push(`${render(v[0])}-${render(v[1])}`)
      return
    case 'concat':
      if (Array.isArray(v))
        v.forEach((x, i) => {
          if (i > 0) out.push('.')
          expr(x, out)
        })
      return
    case 'set':
      setLiteral(v, out)
      return
    case 'map':
    case 'vmap':
      if (isObject(v)) {
        expr(v.key, out)
        out.push(key)
        if (typeof v.data === 'string') out.push(v.data)
        else expr(v.data, out)
      }
      return
    case 'elem':
      if (isObject(v)) expr(v.val, out)
      return
    case 'symhash':
    case 'jhash':
      out.push(key)
      return
  }
  if (BINOPS.includes(key) && Array.isArray(v)) {
    const isMark = markContext || v.some(isMarkExpression)
    v.forEach((x, i) => {
      if (i > 0) out.push(key)
      expr(x, out, isMark)
    })
    return
  }
  out.push(key)
}

function render(e: Json | undefined): string {
  const out: string[] = []
  expr(e, out)
  return out.join(' ')
}

function setLiteral(v: Json | undefined, out: string[]): void {
  const items = Array.isArray(v) ? v : [v ?? null]
  out.push('{')
  items.forEach((item, i) => {
    if (i > 0) out.push(',')
    if (Array.isArray(item) && item.length === 2) {
      // a map literal entry: [key, value]
      expr(item[0], out)
      out.push(':')
      verdictOrExpr(item[1], out)
    } else {
      expr(item, out)
    }
  })
  out.push('}')
}

const VERDICTS = new Set(['accept', 'drop', 'continue', 'return', 'queue'])

function verdictOrExpr(v: Json | undefined, out: string[]): void {
  if (isObject(v)) {
    const k = Object.keys(v)[0]
    if (k !== undefined && VERDICTS.has(k)) {
      out.push(k)
      return
    }
    if ((k === 'jump' || k === 'goto') && isObject(v[k])) {
      out.push(k, word((v[k] as JsonObject).target))
      return
    }
  }
  expr(v, out)
}

/** One statement of a rule's `expr` array, as nft list words. */
function statement(s: Json, out: string[]): void {
  if (!isObject(s)) return
  const key = Object.keys(s)[0]
  if (key === undefined) return
  const v = s[key]
  switch (key) {
    case 'match': {
      if (!isObject(v)) return
      const left: string[] = []
      expr(v.left, left)
      pushAll(out, left)
      const op = word(v.op)
      // nft leaves out an implicit `==`, but prints it after a bitwise operation:
      // `meta mark & 0x00004000 == 0x00000000` (fixtures/nft/upstream-overall/list.nft).
      const afterBitwise = isObject(v.left) && BINOPS.includes(Object.keys(v.left)[0] ?? '')
      if ((op !== '==' && op !== 'in') || (op === '==' && afterBitwise)) out.push(op)
      const leftIsMark =
        left.includes('mark') && (left[0] === 'meta' || left[0] === 'ct' || left[0] === 'mark')
      expr(v.right, out, leftIsMark && typeof v.right === 'number')
      return
    }
    case 'mangle':
      if (isObject(v)) {
        const left: string[] = []
        expr(v.key, left)
        pushAll(out, left)
        out.push('set')
        expr(v.value, out, left.includes('mark'))
      }
      return
    case 'counter':
      out.push('counter')
      if (isObject(v) && typeof v.packets === 'number')
        out.push('packets', word(v.packets), 'bytes', word(v.bytes))
      return
    case 'jump':
    case 'goto':
      if (isObject(v)) out.push(key, word(v.target))
      return
    case 'vmap':
    case 'map':
      expr(s, out)
      return
    case 'reject':
      out.push('reject')
      if (
        isObject(v) &&
        v.type !== undefined &&
        !(v.type === 'icmp' && v.expr === 'port-unreachable') &&
        !(v.type === 'icmpx' && v.expr === 'port-unreachable')
      ) {
        out.push('with', word(v.type))
        if (v.expr !== undefined) out.push(word(v.expr))
      }
      return
    case 'dnat':
    case 'snat':
      if (isObject(v)) {
        out.push(key)
        if (typeof v.family === 'string') out.push(v.family)
        out.push('to')
        if (typeof v.addr === 'string') {
          out.push(v.port !== undefined ? joinHostPort(v.addr, word(v.port)) : v.addr)
        } else {
          expr(v.addr, out)
          if (v.port !== undefined) out.push(`:${word(v.port)}`)
        }
        if (v.flags !== undefined)
          out.push(Array.isArray(v.flags) ? v.flags.map(word).join(',') : word(v.flags))
      }
      return
    case 'masquerade':
      out.push('masquerade')
      if (isObject(v) && v.flags !== undefined)
        out.push(Array.isArray(v.flags) ? v.flags.map(word).join(',') : word(v.flags))
      return
    case 'set':
      // `update @affinity-... { ip saddr }`
      if (isObject(v)) {
        out.push(word(v.op), word(v.set), '{')
        expr(v.elem, out)
        out.push('}')
      }
      return
    case 'xt':
      if (isObject(v)) out.push('xt', word(v.type), `"${word(v.name)}"`)
      return
  }
  if (VERDICTS.has(key)) {
    out.push(key)
    return
  }
  out.push(key)
}

function elementOf(e: Json, line: number, isMap: boolean): NftElement {
  let keyExpr: Json = e
  let value: string[] | null = null
  if (isMap && Array.isArray(e) && e.length === 2) {
    keyExpr = e[0]!
    value = []
    verdictOrExpr(e[1], value)
  }
  let comment: string | null = null
  if (isObject(keyExpr) && isObject(keyExpr.elem)) {
    const inner = keyExpr.elem
    if (typeof inner.comment === 'string') comment = inner.comment
    keyExpr = inner.val ?? null
  }
  const key: string[] = []
  if (isObject(keyExpr) && Array.isArray(keyExpr.concat))
    for (const part of keyExpr.concat) key.push(render(part))
  else key.push(render(keyExpr))
  return {key, value, comment, line}
}

/**
 * A rule's statements (`expr`) in the words `nft list` prints, for quoting the rule
 * (src/readers/nft-json/rule-text.ts). Null when a statement is not of nft -j's shape.
 */
export function ruleWords(exprs: Json | undefined): string[] | null {
  const out: string[] = []
  try {
    if (Array.isArray(exprs)) for (const s of exprs) statement(s, out)
  } catch (error) {
    if (error instanceof NotAWord) return null
    throw error
  }
  return out
}

/** An element of a set or map as `nft list` prints it (`172.30.0.41 . tcp . 80 : goto CHAIN`); null when not of nft -j's shape. */
export function elementWords(e: Json, isMap: boolean): string | null {
  try {
    const {key, value} = elementOf(e, 0, isMap)
    return key.join(' . ') + (value === null ? '' : ` : ${value.join(' ')}`)
  } catch (error) {
    if (error instanceof NotAWord) return null
    throw error
  }
}

/** Joins the words of a rule kept compact (CompactRules); a word holding it keeps its rule as an object. */
const WORD_SEPARATOR = '\u0001'

/** Reads the entries of the `nftables` array into one document, in order. */
class EntryReader implements CompactRules {
  readonly doc = emptyDocument()
  readonly diagnostics: Diagnostic[] = []
  /** Entries of kinds kp does not use. */
  unknown = 0
  /** The table and chain of the last rule: a dump lists a chain's rules one after the other. */
  private lastTable: NftTable | null = null
  private lastChain: NftChain | null = null

  constructor(private readonly path: string) {}

  /**
   * After a cut (NFT_JSON_TRUNCATED): `nft -j` lists every chain before any rule, then the rules
   * chain by chain, so a chain without rules, and the one the cut fell in, may have lost rules.
   * They are dropped: what references them is then unknown (a missing chain), not "no endpoints".
   */
  dropChainsAfterCut(): number {
    let dropped = 0
    for (const table of this.doc.tables.values()) {
      for (const [name, chain] of table.chains) {
        if (chain.ruleCount > 0 && chain !== this.lastChain) continue
        table.chains.delete(name)
        dropped++
      }
    }
    return dropped
  }

  /** The words of a rule kept joined (see the 'rule' entry). */
  ruleAt(joined: number | string, line: number): NftRule {
    if (typeof joined !== 'string') throw new Error('the JSON reader keeps rules as joined words')
    return {tokens: joined.split(WORD_SEPARATOR), comment: null, line}
  }

  report(
    severity: Diagnostic['severity'],
    code: DiagnosticCode,
    message: string,
    line: number,
  ): void {
    this.diagnostics.push({severity, code, message, source: {path: this.path, line}})
  }

  /**
   * One entry of "nftables". An entry nested deeper than the stack (expressions are rendered
   * recursively: a RangeError), or with a name or number missing or not one (NotAWord), is
   * bad input like any other: skipped with a warning, never thrown.
   */
  read(item: Json, line: number): void {
    try {
      this.readEntry(item, line)
    } catch (error) {
      if (error instanceof NotAWord)
        this.report(
          'warning',
          'NFT_JSON_SHAPE',
          'an entry with a name or number missing, or null, an object or an array in its place; skipped',
          line,
        )
      else if (error instanceof RangeError)
        this.report('warning', 'NFT_JSON_SHAPE', 'an entry nested too deep to read; skipped', line)
      else throw error
    }
  }

  private readEntry(item: Json, line: number): void {
    if (!isObject(item)) {
      this.report(
        'warning',
        'NFT_JSON_SHAPE',
        'an entry of "nftables" is not an object; skipped',
        line,
      )
      return
    }
    const kind = Object.keys(item)[0]
    if (kind === undefined) {
      this.report('warning', 'NFT_JSON_SHAPE', 'an empty entry of "nftables"; skipped', line)
      return
    }
    const o = item[kind]
    if (kind === 'metainfo') {
      if (isObject(o) && typeof o.version === 'string')
        this.doc.tool = `nftables v${o.version}${typeof o.release_name === 'string' ? ` (${o.release_name})` : ''}`
      return
    }
    if (!isObject(o)) {
      this.report('warning', 'NFT_JSON_SHAPE', `"${kind}" entry without an object; skipped`, line)
      return
    }
    const family = typeof o.family === 'string' ? o.family : 'ip'
    switch (kind) {
      case 'table': {
        const t = getOrAddTable(this.doc, family, word(o.name), line)
        if (typeof o.comment === 'string') t.comment = o.comment
        return
      }
      case 'chain': {
        const t = getOrAddTable(this.doc, family, word(o.table), line)
        const name = word(o.name)
        const chain = t.chains.get(name) ?? new NftChain(name, line, this)
        if (typeof o.hook === 'string') {
          const prio = typeof o.prio === 'number' ? o.prio : null
          chain.hook = {
            type: word(o.type),
            hook: o.hook,
            priority: prio,
            priorityText: word(o.prio),
            policy: typeof o.policy === 'string' ? o.policy : null,
          }
        }
        if (typeof o.comment === 'string') chain.comment = o.comment
        t.chains.set(name, chain)
        return
      }
      case 'set':
      case 'map': {
        const t = getOrAddTable(this.doc, family, word(o.table), line)
        const type = Array.isArray(o.type) ? o.type.map(word).join(' . ') : word(o.type)
        const set: NftSet = {
          kind,
          name: word(o.name),
          line,
          type: kind === 'map' ? `${type} : ${word(o.map)}` : type,
          flags: Array.isArray(o.flags)
            ? o.flags.map(word)
            : typeof o.flags === 'string'
              ? [o.flags]
              : [],
          // nft -j prints whole seconds; a negative or fractional one would become the affinity timeout.
          timeoutSeconds:
            typeof o.timeout === 'number' && Number.isInteger(o.timeout) && o.timeout >= 0
              ? o.timeout
              : null,
          comment: typeof o.comment === 'string' ? o.comment : null,
          elements: [],
        }
        if (o.timeout !== undefined && set.timeoutSeconds === null)
          this.report(
            'warning',
            'NFT_JSON_SHAPE',
            `${kind} ${set.name}: cannot read the timeout (not a whole number of seconds)`,
            line,
          )
        if (Array.isArray(o.elem))
          for (const e of o.elem) set.elements.push(elementOf(e, line, kind === 'map'))
        t.sets.set(set.name, set)
        return
      }
      case 'element': {
        const t = getOrAddTable(this.doc, family, word(o.table), line)
        const set = t.sets.get(word(o.name))
        if (!set) {
          this.report(
            'warning',
            'NFT_JSON_SHAPE',
            `elements for ${word(o.name)}, which is not declared before; skipped`,
            line,
          )
          return
        }
        if (Array.isArray(o.elem))
          for (const e of o.elem) set.elements.push(elementOf(e, line, set.kind === 'map'))
        return
      }
      case 'rule': {
        const tableName = word(o.table)
        const last = this.lastTable
        // Tables and chains are only ever added here, so the last ones stay what their names say.
        const t =
          last !== null && last.family === family && last.name === tableName
            ? last
            : getOrAddTable(this.doc, family, tableName, line)
        const chainName = word(o.chain)
        const tokens: string[] = []
        if (Array.isArray(o.expr)) for (const s of o.expr) statement(s, tokens)
        if (tokens.length === 0) {
          // nft -j gives every rule its statements (an unknown one still names itself): none is bad input,
          // not a rule to report later as unrecognised with no words.
          this.report(
            'warning',
            'NFT_JSON_SHAPE',
            `a rule in chain ${chainName} without statements ("expr") kp can read; skipped`,
            line,
          )
          return
        }
        let chain =
          t === last && this.lastChain?.name === chainName
            ? this.lastChain
            : t.chains.get(chainName)
        if (!chain) {
          chain = new NftChain(chainName, line, this)
          t.chains.set(chainName, chain)
        }
        this.lastTable = t
        this.lastChain = chain
        const comment = typeof o.comment === 'string' ? o.comment : null
        // Most rules are kept as their words joined in one string, which ruleAt splits again:
        // one string instead of an object, an array and a string per word.
        const joined = tokens.join(WORD_SEPARATOR)
        if (
          comment === null &&
          tokens.length > 0 &&
          countOf(joined, WORD_SEPARATOR) === tokens.length - 1
        )
          chain.addCompactRule(joined, line)
        else chain.addRule({tokens, comment, line}, false)
        return
      }
      default:
        this.unknown++
    }
  }

  finish(): {doc: NftDocument; diagnostics: Diagnostic[]} {
    if (this.unknown > 0)
      this.report(
        'info',
        'NFT_SKIPPED_OBJECT',
        `${this.unknown} objects kp does not use (flowtables, counters, ...) were skipped`,
        1,
      )
    return {doc: this.doc, diagnostics: this.diagnostics}
  }
}

function countOf(text: string, part: string): number {
  let n = 0
  for (let i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) n++
  return n
}

/**
 * The document entry by entry: JSON.parse of each entry alone. Parsing a large node's `nft -j`
 * at once builds one huge tree that the garbage collector copies about while it grows; entry by
 * entry, each tree is dropped as soon as it is read. Null when the
 * text is not exactly `{"nftables": [...]}` or an entry is not valid JSON: the caller then reads
 * it whole, which also gives JSON.parse's own message for bad input. A document cut off keeps
 * its whole entries and says where it was cut (NFT_JSON_TRUNCATED).
 */
function readByEntry(
  text: string,
  path: string,
): {doc: NftDocument; diagnostics: Diagnostic[]} | null {
  const ranges = entryRanges(text)
  if (!ranges) return null
  const {starts, ends} = ranges
  // Cut before its first whole entry: nothing to show, JSON.parse's message says why.
  if (ranges.cut && starts.length === 0) return null
  // The same lines as objectLines: 1 + the newlines before the entry, when there are several lines.
  const firstNewline = text.indexOf('\n')
  const multiline = firstNewline >= 0 && firstNewline !== text.length - 1
  const reader = new EntryReader(path)
  let line = 1
  let nextNewline = firstNewline
  for (let k = 0; k < starts.length; k++) {
    const start = starts[k]!
    while (multiline && nextNewline >= 0 && nextNewline < start) {
      line++
      nextNewline = text.indexOf('\n', nextNewline + 1)
    }
    let item: Json
    try {
      item = JSON.parse(text.slice(start, ends[k])) as Json
    } catch {
      return null
    }
    reader.read(item, multiline ? line : k + 1)
  }
  if (ranges.cut) {
    const dropped = reader.dropChainsAfterCut()
    // An error's line is a line of the text (the last): one-line `nft -j` names the entry instead.
    const at = countOf(text.trimEnd(), '\n') + 1
    reader.report(
      'error',
      'NFT_JSON_TRUNCATED',
      `the document ends before its "nftables" array is closed: it is cut off in entry ${starts.length + 1}, after ${starts.length} whole entr${starts.length === 1 ? 'y' : 'ies'}, which are read; the rest of the ruleset is missing${dropped > 0 ? `, and the ${dropped} chain(s) whose rules may come after the cut are left out (unknown)` : ''}`,
      at,
    )
  }
  return reader.finish()
}

export function parseNftJson(
  text: string,
  path: string,
): {doc: NftDocument; diagnostics: Diagnostic[]} {
  const byEntry = readByEntry(text, path)
  if (byEntry) return byEntry
  const reader = new EntryReader(path)
  let root: Json
  try {
    root = JSON.parse(text) as Json
  } catch {
    const problem = jsonSyntaxError(text)
    reader.report('error', 'NFT_JSON_INVALID', `not valid JSON: ${problem.message}`, problem.line)
    return {doc: reader.doc, diagnostics: reader.diagnostics}
  }
  const list = isObject(root) ? root.nftables : undefined
  if (!Array.isArray(list)) {
    reader.report(
      'error',
      'NFT_JSON_INVALID',
      'not `nft -j` output: no top-level "nftables" array',
      1,
    )
    return {doc: reader.doc, diagnostics: reader.diagnostics}
  }
  const lines = objectLines(text)
  list.forEach((item, index) => reader.read(item, lines?.[index] ?? index + 1))
  return reader.finish()
}

export function parse(src: SourceText): ParsedSource<NftDocument> {
  const {doc, diagnostics} = parseNftJson(src.text, src.path)
  return {
    format: 'nft-json',
    source: {path: src.path, format: 'nft-json', tool: src.tool ?? doc.tool},
    data: doc,
    diagnostics,
  }
}
