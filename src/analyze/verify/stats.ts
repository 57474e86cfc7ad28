/**
 * The spread test of `kp verify`: Pearson's chi-square goodness of fit of observed endpoint
 * counts against explain's shares. At p < 1e-4 about 1 test in 10,000 fails by chance on a
 * correct kernel; a failure is re-probed before it is reported (docs/verify.md).
 */

export const SPREAD_P = 1e-4

/** ln Γ(x), Lanczos approximation (g = 7, n = 9). */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7,
  ]
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x)
  x -= 1
  let a = c[0]!
  const t = x + 7.5
  for (let i = 1; i < 9; i++) a += c[i]! / (x + i)
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a)
}

/** Upper regularised incomplete gamma Q(s, x). */
function gammaQ(s: number, x: number): number {
  if (x <= 0) return 1
  if (x < s + 1) {
    let sum = 1 / s
    let term = sum
    for (let n = 1; n < 1000; n++) {
      term *= x / (s + n)
      sum += term
      if (term < sum * 1e-15) break
    }
    return 1 - sum * Math.exp(-x + s * Math.log(x) - lnGamma(s))
  }
  // Continued fraction (Lentz).
  let b = x + 1 - s
  let c = 1e300
  let d = 1 / b
  let h = d
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - s)
    b += 2
    d = an * d + b
    if (Math.abs(d) < 1e-300) d = 1e-300
    c = b + an / c
    if (Math.abs(c) < 1e-300) c = 1e-300
    d = 1 / d
    const delta = d * c
    h *= delta
    if (Math.abs(delta - 1) < 1e-15) break
  }
  return Math.exp(-x + s * Math.log(x) - lnGamma(s)) * h
}

/** p-value of observed counts against expected shares (shares are renormalised). */
export function chiSquareP(observed: number[], shares: number[]): number {
  const n = observed.reduce((a, b) => a + b, 0)
  const total = shares.reduce((a, b) => a + b, 0)
  let stat = 0
  for (let i = 0; i < observed.length; i++) {
    const e = (n * shares[i]!) / total
    if (e === 0) {
      if (observed[i]! > 0) return 0
      continue
    }
    stat += (observed[i]! - e) ** 2 / e
  }
  const df = shares.filter((s) => s > 0).length - 1
  if (df < 1) return 1
  return gammaQ(df / 2, stat / 2)
}
