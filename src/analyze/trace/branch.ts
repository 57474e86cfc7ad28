/**
 * One way a traced connection can go, while it is walked: the packet as the rules so far made it
 * (destination after DNAT, mark), its chance, the conditions assumed, and the steps taken. A rule
 * kp cannot decide from the packet forks the branch into one where it holds and one where not.
 */
import type {TraceStep} from './types.js'

export interface Branch {
  destination: string | null
  port: number
  mark: number
  dnat: string | null
  masquerade: boolean
  probability: number
  /** Condition key → whether it was assumed to hold, and its words for each case. */
  conditions: Map<string, {holds: boolean; text: string}>
  steps: TraceStep[]
}

export function forkBranch(b: Branch): Branch {
  return {...b, conditions: new Map(b.conditions), steps: [...b.steps]}
}

/** The conditions of a branch in words, in the order they were assumed. */
export function conditionTexts(b: Branch): string[] {
  return [...b.conditions.values()].map((c) => c.text)
}

/**
 * A condition the walk cannot decide: `holds` and `fails` are its words for the two cases ("the
 * source is in 10.0.0.0/8" / "the source is not in 10.0.0.0/8").
 */
export interface OpenCondition {
  key: string
  holds: string
  fails: string
  /** The match is `!` this condition. */
  negated: boolean
}

export function open(key: string, holds: string, fails: string): OpenCondition {
  return {key, holds, fails, negated: false}
}

/** What a match gives: decided, a chance (the statistic module), or open. */
export type MatchValue = boolean | {probability: number} | OpenCondition

/**
 * The branches a match value leads to, each with whether the match holds there. A condition
 * already assumed on this branch is reused, so one question gets one answer along a path.
 */
export function splitOn(b: Branch, value: MatchValue): Array<[Branch, boolean]> {
  if (typeof value === 'boolean') return [[b, value]]
  if ('probability' in value) {
    const p = value.probability
    if (p >= 1) return [[b, true]]
    if (p <= 0) return [[b, false]]
    const yes = forkBranch(b)
    yes.probability *= p
    const no = forkBranch(b)
    no.probability *= 1 - p
    return [
      [yes, true],
      [no, false],
    ]
  }
  const known = b.conditions.get(value.key)
  if (known) return [[b, known.holds !== value.negated]]
  const holds = forkBranch(b)
  holds.conditions.set(value.key, {holds: true, text: value.holds})
  const fails = forkBranch(b)
  fails.conditions.set(value.key, {holds: false, text: value.fails})
  return [
    [holds, !value.negated],
    [fails, value.negated],
  ]
}

/** `!` in front of a match: a chance becomes its complement, an open condition its opposite. */
export function negate(value: MatchValue): MatchValue {
  if (typeof value === 'boolean') return !value
  if ('probability' in value) return {probability: 1 - value.probability}
  return {...value, negated: !value.negated}
}
