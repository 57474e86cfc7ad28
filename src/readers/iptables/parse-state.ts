/**
 * The state of one parse of iptables text (./parse.ts IptablesTextParser reads the lines into
 * it): the tables and chains read so far, the headerless block being read, the family, and the
 * diagnostics, with the bookkeeping every kind of line shares.
 */
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {isIptablesIpv6} from '../../core/address.js'
import {diag} from '../../core/state.js'
import type {Diagnostic, SourceRef} from '../../model/types.js'
import {LazyRule, ParsedChain, ParsedRules} from './chain.js'
import {makeIntern, newShared, type Intern, type Shared} from './rule-words.js'
import type {IptablesRule, IptablesTable} from './ruleset.js'
import {placeBlock, type PendingBlock} from './table-inference.js'

/** More malformed lines than this are counted, not listed (a binary file must not flood stderr). */
const MAX_SYNTAX_DIAGNOSTICS = 100

const IPV4_START_RE = /^\d+\.\d+\.\d+\.\d+/

/** A table as the reader fills it: its chains are the reader's own. */
export interface ParsedTable extends IptablesTable {
  chains: Map<string, ParsedChain>
}

export class ParseState {
  readonly diagnostics: Diagnostic[] = []
  readonly intern: Intern = makeIntern()
  readonly shared: Shared = newShared(this.intern)
  readonly store = new ParsedRules()
  readonly tables = new Map<string, ParsedTable>()
  tool: string | null = null
  family: 'IPv4' | 'IPv6' | null = null
  sawTableHeader = false
  sawBuiltinDeclaration = false
  private syntaxErrors = 0
  /** The first malformed line past the listed ones: where the "more not listed" summary points. */
  private firstUnlistedSyntaxLine = 0
  readonly undeclaredHeaderless: string[] = []
  readonly reportedUncommitted = new Set<IptablesTable>()
  /** The open `*table`, or null outside one. */
  current: ParsedTable | null = null
  /** Lines read without a table header since the last table or block. */
  headerless: PendingBlock | null = null
  pendingLastWasPolicy = false
  /** The chain made last, and its map. */
  private madeChain: ParsedChain | null = null
  private madeChains: Map<string, ParsedChain> | null = null
  /** The chain the last rule went to, and the map it is in (rules come grouped by chain). */
  lastRuleChains: Map<string, ParsedChain> | null = null
  lastRuleChain: ParsedChain | null = null
  /** The text (or piece of it) the line being read is in: what its rule keeps offsets into. */
  dump = ''
  /** `dump` in the store (RuleStore.addValue), once a rule is in it; -1 until then. */
  dumpIndex = -1

  constructor(readonly path: string) {}

  at(line: number): SourceRef {
    return {path: this.path, line}
  }

  note(
    severity: Diagnostic['severity'],
    code: DiagnosticCode,
    message: string,
    line: number,
  ): void {
    this.diagnostics.push(diag(severity, code, message, this.at(line)))
  }

  syntax(line: number, message: string): void {
    this.syntaxErrors++
    if (this.syntaxErrors <= MAX_SYNTAX_DIAGNOSTICS) this.note('error', 'IPT_SYNTAX', message, line)
    else if (this.syntaxErrors === MAX_SYNTAX_DIAGNOSTICS + 1) this.firstUnlistedSyntaxLine = line
  }

  /** The summary of the malformed lines not listed, if any. */
  noteUnlistedSyntax(): void {
    if (this.syntaxErrors > MAX_SYNTAX_DIAGNOSTICS)
      this.note(
        'error',
        'IPT_SYNTAX',
        `${this.syntaxErrors - MAX_SYNTAX_DIAGNOSTICS} more malformed lines from here on, not listed`,
        this.firstUnlistedSyntaxLine,
      )
  }

  storedDump(): number {
    return this.dumpIndex >= 0 ? this.dumpIndex : (this.dumpIndex = this.store.addValue(this.dump))
  }

  /** Ends the headerless block, filing its chains under the table(s) it was found to be. */
  flushPending(): void {
    const block = this.headerless
    if (!block) return
    this.headerless = null
    const why = placeBlock(block, (name, chain) => this.addToTable(name, block.line, chain))
    this.note('info', 'IPT_TABLE_INFERRED', why, block.line)
  }

  /** Files a chain read without a table header under the table it was found to belong to. */
  private addToTable(name: string, line: number, chain: ParsedChain): void {
    let table = this.tables.get(name)
    if (!table) {
      table = {name, line, committed: true, chains: new Map()}
      this.tables.set(name, table)
    }
    chain.table = name
    for (const r of chain.rules) r.table = name
    const existing = table.chains.get(chain.name)
    if (existing) for (const r of chain.rules) existing.append(r as LazyRule)
    else table.chains.set(chain.name, chain)
  }

  /** The chain map rules go to now: the open `*table`, or the headerless block. */
  chainsNow(line: number): Map<string, ParsedChain> {
    if (this.current) return this.current.chains
    this.headerless ??= {line, chains: new Map(), rules: [], builtins: new Set()}
    return this.headerless.chains
  }

  newChain(
    chains: Map<string, ParsedChain>,
    name: string,
    line: number,
    declare: boolean,
  ): ParsedChain {
    const chain = new ParsedChain(this.store, this.current?.name ?? '', name, line, declare)
    chains.set(name, chain)
    if (this.madeChains === chains && this.madeChain !== null) this.madeChain.next = chain
    this.madeChain = chain
    this.madeChains = chains
    return chain
  }

  getChain(name: string, line: number, declare: boolean): ParsedChain {
    const chains = this.chainsNow(line)
    const chain = chains.get(name)
    if (!chain) return this.newChain(chains, name, line, declare)
    if (declare) chain.declared = true
    return chain
  }

  /** Until the family is known (without a header), each rule's -s/-d may tell it. */
  noteFamilyOf(rule: IptablesRule): void {
    this.noteFamily(rule.source?.value)
    this.noteFamily(rule.destination?.value)
  }

  private noteFamily(value: string | undefined): void {
    if (this.family !== null || value === undefined) return
    if (value.includes(':') && !value.startsWith('[') && isIptablesIpv6(value.split('/')[0]!))
      this.family = 'IPv6'
    else if (value.startsWith('[')) this.family = 'IPv6'
    else if (IPV4_START_RE.test(value)) this.family = 'IPv4'
  }
}
