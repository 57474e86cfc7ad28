/**
 * What the iptables and nftables walks share: how a walk of a chain ends for one branch, the
 * limits that stop a damaged or exploding ruleset, and how the ends become outcomes.
 */
import {conditionTexts, type Branch} from './branch.js'
import {simplify} from './simplify.js'
import type {TraceOutcome, TraceVerdict} from './types.js'

/** How a walk of a chain ended for one branch. */
export interface Exit {
  branch: Branch
  /** `next`: on to the chain's next rule; `return`: back to the calling chain. */
  how: 'next' | 'return' | 'accept' | 'drop' | 'reject' | 'unknown'
  reason: string | null
}

/** An exit at the end of the walk, with whether the routing decision sent it to this node. */
export type End = Exit & {local: boolean}

/** A ruleset whose chains can jump into each other without end (a damaged dump) stops here. */
export const MAX_DEPTH = 64
/** More ways than this and the answer is no longer readable: the walk says so instead. */
export const MAX_BRANCHES = 4096

/** The first branch of a walk: the packet as the client sent it. */
export function startBranch(destination: string | null, port: number): Branch {
  return {
    destination,
    port,
    mark: 0,
    dnat: null,
    masquerade: false,
    probability: 1,
    conditions: new Map(),
    steps: [],
  }
}

/** One end of the walk as an outcome: accepted is forwarded (DNATed or not for this node) or delivered. */
export function outcomeOf(e: End): TraceOutcome {
  const verdict: TraceVerdict =
    e.how === 'accept'
      ? e.branch.dnat !== null || !e.local
        ? 'forwarded'
        : 'delivered'
      : e.how === 'drop'
        ? 'dropped'
        : e.how === 'reject'
          ? 'rejected'
          : 'unknown'
  return {
    conditions: conditionTexts(e.branch),
    probability: e.branch.probability,
    verdict,
    dnat: e.branch.dnat,
    masquerade: e.branch.masquerade,
    reason: verdict === 'forwarded' || verdict === 'delivered' ? null : e.reason,
    steps: e.branch.steps,
  }
}

/** Every end of a walk as outcomes, folded into the fewest that say the same. */
export function outcomesOf(ends: End[]): TraceOutcome[] {
  return simplify(
    ends.map((e) => ({
      keys: new Map([...e.branch.conditions].map(([k, c]) => [k, c.holds])),
      outcome: outcomeOf(e),
    })),
  ).map((k) => k.outcome)
}

/** The exit of every branch still walking when a chain stopped (too many ways). */
export function tooManyWays(done: Exit[], live: Branch[]): Exit[] {
  return [
    ...done,
    ...live.map((branch): Exit => ({
      branch,
      how: 'unknown',
      reason: `more than ${MAX_BRANCHES} ways through the rules; kp stopped following them`,
    })),
  ]
}

/** The exit of a branch whose chains jump deeper than MAX_DEPTH. */
export function tooDeep(b: Branch): Exit[] {
  return [
    {
      branch: b,
      how: 'unknown',
      reason: `the chains jump deeper than ${MAX_DEPTH} levels (a loop?)`,
    },
  ]
}
