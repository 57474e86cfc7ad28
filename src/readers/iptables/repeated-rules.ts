/**
 * Exact copies of one rule in one chain (k/k#76431: 4,190 copies of KUBE-FIREWALL's DROP;
 * k3s#3117: thousands of duplicated jumps): how a node with two iptables versions or backends
 * writing one table, or a sync that appends instead of replacing, shows in a dump. Counted while
 * a builder walks a chain's rules (./build.ts in its one pass over every rule, the IPVS-mode
 * reader over its iptables dump), then reported once per distinct repeated rule.
 */
import type {IptablesChain, IptablesRule, IptablesTable} from './ruleset.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

/** One rule text of a chain: where it is first, how many times it is there, and where its first copy is. */
interface RepeatedRule {
  line: number
  copies: number
  again: number
}

/** The rules of one chain by their text. */
export type RuleCopies = Map<string, RepeatedRule>

/** Counts `rule` among its chain's rules by its text; counters (`[p:b]` of a `-c` save) are not part of it. */
export function countRuleCopy(copies: RuleCopies, rule: IptablesRule): void {
  let text = rule.text
  if (text.startsWith('[')) text = text.slice(text.indexOf(']') + 1).trimStart()
  const seen = copies.get(text)
  if (seen === undefined) copies.set(text, {line: rule.line, copies: 1, again: 0})
  else if (seen.copies++ === 1) seen.again = rule.line
}

/** One IPT_REPEATED_RULE warning per rule of `chain` that is there more than once, pointing at its first copy. */
export function reportRuleCopies(
  copies: RuleCopies,
  table: IptablesTable,
  chain: IptablesChain,
  warn: (code: DiagnosticCode, message: string, line: number) => void,
): void {
  for (const r of copies.values()) {
    if (r.copies < 2) continue
    warn(
      'IPT_REPEATED_RULE',
      `the rule on line ${r.line} of ${table.name} ${chain.name} is there ${r.copies.toLocaleString('en')} times (again on line ${r.again}): two iptables versions or backends writing one table, or a sync that appends instead of replacing; the copies after the first change nothing but are walked by every packet`,
      r.again,
    )
  }
}
