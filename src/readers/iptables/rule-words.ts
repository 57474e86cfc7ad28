/**
 * Reading a rule's options from its words: the checks, the common fields they fill, and the option
 * lists. Both word paths (./words.ts) lead here: readRuleWords walks tokenised words,
 * firstOptionOfPlainText a plain line's words in place; they read a rule alike.
 */
import {iptablesIpv6} from '../../core/address.js'
import {COMMON_SPELLINGS, Field, KNOWN_SPELLINGS, spelling, type OptionSpelling} from './options.js'
import type {IptablesChain, IptablesMatch, IptablesOption, IptablesRule} from './ruleset.js'
import {isPlainText, PlainWords, type WordBuffer} from './words.js'

/** How much of a bad line a message quotes. */
const QUOTE_CHARS = 80

export function clip(text: string): string {
  return text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text
}

/**
 * `-s`/`-d` values as kp compares them: `/32` and `/128` dropped (iptables-save adds them,
 * kube-proxy's restore input does not), IPv6 in its compressed form. Anything that is not an
 * address (a host name in hand-written input) is kept as written.
 */
export function normaliseAddress(value: string): string {
  const slash = value.indexOf('/')
  const addr = slash < 0 ? value : value.slice(0, slash)
  const len = slash < 0 ? null : value.slice(slash + 1)
  const v6 = addr.includes(':')
  const canonical = (v6 ? iptablesIpv6(addr) : null) ?? addr
  if (len === null || (v6 && len === '128') || (!v6 && len === '32')) return canonical
  return `${canonical}/${len}`
}

export type Intern = (text: string) => string

/**
 * Returns one shared string for equal texts. Option names, modules and targets repeat on every
 * rule: kept as one string each instead of one per rule (a 430,000-rule dump held millions),
 * and Map lookups by chain name in the builder compare one string, not two copies.
 */
export function makeIntern(): Intern {
  const seen = new Map<string, string>()
  return (text) => {
    const known = seen.get(text)
    if (known !== undefined) return known
    seen.set(text, text)
    return text
  }
}

export const noIntern: Intern = (text) => text

/** Per-parse tables of shared values (see makeIntern) and shared `{value, negated}` matches. */
export interface Shared {
  intern: Intern
  /** `-p tcp`, `--dport 80`, `-i lo`: one frozen match object per value and negation. */
  matches: Map<string, IptablesMatch>
  /** Options none of the tables above names (`--frob`), by spelling. */
  unknown: Map<string, OptionSpelling>
  /**
   * The chains of the table being read: a target that names one of them is stored as that
   * chain's own name string, so the builder's lookups by target (100,000 KUBE-SEP jumps) find
   * their key by identity instead of comparing characters.
   */
  chains: Map<string, IptablesChain> | null
}

export function newShared(intern: Intern): Shared {
  return {intern, matches: new Map(), unknown: new Map(), chains: null}
}

/** A protocol, port or interface match: these repeat across thousands of rules, so equal ones are one object. */
export function sharedMatch(shared: Shared, value: string, negated: boolean): IptablesMatch {
  const key = negated ? `!${value}` : value
  let m = shared.matches.get(key)
  if (!m) {
    m = Object.freeze({value, negated})
    shared.matches.set(key, m)
  }
  return m
}

/** The fields of a rule the reader fills in its one pass (everything but the option lists). */
export type RuleFields = Omit<
  IptablesRule,
  | 'matches'
  | 'targetOptions'
  | 'modules'
  | 'firstOption'
  | 'firstValue'
  | 'text'
  | 'line'
  | 'table'
  | 'chain'
>

/** Where the option lists go when they are wanted (RuleOptions); null in the reader's own pass. */
export interface OptionLists {
  /** Gather only the options of this name (findMatch), or all of them. */
  only: string | null
  modules: string[]
  matches: IptablesOption[]
  targetOptions: IptablesOption[]
}

const isBangAt = (buf: WordBuffer, i: number): boolean =>
  i < buf.count && !buf.quoted[i] && buf.texts[i] === '!'
const isOptionAt = (buf: WordBuffer, i: number): boolean => {
  if (buf.quoted[i]) return false
  const t = buf.texts[i]!
  return t.length > 1 && t.charCodeAt(0) === 45 /* - */
}

export function spellingOf(word: string, shared: Shared): OptionSpelling {
  const known = KNOWN_SPELLINGS.get(word) ?? shared.unknown.get(word)
  if (known) return known
  const made = spelling(shared.intern(word))
  shared.unknown.set(made.name, made)
  return made
}

/** The spelling of the option word at the cursor; undefined for an option none of the tables names. */
export function plainSpelling(w: PlainWords): OptionSpelling | undefined {
  const {text, start} = w
  const length = w.at - start
  for (const sp of COMMON_SPELLINGS)
    if (sp.name.length === length && text.startsWith(sp.name, start)) return sp
  return KNOWN_SPELLINGS.get(text.slice(start, w.at))
}

/** Fills the common field an option sets (-p, -s, -d, -i, -o, --dport, --sport, --comment) from its first value. */
export function fillField(
  rule: RuleFields,
  field: Field,
  value: string,
  negated: boolean,
  shared: Shared,
): void {
  switch (field) {
    case Field.Protocol:
      rule.protocol = sharedMatch(shared, shared.intern(value.toLowerCase()), negated)
      break
    case Field.Source:
      rule.source = {value: normaliseAddress(value), negated}
      break
    case Field.Destination:
      rule.destination = {value: normaliseAddress(value), negated}
      break
    case Field.InInterface:
      rule.inInterface = sharedMatch(shared, value, negated)
      break
    case Field.OutInterface:
      rule.outInterface = sharedMatch(shared, value, negated)
      break
    case Field.Dport:
      rule.dport = sharedMatch(shared, value, negated)
      break
    case Field.Sport:
      rule.sport = sharedMatch(shared, value, negated)
      break
    case Field.Comment:
      rule.comment ??= shared.intern(value)
      break
  }
}

/**
 * Reads the words of a rule from `start` (after `-A CHAIN`): checks them, fills the common
 * fields of `rule`, and, when `lists` is given, gathers the options into it (only those named
 * `lists.only` when that is set). Returns what is wrong with the rule, or null.
 *
 * The reader's own pass gives no `lists`: a 430,000-rule dump then keeps no option objects at
 * all (they were most of its memory and of its time in the garbage collector,
 * docs/benchmarks.md). The lists are made again from the rule's text when asked for (LazyRule).
 * firstOptionOfPlainText walks plain rules the same way without a WordBuffer: a change to how
 * words are read here goes there too (test/readers/iptables/parse.test.ts compares the two).
 */
export function readRuleWords(
  buf: WordBuffer,
  start: number,
  rule: RuleFields,
  shared: Shared,
  lists: OptionLists | null,
): string | null {
  const {texts, count} = buf
  const intern = shared.intern
  let module: string | null = null
  let negateNext = false
  let afterTarget = false
  let i = start
  while (i < count) {
    if (isBangAt(buf, i)) {
      if (negateNext) return 'two `!` in a row'
      negateNext = true
      i++
      continue
    }
    const word = texts[i]!
    if (!isOptionAt(buf, i)) return `unexpected word "${clip(word)}" where an option was expected`
    const sp = spellingOf(word, shared)
    const name = sp.name
    i++
    if (sp.field === Field.Jump || sp.field === Field.Goto) {
      if (i >= count || negateNext) return `${name} needs a target`
      const t = texts[i]!
      if (rule.target !== null) return `a second ${name} (target "${clip(t)}")`
      rule.target = shared.chains?.get(t)?.name ?? intern(t)
      rule.goto = sp.field === Field.Goto
      afterTarget = true
      i++
      continue
    }
    if (sp.field === Field.Module) {
      if (i >= count || negateNext) return '-m needs a module name'
      // The module is only kept in the option lists: the reader's own pass does not need it.
      if (lists) {
        module = intern(texts[i]!)
        if (lists.only === null) lists.modules.push(module)
      }
      i++
      continue
    }
    let negated = negateNext
    negateNext = false
    const arity = sp.arity
    // The old `--option ! value` form (iptables < 1.4.3 accepted it; old dumps still carry it).
    if (isBangAt(buf, i) && arity !== 0 && i + 1 < count) {
      if (negated) return `${name} negated twice`
      negated = true
      i++
    }
    const valuesFrom = i
    if (arity !== undefined) {
      for (let k = 0; k < arity; k++, i++) {
        if (i >= count || isBangAt(buf, i))
          return `${name} needs ${arity} value${arity > 1 ? 's' : ''}`
      }
    } else {
      while (i < count && !isOptionAt(buf, i) && !isBangAt(buf, i)) i++
    }
    if (sp.field === Field.Counters) {
      const packets = Number(texts[valuesFrom])
      const bytes = Number(texts[valuesFrom + 1])
      if (!Number.isInteger(packets) || !Number.isInteger(bytes)) return '-c needs two counters'
      rule.counters = {packets, bytes}
      continue
    }
    if (lists && (lists.only === null || lists.only === name)) {
      const values: string[] = []
      for (let k = valuesFrom; k < i; k++)
        values.push(sp.sharedValues ? intern(texts[k]!) : texts[k]!)
      const option: IptablesOption = {name, values, negated, module}
      if (afterTarget) lists.targetOptions.push(option)
      else lists.matches.push(option)
    }
    // The common fields are filled in the reader's own pass; a later re-read wants only the lists.
    if (afterTarget || sp.field === Field.None || lists !== null) continue
    fillField(rule, sp.field, valuesFrom < i ? texts[valuesFrom]! : '', negated, shared)
  }
  if (negateNext) return '`!` at the end of the rule'
  return null
}

export function emptyLists(only: string | null): OptionLists {
  return {only, modules: [], matches: [], targetOptions: []}
}

/**
 * LazyRule.firstOption for the common rule whose text (`text[from, to)`) holds no `!` and no
 * quote but around whole words (isPlainText): the option is found by walking its words as
 * readRuleWords would, cutting out only the values returned. The builder asks 200,000 rules of
 * a large dump for `--probability` or `--to-destination`; tokenising each again made most of
 * its garbage. Returns null for any
 * other text (and for anything readRuleWords would call an error), which then takes the full
 * path; test/readers/iptables/parse.test.ts checks both paths give the same option.
 */
export function firstOptionOfPlainText(
  text: string,
  from: number,
  to: number,
  optionsFrom: number,
  name: string,
  afterTarget: boolean,
  cursor: PlainWords = new PlainWords(),
): IptablesOption | undefined | null {
  if (!isPlainText(text, from, to)) return null
  const w = cursor.reset(text, from, to)
  for (let k = 0; k < optionsFrom; k++) if (!w.next()) return null
  // The module in force, as a range of the text: sliced only for the option returned. Nothing
  // else is made for the options walked past (200,000 lookups on a 10,000-service dump).
  let moduleStart = -1
  let moduleEnd = -1
  let inTarget = false
  // A quoted module name (`-m "comment"`) is the name without its quotes, as tokenizeInto gives it.
  const quoteLength = (): number => (w.quoted ? 1 : 0)
  while (w.next()) {
    if (!w.isOption()) return null
    const sp = plainSpelling(w)
    if (sp?.field === Field.Jump || sp?.field === Field.Goto) {
      if (!w.next()) return null
      inTarget = true
      continue
    }
    if (sp?.field === Field.Module) {
      if (!w.next()) return null
      moduleStart = w.start + quoteLength()
      moduleEnd = w.at - quoteLength()
      continue
    }
    const wanted = inTarget === afterTarget && (sp !== undefined ? sp.name === name : w.is(name))
    const arity = sp?.arity
    let values: string[] | null = null
    if (arity !== undefined) {
      if (wanted) values = arity === 1 ? [''] : new Array<string>(arity)
      for (let k = 0; k < arity; k++) {
        if (!w.next()) return null
        if (values !== null) values[k] = w.value()
      }
    } else {
      // Up to the next option: look ahead, and step back when the next word is one.
      for (;;) {
        const before = w.at
        if (!w.next()) break
        if (w.isOption()) {
          w.at = before
          break
        }
        if (wanted) (values ??= []).push(w.value())
      }
    }
    if (sp?.field === Field.Counters) continue
    if (wanted)
      return {
        name,
        values: values ?? [],
        negated: false,
        module: moduleStart < 0 ? null : text.slice(moduleStart, moduleEnd),
      }
  }
  return undefined
}
