/**
 * The iptables reader's rules and chains: a rule is a view of one row of a RuleStore
 * (./rule-store.ts), a chain a run of rows (or, once changed out of order, a list of views).
 */
import {
  commentLength,
  commentOffset,
  keptCodeOf,
  keptIndex,
  keptIndexOf,
  keptOffsetOf,
  NONE_KEPT,
  optionsFromOf,
  packCommentAt,
  RuleField,
  RuleStore,
} from './rule-store.js'
import {
  emptyLists,
  firstOptionOfPlainText,
  newShared,
  noIntern,
  normaliseAddress,
  readRuleWords,
  type OptionLists,
  type RuleFields,
} from './rule-words.js'
import {BUILTIN_CHAINS, mayHold} from './ruleset.js'
import type {
  IptablesChain,
  IptablesCounters,
  IptablesMatch,
  IptablesOption,
  IptablesRule,
} from './ruleset.js'
import {newWordBuffer, PlainWords, tokenizeInto} from './words.js'

interface RareRuleFields {
  counters: IptablesCounters | null
  inInterface: IptablesMatch | null
  outInterface: IptablesMatch | null
  sport: IptablesMatch | null
}

function newRareFields(): RareRuleFields {
  return {counters: null, inInterface: null, outInterface: null, sport: null}
}

/**
 * The rows of one parse, and what its rule views share when a rule's options are read again:
 * the last rule whose lists were made (a caller often asks one rule for several options in a
 * row), the last rule tokenised, and a word cursor.
 */
export class ParsedRules extends RuleStore {
  listedRule: LazyRule | null = null
  listedOptions: OptionLists = emptyLists(null)
  /** The rule whose words are in relistBuffer. */
  tokenizedRule: LazyRule | null = null
  readonly relistBuffer = newWordBuffer()
  readonly relistShared = newShared(noIntern)
  /** Where a re-read puts the target and counters it meets on its way (readRuleWords needs somewhere). */
  readonly relistSink: RuleFields = {
    counters: null,
    protocol: null,
    source: null,
    destination: null,
    inInterface: null,
    outInterface: null,
    dport: null,
    sport: null,
    comment: null,
    target: null,
    goto: false,
  }
  readonly cursor = new PlainWords()
}

/**
 * A rule as the reader keeps it: a row of the reader's RuleStore, holding the common fields and
 * where its text is. This object is only a view of that row: a chain whose rules are one run of
 * rows makes new views each time its rules are asked for (ParsedChain.rules), so two views may be
 * one rule (sameRule). The full option lists (`matches`, `targetOptions`, `modules`) are read
 * again from the text when asked for; the builder asks for few of them (`--probability`,
 * `--to-destination`), and findMatch skips the rules whose text does not hold the option at all.
 */
export class LazyRule implements IptablesRule {
  constructor(
    readonly store: ParsedRules,
    /** Fixed, but for readPlainAppend's one cursor (moveTo), which it never hands out. */
    private _row: number,
  ) {}

  get row(): number {
    return this._row
  }

  /** For readPlainAppend's cursor: the view is of another row now. */
  moveTo(row: number): void {
    this._row = row
  }

  get line(): number {
    return this.store.int(this.row, RuleField.Line)
  }

  set line(value: number) {
    this.store.setInt(this.row, RuleField.Line, value)
  }

  get table(): string {
    return this.store.value(this.row, RuleField.Table) as string
  }

  set table(value: string) {
    this.store.setValue(this.row, RuleField.Table, value)
  }

  get chain(): string {
    return this.store.value(this.row, RuleField.Chain) as string
  }

  set chain(value: string) {
    this.store.setValue(this.row, RuleField.Chain, value)
  }

  get protocol(): IptablesMatch | null {
    return this.store.value(this.row, RuleField.Protocol) as IptablesMatch | null
  }

  set protocol(value: IptablesMatch | null) {
    this.store.setValue(this.row, RuleField.Protocol, value)
  }

  get dport(): IptablesMatch | null {
    return this.store.value(this.row, RuleField.Dport) as IptablesMatch | null
  }

  set dport(value: IptablesMatch | null) {
    this.store.setValue(this.row, RuleField.Dport, value)
  }

  get comment(): string | null {
    const at = this.store.int(this.row, RuleField.CommentAt)
    if (at === 0) return this.store.value(this.row, RuleField.Comment) as string | null
    // Cut from the line when asked for: the builder reads few of a large dump's 300,000
    // comments (most name an endpoint of a service it has named already).
    const from = this.start + commentOffset(at)
    return this.dump.slice(from, from + commentLength(at))
  }

  set comment(value: string | null) {
    this.store.setInt(this.row, RuleField.CommentAt, 0)
    this.store.setValue(this.row, RuleField.Comment, value)
  }

  /** For readPlainAppend: the comment is text[start + offset, + length) of the rule's line. */
  commentInText(offset: number, length: number): boolean {
    const at = packCommentAt(offset, length)
    if (at === 0) return false
    this.store.setInt(this.row, RuleField.CommentAt, at)
    return true
  }

  get target(): string | null {
    return this.store.value(this.row, RuleField.Target) as string | null
  }

  set target(value: string | null) {
    this.store.setValue(this.row, RuleField.Target, value)
  }

  get goto(): boolean {
    return this.store.int(this.row, RuleField.Goto) !== 0
  }

  set goto(value: boolean) {
    this.store.setInt(this.row, RuleField.Goto, value ? 1 : 0)
  }

  /** `source` and `destination` as set, or IN_TEXT: read from the text when first asked for (readPlainAppend). */
  private get src(): IptablesMatch | null | typeof IN_TEXT {
    return this.store.value(this.row, RuleField.Src) as IptablesMatch | null | typeof IN_TEXT
  }

  private set src(value: IptablesMatch | null | typeof IN_TEXT) {
    this.store.setValue(this.row, RuleField.Src, value)
  }

  private get dst(): IptablesMatch | null | typeof IN_TEXT {
    return this.store.value(this.row, RuleField.Dst) as IptablesMatch | null | typeof IN_TEXT
  }

  private set dst(value: IptablesMatch | null | typeof IN_TEXT) {
    this.store.setValue(this.row, RuleField.Dst, value)
  }

  /** What few rules have, kept out of the other 430,000 rows. */
  private get rare(): RareRuleFields | null {
    return this.store.value(this.row, RuleField.Rare) as RareRuleFields | null
  }

  private newRare(): RareRuleFields {
    const rare = newRareFields()
    this.store.setValue(this.row, RuleField.Rare, rare)
    return rare
  }

  /** The text (or the piece of it) the rule's line is in, and where. */
  private get dump(): string {
    return this.store.value(this.row, RuleField.Dump) as string
  }

  private get start(): number {
    return this.store.int(this.row, RuleField.Start)
  }

  private get end(): number {
    return this.store.int(this.row, RuleField.End)
  }

  /**
   * optionsFrom and what readPlainAppend found of KEPT_VALUES, packed (rule-store.ts packOptions).
   */
  get options(): number {
    return this.store.int(this.row, RuleField.Options)
  }

  set options(value: number) {
    this.store.setInt(this.row, RuleField.Options, value)
  }

  /** The word of `text` the options start at (after `[p:b] -A CHAIN [N]`). */
  get optionsFrom(): number {
    return optionsFromOf(this.options)
  }

  get counters(): IptablesCounters | null {
    return this.rare?.counters ?? null
  }

  set counters(value: IptablesCounters | null) {
    if (value !== null || this.rare) (this.rare ?? this.newRare()).counters = value
  }

  get inInterface(): IptablesMatch | null {
    return this.rare?.inInterface ?? null
  }

  set inInterface(value: IptablesMatch | null) {
    if (value !== null || this.rare) (this.rare ?? this.newRare()).inInterface = value
  }

  get outInterface(): IptablesMatch | null {
    return this.rare?.outInterface ?? null
  }

  set outInterface(value: IptablesMatch | null) {
    if (value !== null || this.rare) (this.rare ?? this.newRare()).outInterface = value
  }

  get sport(): IptablesMatch | null {
    return this.rare?.sport ?? null
  }

  set sport(value: IptablesMatch | null) {
    if (value !== null || this.rare) (this.rare ?? this.newRare()).sport = value
  }

  get source(): IptablesMatch | null {
    const v = this.src
    return v === IN_TEXT ? (this.src = this.addressInText('-s')) : (v as IptablesMatch | null)
  }

  set source(value: IptablesMatch | null) {
    this.src = value
  }

  get destination(): IptablesMatch | null {
    const v = this.dst
    return v === IN_TEXT ? (this.dst = this.addressInText('-d')) : (v as IptablesMatch | null)
  }

  set destination(value: IptablesMatch | null) {
    this.dst = value
  }

  /** What fillField would have made of the rule's one `-s` or `-d` (a plain rule: never negated). */
  private addressInText(name: '-s' | '-d'): IptablesMatch | null {
    const option = this.firstOption(name, false)
    return option
      ? {value: normaliseAddress(option.values[0] ?? ''), negated: option.negated}
      : null
  }

  /** For readPlainAppend: the rule's one `-s` (or `-d`) is read from its text when asked for. */
  addressesInText(source: boolean, destination: boolean): void {
    if (source) this.src = IN_TEXT
    if (destination) this.dst = IN_TEXT
  }

  get text(): string {
    return this.dump.slice(this.start, this.end)
  }

  get modules(): string[] {
    return optionListsOf(this).modules
  }

  get matches(): IptablesOption[] {
    return optionListsOf(this).matches
  }

  get targetOptions(): IptablesOption[] {
    return optionListsOf(this).targetOptions
  }

  firstValue(name: string, afterTarget: boolean): string | undefined {
    const options = this.options
    const code = keptCodeOf(options)
    const asked = code > 0 ? keptIndex(name, afterTarget) : -1
    if (asked >= 0) {
      // Read by the plain reader, which keeps the first of these it meets: none, so not this one.
      if (code === NONE_KEPT) return undefined
      if (keptIndexOf(code) === asked) {
        // The value is the word there, as the plain walk cut it.
        const dump = this.dump
        const w = this.store.cursor.reset(dump, this.start + keptOffsetOf(code), this.end)
        return w.next() ? w.value() : undefined
      }
    }
    return mayHold(this, name) ? this.firstOption(name, afterTarget)?.values[0] : undefined
  }

  firstOption(name: string, afterTarget: boolean): IptablesOption | undefined {
    // Only the wanted option is made into an object, unless the full lists are at hand already.
    const store = this.store
    const listed = sameRule(store.listedRule, this)
    if (!listed) {
      const plain = firstOptionOfPlainText(
        this.dump,
        this.start,
        this.end,
        this.optionsFrom,
        name,
        afterTarget,
        store.cursor,
      )
      if (plain !== null) return plain
    }
    const lists = listed ? store.listedOptions : relist(this, name)
    return (afterTarget ? lists.targetOptions : lists.matches).find((o) => o.name === name)
  }
}

/** Whether two views are of one rule (the same row of the same store). */
export function sameRule(a: LazyRule | null, b: LazyRule): boolean {
  return a !== null && a.row === b.row && a.store === b.store
}

/**
 * A rule's `-s` or `-d` is in its text, read when asked for: most are never asked for (the
 * 100,000 `-s POD/32 -j KUBE-MARK-MASQ` rules of a large dump's SEP chains), and each would
 * otherwise be two objects kept to the end.
 */
const IN_TEXT = Object.freeze({inText: true})

/** A new rule in a new row of `store`: every field but these is null (or 0, or false). */
export function newRule(
  store: ParsedRules,
  line: number,
  table: string,
  chain: string,
  dumpIndex: number,
  start: number,
  end: number,
  optionsFrom: number,
): LazyRule {
  return new LazyRule(store, newRow(store, line, table, chain, dumpIndex, start, end, optionsFrom))
}

/**
 * newRule's row, without the view. `dumpIndex`: the piece of text the line is in, as stored once
 * with RuleStore.addValue (not setValue: its check against the last piece compared two alike
 * 1 MiB pieces (../bytes.ts textPieces) whole, for every row; with many copies of one rule, quadratic).
 */
export function newRow(
  store: ParsedRules,
  line: number,
  table: string,
  chain: string,
  dumpIndex: number,
  start: number,
  end: number,
  optionsFrom: number,
): number {
  const row = store.add()
  store.setInt(row, RuleField.Line, line)
  store.setValue(row, RuleField.Table, table)
  store.setValue(row, RuleField.Chain, chain)
  store.setInt(row, RuleField.Dump, dumpIndex)
  store.setInt(row, RuleField.Start, start)
  store.setInt(row, RuleField.End, end)
  store.setInt(row, RuleField.Options, optionsFrom)
  return row
}

/** Takes back the rule just begun (its line was found wrong): its row is the next rule's. */
export function dropRule(rule: LazyRule): void {
  const store = rule.store
  if (sameRule(store.listedRule, rule)) store.listedRule = null
  if (sameRule(store.tokenizedRule, rule)) store.tokenizedRule = null
  rule.store.dropLast()
}

/**
 * A chain as the reader keeps it. Its rules are one run of rows of the store while they come
 * one after another, as in every save (no array per chain: a large dump has 110,000 chains);
 * an insert (`-I`), or a rule of another chain in between (restore input), makes them a list.
 */
export class ParsedChain implements IptablesChain {
  builtin: boolean
  policy: string | null = null
  counters: IptablesCounters | null = null
  deletedLine: number | null = null
  passMark = 0
  /** The chain made after this one in the same table: whose rules a save lists next (readPlainAppend). */
  next: ParsedChain | null = null
  private first = 0
  private count = 0
  private list: IptablesRule[] | null = null

  constructor(
    private readonly store: ParsedRules,
    public table: string,
    public name: string,
    public line: number,
    public declared: boolean,
  ) {
    this.builtin = BUILTIN_CHAINS.has(name)
  }

  get rules(): IptablesRule[] {
    if (this.list !== null) return this.list
    const rules = new Array<IptablesRule>(this.count)
    for (let k = 0; k < this.count; k++) rules[k] = new LazyRule(this.store, this.first + k)
    return rules
  }

  get ruleCount(): number {
    return this.list !== null ? this.list.length : this.count
  }

  ruleAt(index: number): IptablesRule {
    if (this.list !== null) return this.list[index]!
    return new LazyRule(this.store, this.first + index)
  }

  /** Adds a rule at the end. */
  append(rule: LazyRule): void {
    if (rule.store !== this.store || !this.extendRun(rule.row))
      (this.list ??= this.rules).push(rule)
  }

  /** Adds the rule in `row` of this chain's store at the end (a view of it is made only if the chain is a list). */
  appendRow(row: number): void {
    if (!this.extendRun(row)) (this.list ??= this.rules).push(new LazyRule(this.store, row))
  }

  /** Takes `row` into the chain's run of rows, when it is one and the row comes right after it. */
  private extendRun(row: number): boolean {
    if (this.list !== null) return false
    if (this.count === 0) {
      this.first = row
      this.count = 1
      return true
    }
    if (this.first + this.count !== row) return false
    this.count++
    return true
  }

  /** Inserts a rule at 0-based position `at` (`-I CHAIN N`: N - 1), or at the end past the last. */
  insert(at: number, rule: LazyRule): void {
    const rules = (this.list ??= this.rules)
    rules.splice(Math.min(at, rules.length), 0, rule)
  }

  /** `-F`. */
  flush(): void {
    this.list = null
    this.count = 0
  }

  /** This chain (declaration, policy, counters) in `table`, holding `rules`. */
  copy(table: string, rules: IptablesRule[]): ParsedChain {
    const chain = new ParsedChain(this.store, table, this.name, this.line, this.declared)
    chain.policy = this.policy
    chain.counters = this.counters
    chain.deletedLine = this.deletedLine
    chain.list = rules
    return chain
  }
}

/** Reads the options of a rule again from its text (it was read without error once). */
function relist(rule: LazyRule, only: string | null): OptionLists {
  const store = rule.store
  if (!sameRule(store.tokenizedRule, rule)) {
    tokenizeInto(rule.text, store.relistBuffer)
    store.tokenizedRule = rule
  }
  const lists = emptyLists(only)
  const sink = store.relistSink
  sink.target = null
  sink.counters = null
  readRuleWords(store.relistBuffer, rule.optionsFrom, sink, store.relistShared, lists)
  return lists
}

function optionListsOf(rule: LazyRule): OptionLists {
  const store = rule.store
  if (!sameRule(store.listedRule, rule)) {
    store.listedOptions = relist(rule, null)
    store.listedRule = rule
  }
  return store.listedOptions
}
