/**
 * The nft objects a statement describes, shared by the block form and the transaction form:
 * chains and sets found or added by name, their properties, rules and elements, and diagnostics.
 */
import type {Diagnostic} from '../../model/types.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {
  NftChain,
  emptyDocument,
  parseNftDuration,
  resolvePriority,
  unquote,
  type CompactRules,
  type NftDocument,
  type NftRule,
  type NftSet,
  type NftTable,
} from './ir.js'
import {lineAt, matchingBrace, splitElements, toRule, type WordLines} from './parse-words.js'

/**
 * Objects a table may hold besides chains and sets (`counter NAME { packets N bytes M }`, `add
 * counter ...`, quotas, limits, ...): none says anything about kube-proxy's services, so kp
 * skips them with an info, never a warning (issue 21 §3).
 */
export const SKIPPED_TABLE_OBJECTS: ReadonlySet<string> = new Set([
  'flowtable',
  'counter',
  'quota',
  'ct',
  'limit',
  'secmark',
  'synproxy',
  'tunnel',
])

/** More "not understood" lines than this are summarised in one diagnostic. */
export const MAX_UNKNOWN_REPORTS = 20

export abstract class NftObjectReader implements CompactRules {
  readonly doc: NftDocument = emptyDocument()
  readonly diagnostics: Diagnostic[] = []
  protected unknownCount = 0

  constructor(protected readonly path: string) {}

  abstract ruleAt(offset: number | string, line: number): NftRule

  protected report(
    severity: Diagnostic['severity'],
    code: DiagnosticCode,
    message: string,
    line: number,
  ): void {
    this.diagnostics.push({severity, code, message, source: {path: this.path, line}})
  }

  protected notUnderstood(words: string[], line: number, where: string): void {
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

  /** A named counter, quota, ... (SKIPPED_TABLE_OBJECTS), in either form. */
  protected skippedObject(words: string[], table: string, line: number): void {
    const brace = words.indexOf('{')
    const what = (brace < 0 ? words : words.slice(0, brace)).join(' ')
    this.report(
      'info',
      'NFT_SKIPPED_OBJECT',
      `${what} in table ${table} is not used by kp and was skipped`,
      line,
    )
  }

  protected chainOf(table: NftTable, name: string, line: number): NftChain {
    let chain = table.chains.get(name)
    if (!chain) {
      chain = new NftChain(name, line, this)
      table.chains.set(name, chain)
    }
    return chain
  }

  protected setOf(table: NftTable, kind: 'set' | 'map', name: string, line: number): NftSet {
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

  /** `type filter hook input priority filter`, `policy accept`, `comment "..."`, `devices = {...}`. */
  protected chainProperty(chain: NftChain, words: string[], line: number): boolean {
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

  protected setProperty(set: NftSet, words: string[], lines: WordLines): boolean {
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

  protected addRule(chain: NftChain, words: string[], line: number, atStart: boolean): void {
    chain.addRule(toRule(words, line), atStart)
  }

  /** Elements between the `{` at words[open] and its matching `}`. */
  protected addElements(set: NftSet, words: string[], lines: WordLines, open: number): void {
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
}
