/**
 * Effective endpoint shares from kube-proxy's probability cascade (docs/kube-proxy-layouts.md §2.4, docs/model.md).
 *
 * The rules of a KUBE-SVC/SVL chain are tried in order; rule i matches with its conditional
 * probability p_i (`--probability`, printed `%0.10f` by kube-proxy, `%0.5f` by old releases,
 * and re-printed by the kernel from 32-bit fixed point: 0.33333333349), and a rule without a
 * statistic match takes whatever is left. So share_i = p_i × Π_{j<i}(1 − p_j).
 */

export interface CascadeResult {
  shares: number[]
  /** Σ shares; 1 for a well-formed cascade (the last rule unconditional). */
  total: number
  /** Index of the first rule after an unconditional one (never reached), or null. */
  unreachableFrom: number | null
}

/** Shares are rounded to 9 decimals: below the kernel's fixed-point noise, above float noise. */
const SHARE_DECIMALS = 1e9

export function effectiveShares(probabilities: ReadonlyArray<number | null>): CascadeResult {
  const shares: number[] = []
  let remaining = 1
  let unreachableFrom: number | null = null
  for (let i = 0; i < probabilities.length; i++) {
    const p = probabilities[i] ?? null
    const taken = p === null ? remaining : remaining * Math.min(Math.max(p, 0), 1)
    shares.push(Math.round(taken * SHARE_DECIMALS) / SHARE_DECIMALS)
    remaining -= taken
    if (p === null && unreachableFrom === null && i < probabilities.length - 1)
      unreachableFrom = i + 1
  }
  const total = shares.reduce((a, b) => a + b, 0)
  return {shares, total, unreachableFrom}
}

/**
 * The `--probability` kube-proxy writes on the rule of the k-th last endpoint: 1/k printed `%0.10f`
 * (proxier.go writeServiceToEndpointRules), so that each of n endpoints gets 1/n in all.
 */
export function cascadeProbability(remaining: number): string {
  return (1 / remaining).toFixed(10)
}

/** docs/model.md: the shares of one service port must sum to 1 within this. */
export const SHARE_SUM_TOLERANCE = 1e-6
