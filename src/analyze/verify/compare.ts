/**
 * Compares what the kernel did with a group of probes against what kp expects: verdict,
 * endpoints reached, their spread, masquerade and stickiness (docs/verify.md).
 */
import {splitHostPort} from '../../core/address.js'
import {SPREAD_P, chiSquareP} from './stats.js'
import type {CheckResult, Observation, ProbeGroup} from './types.js'

/** Below this many expected connections a missing endpoint can be chance: the spread test judges. */
const MISSING_EXPECTED = 8

export interface GroupComparison {
  result: CheckResult
  /** Only the spread test failed: re-probe with more connections before calling it a difference. */
  spreadOnly: boolean
}

function describe(o: Observation): string {
  if (o.verdict !== 'forwarded') return o.verdict
  return `forwarded ${o.dnat}${o.masquerade ? ' masqueraded' : ''}`
}

function describeExpected(g: ProbeGroup): string {
  const e = g.expect
  if (e.verdict !== 'forwarded') return e.verdict
  const eps = e.endpoints
    .map((x) => (x.share === null ? x.address : `${x.address} ${(x.share * 100).toFixed(1)}%`))
    .join(', ')
  const masq =
    e.masquerade === null
      ? ''
      : e.masquerade === 'hairpin'
        ? ', masqueraded when sent back to itself'
        : e.masquerade
          ? ', masqueraded'
          : ', not masqueraded'
  return `forwarded to ${eps}${masq}${e.sticky ? ', sticky' : ''}`
}

export function compareGroup(g: ProbeGroup, observed: Observation[]): GroupComparison {
  const e = g.expect
  const counts: Record<string, number> = {}
  for (const o of observed) counts[describe(o)] = (counts[describe(o)] ?? 0) + 1
  const differences: string[] = []
  let spread = false
  const wrongVerdict = observed.filter((o) => o.verdict !== e.verdict)
  if (wrongVerdict.length > 0) {
    const kinds = [...new Set(wrongVerdict.map((o) => o.verdict))].join(', ')
    differences.push(
      `${wrongVerdict.length} of ${observed.length} were ${kinds}, expected ${e.verdict}`,
    )
  }
  if (e.verdict === 'forwarded') {
    const forwarded = observed.filter((o) => o.verdict === 'forwarded')
    const expected = new Map(e.endpoints.map((x) => [x.address, x.share]))
    const reached = new Map<string, number>()
    for (const o of forwarded) reached.set(o.dnat!, (reached.get(o.dnat!) ?? 0) + 1)
    const extra = [...reached.keys()].filter((a) => !expected.has(a))
    if (extra.length > 0)
      differences.push(
        `reached ${extra.map((a) => `${a} (${reached.get(a)}×)`).join(', ')}, which explain does not name`,
      )
    const n = forwarded.length
    const missing = e.endpoints.filter(
      (x) => !reached.has(x.address) && (x.share ?? 1 / e.endpoints.length) * n >= MISSING_EXPECTED,
    )
    if (missing.length > 0 && !e.sticky)
      differences.push(`never reached ${missing.map((x) => x.address).join(', ')}`)
    if (e.sticky && reached.size > 1)
      differences.push(
        `session affinity: one client's ${n} connections went to ${reached.size} endpoints, expected one`,
      )
    if (
      !e.sticky &&
      extra.length === 0 &&
      e.endpoints.length >= 2 &&
      n >= 100 &&
      e.endpoints.every((x) => x.share !== null)
    ) {
      const p = chiSquareP(
        e.endpoints.map((x) => reached.get(x.address) ?? 0),
        e.endpoints.map((x) => x.share!),
      )
      if (p < SPREAD_P) {
        spread = true
        const seen = e.endpoints
          .map((x) => `${x.address} ${reached.get(x.address) ?? 0}`)
          .join(', ')
        differences.push(
          `spread ${seen} of ${n} does not fit the shares (chi-square p = ${p.toExponential(1)})`,
        )
      }
    }
    if (e.masquerade !== null) {
      const wrong = forwarded.filter((o) => {
        const want =
          e.masquerade === 'hairpin'
            ? (o.dnat === null ? null : splitHostPort(o.dnat)?.ip) === g.source
            : e.masquerade
        return o.masquerade !== want
      })
      if (wrong.length > 0) {
        const want =
          e.masquerade === 'hairpin'
            ? 'masquerade exactly when sent back to itself'
            : e.masquerade
              ? 'masqueraded'
              : 'not masqueraded'
        differences.push(
          `${wrong.length} of ${n} forwarded connections were not as expected: ${want}`,
        )
      }
    }
  }
  return {
    result: {
      client: g.client,
      frontend: g.frontend,
      source: g.source,
      probes: observed.length,
      agrees: differences.length === 0,
      observed: counts,
      expected: describeExpected(g),
      differences,
    },
    spreadOnly: spread && differences.length === 1,
  }
}

/** Groups of one service port that expect the same spread over the same endpoints (no affinity). */
export function spreadPools(groups: ProbeGroup[]): ProbeGroup[][] {
  const pools = new Map<string, ProbeGroup[]>()
  for (const g of groups) {
    const e = g.expect
    if (e.verdict !== 'forwarded' || e.sticky || e.endpoints.length < 2) continue
    if (e.endpoints.some((x) => x.share === null)) continue
    const key = `${g.service}|${JSON.stringify(e.endpoints)}`
    pools.set(key, [...(pools.get(key) ?? []), g])
  }
  return [...pools.values()].filter((p) => p.length > 1)
}

/** The pooled spread test: a difference in words, or null when the counts fit the shares. */
export function pooledSpread(
  pool: ProbeGroup[],
  observed: Map<ProbeGroup, Observation[]>,
): string | null {
  const endpoints = pool[0]!.expect.endpoints
  const counts = new Map<string, number>()
  let n = 0
  for (const g of pool)
    for (const o of observed.get(g) ?? [])
      if (o.verdict === 'forwarded' && o.dnat !== null) {
        counts.set(o.dnat, (counts.get(o.dnat) ?? 0) + 1)
        n++
      }
  if (n < 100) return null
  const p = chiSquareP(
    endpoints.map((x) => counts.get(x.address) ?? 0),
    endpoints.map((x) => x.share!),
  )
  if (p >= SPREAD_P) return null
  const seen = endpoints.map((x) => `${x.address} ${counts.get(x.address) ?? 0}`).join(', ')
  return `spread ${seen} of ${n} does not fit the shares (chi-square p = ${p.toExponential(1)})`
}
