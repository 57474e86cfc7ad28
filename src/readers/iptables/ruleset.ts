/**
 * The parsed form of one iptables text source: `iptables-save` / `ip6tables-save` (with or
 * without `-c`), `iptables [-t TABLE] -S`, or kube-proxy's own `iptables-restore` input.
 *
 * Generic over chain names: nothing here knows about kube-proxy, so the IPVS-mode reader can
 * use the same ruleset (import `parseIptablesText` from ./parse.js). The builder in ./build.ts
 * gives the KUBE-* chains their meaning.
 */

/** `[packets:bytes]` from `-c` saves, chain declarations, or `-c P B` in `-S -v` output. */
export interface IptablesCounters {
  /** Equal counters may be one shared object: never changed in place. */
  readonly packets: number
  readonly bytes: number
}

/** One option of a rule (`--dport 80`, `! --mark 0x4000/0x4000`, `--rcheck`), in the order written. */
export interface IptablesOption {
  /** As written, with its dashes: `--dport`, `-s`, `--to-destination`. */
  name: string
  /** Zero (a flag such as `--rcheck`), one, or more values; quotes removed, escapes resolved. */
  values: string[]
  /** `! --opt v` or the old `--opt ! v` form. */
  negated: boolean
  /** The `-m MODULE` in force when the option was written (null before any `-m`). */
  module: string | null
}

/** A negatable value of one of the options every rule may have. */
export interface IptablesMatch {
  /** Equal protocol, port and interface matches are one shared object: never changed in place. */
  readonly value: string
  readonly negated: boolean
}

export interface IptablesRule {
  /** 1-based line in the source. */
  line: number
  /** The line as read (blanks around it removed): what the option lists below are read from. */
  readonly text: string
  table: string
  chain: string
  counters: IptablesCounters | null
  /** `-p` (lowercase, as written). */
  protocol: IptablesMatch | null
  /** `-s` / `-d`, normalised: `/32` and `/128` removed, IPv6 in its canonical form. */
  source: IptablesMatch | null
  destination: IptablesMatch | null
  inInterface: IptablesMatch | null
  outInterface: IptablesMatch | null
  /** `--dport` / `--sport` as written (a port, or a `lo:hi` range). */
  dport: IptablesMatch | null
  sport: IptablesMatch | null
  /** `-m` modules in the order written. */
  modules: string[]
  /** The first `--comment` value (quotes removed). */
  comment: string | null
  /** `-j TARGET` or `-g CHAIN`; null for a rule without a target (kube-proxy's KUBE-FW "other traffic" no-op). */
  target: string | null
  /** true for `-g` (goto). */
  goto: boolean
  /** Every match option before the target, including the ones parsed into the fields above. */
  matches: IptablesOption[]
  /** Options after `-j TARGET` (`--to-destination`, `--reject-with`, `--or-mark`, `--random-fully`). */
  targetOptions: IptablesOption[]
  /** The first option of this name before the target (false) or after it (true); use findMatch / findTargetOption. */
  firstOption(name: string, afterTarget: boolean): IptablesOption | undefined
  /** firstOption(name, afterTarget)?.values[0], without the option object where the reader knows it; use findMatchValue / findTargetValue. */
  firstValue(name: string, afterTarget: boolean): string | undefined
}

export interface IptablesChain {
  table: string
  name: string
  /** PREROUTING, INPUT, FORWARD, OUTPUT, POSTROUTING. */
  builtin: boolean
  /** ACCEPT / DROP for a built-in chain; null for a user chain (`-`). */
  policy: string | null
  counters: IptablesCounters | null
  /** Where the chain was declared (`:NAME`, `-N`, `-P`), or its first rule's line when never declared. */
  line: number
  /** false when rules were appended to a chain the source never declared. */
  declared: boolean
  /** The line of a `-X NAME` (restore input only): the chain is deleted, not a live chain. */
  deletedLine: number | null
  /**
   * Scratch for one pass of a reader over the ruleset: the pass sets its own number here to
   * remember a chain (./build.ts: the SEP chains some service jumps to), and a number of another
   * pass means nothing. 0 when made. (Not a Set of chains:
   * each object added to one is given an identity hash.)
   */
  passMark: number
  /**
   * In order. The reader's chains make this list when asked for (a new list, and new rule views,
   * each time, unless the chain was changed by -I or restore input): read it once per use.
   */
  readonly rules: readonly IptablesRule[]
  /** rules.length, without making the list. */
  readonly ruleCount: number
  /**
   * rules[index], without making the list: a view of its own (kept as long as wanted). For the
   * builder's walks over 110,000 chains, where the lists and their iterators were most of
   * the garbage.
   */
  ruleAt(index: number): IptablesRule
}

export interface IptablesTable {
  /** nat, filter, mangle, raw, security. */
  name: string
  /** The `*table` line; for `-S` input, the first line of the block read as this table. */
  line: number
  /** false when the table never reached its COMMIT (a dump cut off part-way). */
  committed: boolean
  /** In the order declared; a Map so the builder indexes by name without scanning. */
  chains: Map<string, IptablesChain>
}

/** Which of the accepted text forms the source is. */
export type IptablesTextForm = 'iptables-save' | 'restore-input' | 'list-rules'

export interface IptablesRuleset {
  form: IptablesTextForm
  /**
   * The source could not show in/out interfaces (an `iptables -L` listing without -v): a rule
   * without `-i`/`-o` may have had one, so what they tell (the local-traffic detector,
   * masquerade-all) is unknown, not absent.
   */
  interfacesHidden?: boolean
  /** From the header, e.g. "iptables-save v1.8.9 (nf_tables)"; null when the source has none. */
  tool: string | null
  /** From the header (`ip6tables-save`), else from the first address seen; null when neither tells. */
  family: 'IPv4' | 'IPv6' | null
  tables: Map<string, IptablesTable>
  /** The rules of all chains of all tables, in source order (the same objects as in the chains; a rule flushed by -F is in none). */
  readonly rules: readonly IptablesRule[]
  /**
   * A focused read (ReadOptions.focus, ./focus.ts): only the chosen services' rules and the
   * node-wide ones were read, so checks over the whole dump must not run. Absent: a full read.
   */
  focused?: boolean
}

export const BUILTIN_CHAINS: ReadonlySet<string> = new Set([
  'PREROUTING',
  'INPUT',
  'FORWARD',
  'OUTPUT',
  'POSTROUTING',
])

/**
 * Option names another spelling is read as (parse.ts OPTION_ALIASES: `--destination-port` is
 * `--dport`, `--protocol` is `-p`): a rule's text may hold the other spelling. Every short name
 * (`-p`, `-s`) has a long one.
 */
export const ALIASED_LONG_OPTIONS: ReadonlySet<string> = new Set(['--dport', '--sport'])

/**
 * Whether option `name` can be in the rule at all. Most rules lack most options (the builder
 * asks every SVC->SEP rule for `--rcheck`): when the text does not even hold the name, the
 * option lists need not be read.
 */
export function mayHold(rule: IptablesRule, name: string): boolean {
  return name.length <= 2 || ALIASED_LONG_OPTIONS.has(name) || rule.text.includes(name)
}

/** The first match option with this name (e.g. `--probability`), or undefined. */
export function findMatch(rule: IptablesRule, name: string): IptablesOption | undefined {
  return mayHold(rule, name) ? rule.firstOption(name, false) : undefined
}

/** The first target option with this name (e.g. `--to-destination`), or undefined. */
export function findTargetOption(rule: IptablesRule, name: string): IptablesOption | undefined {
  return mayHold(rule, name) ? rule.firstOption(name, true) : undefined
}

/** The first value of the first match option with this name (`--probability 0.5` -> `0.5`), or undefined. */
export function findMatchValue(rule: IptablesRule, name: string): string | undefined {
  return rule.firstValue(name, false)
}

/** The first value of the first target option with this name (`--to-destination 10.1.2.3:80`), or undefined. */
export function findTargetValue(rule: IptablesRule, name: string): string | undefined {
  return rule.firstValue(name, true)
}
