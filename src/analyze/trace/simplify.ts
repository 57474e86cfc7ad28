/**
 * Folds the ways a walk found into the fewest that say the same: equal results under equal
 * conditions add their chances, and a condition whose two cases lead to the same results (the
 * routing decision for a DNAT target that may or may not be this node's, say) is dropped.
 */
import type {TraceOutcome} from './types.js'

/** An outcome and the keys of its conditions (key → whether it was assumed to hold). */
export interface KeyedOutcome {
  keys: Map<string, boolean>
  outcome: TraceOutcome
}

function signature(o: TraceOutcome): string {
  return JSON.stringify([o.verdict, o.dnat, o.masquerade, o.reason])
}

function conditionKey(keys: Map<string, boolean>, without?: string): string {
  return [...keys]
    .filter(([k]) => k !== without)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${v ? '+' : '-'}${k}`)
    .join('\n')
}

/** Equal results under equal conditions: one outcome, chances added (the first one's steps kept). */
function merge(list: KeyedOutcome[]): KeyedOutcome[] {
  const byKey = new Map<string, KeyedOutcome>()
  for (const k of list) {
    const key = `${conditionKey(k.keys)}\n${signature(k.outcome)}`
    const seen = byKey.get(key)
    if (seen) seen.outcome.probability += k.outcome.probability
    else byKey.set(key, {keys: new Map(k.keys), outcome: {...k.outcome}})
  }
  return [...byKey.values()]
}

function results(list: KeyedOutcome[]): string {
  return list
    .map((k) => `${signature(k.outcome)} ${k.outcome.probability.toFixed(9)}`)
    .sort()
    .join('\n')
}

/** Drops condition `key` where both its cases give the same results; null when it cannot be dropped. */
function without(list: KeyedOutcome[], key: string): KeyedOutcome[] | null {
  const groups = new Map<string, {holds: KeyedOutcome[]; fails: KeyedOutcome[]}>()
  const rest: KeyedOutcome[] = []
  for (const k of list) {
    const v = k.keys.get(key)
    if (v === undefined) {
      rest.push(k)
      continue
    }
    const g = conditionKey(k.keys, key)
    const group = groups.get(g) ?? {holds: [], fails: []}
    ;(v ? group.holds : group.fails).push(k)
    groups.set(g, group)
  }
  const kept: KeyedOutcome[] = []
  for (const {holds, fails} of groups.values()) {
    if (holds.length === 0 || fails.length === 0 || results(holds) !== results(fails)) return null
    for (const k of holds) {
      const keys = new Map(k.keys)
      keys.delete(key)
      const texts = k.outcome.conditions.filter((_, i) => [...k.keys.keys()][i] !== key)
      kept.push({keys, outcome: {...k.outcome, conditions: texts}})
    }
  }
  return [...rest, ...kept]
}

export function simplify(list: KeyedOutcome[]): KeyedOutcome[] {
  let current = merge(list)
  for (let changed = true; changed;) {
    changed = false
    const keys = new Set(current.flatMap((k) => [...k.keys.keys()]))
    for (const key of keys) {
      const next = without(current, key)
      if (next) {
        current = merge(next)
        changed = true
        break
      }
    }
  }
  return current
}
