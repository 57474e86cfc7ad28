/**
 * `kp verify`'s run: build the sandbox, load the rules, send the planned probes in rounds, read
 * what the kernel did from conntrack, compare with kp's expectation, re-probe groups that fail
 * only the spread test, and always remove the sandbox.
 */
import {
  compareGroup,
  type GroupComparison,
  pooledSpread,
  spreadPools,
} from '../../analyze/verify/compare.js'
import type {VerifyPlan} from '../../analyze/verify/plan.js'
import {joinHostPort} from '../../core/address.js'
import type {
  Observation,
  ProbeGroup,
  ServiceVerdict,
  VerifyResult,
} from '../../analyze/verify/types.js'
import type {ProbeAnswer, ProbeSpec} from './probe.js'
import {type ConntrackEntry, type RulesToLoad, Sandbox} from './sandbox.js'

export interface VerifyRun {
  plan: VerifyPlan
  rules: RulesToLoad
  mode: string
  /** Called after each round with probes done and probes planned so far. */
  progress?: (done: number, total: number) => void
}

/** Probes per round: conntrack is read and flushed between rounds. */
const ROUND = 12_000
/** How long a wave of probes waits for refusals (REJECT answers at once on a local link). */
const WAIT_MS = 250
/** A group that fails only the spread test is re-probed with this many times the connections. */
const REPROBE_FACTOR = 4

const REJECTED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EACCES'])

export function observe(p: ProbeSpec, saw: string, entry: ConntrackEntry | undefined): Observation {
  if (entry !== undefined) {
    const dnat = entry.replySrc !== entry.dst || entry.replySport !== entry.dport
    // Over loopback the entry is confirmed on the way out, before filter INPUT rejects it: the
    // client's refusal tells (a connection that reaches a listener is answered).
    if (!dnat && REJECTED.has(saw))
      return {verdict: p.protocol === 'UDP' ? 'blocked' : 'rejected', dnat: null, masquerade: null}
    return {
      verdict: dnat ? 'forwarded' : 'passed',
      dnat: dnat ? joinHostPort(entry.replySrc, entry.replySport) : null,
      masquerade: entry.replyDst !== entry.src,
    }
  }
  if (p.protocol === 'UDP') return {verdict: 'blocked', dnat: null, masquerade: null}
  return {verdict: REJECTED.has(saw) ? 'rejected' : 'dropped', dnat: null, masquerade: null}
}

export async function runVerify(run: VerifyRun): Promise<VerifyResult> {
  const started = Date.now()
  const {plan} = run
  const sb = await Sandbox.create(plan.addresses)
  let total = plan.groups.reduce((n, g) => n + g.count, 0)
  let done = 0
  try {
    await sb.load(run.rules)
    await sb.listen(plan.listenPorts, plan.listenUdpPorts)
    const probeGroups = async (groups: Array<{g: ProbeGroup; count: number}>) => {
      const observed = new Map<ProbeGroup, Observation[]>()
      // Rounds of whole groups, so that a group's probes are read from one conntrack table.
      let batch: Array<{g: ProbeGroup; count: number}> = []
      let size = 0
      const flush = async () => {
        const obs = await probeRound(sb, batch)
        for (const [g, o] of obs) observed.set(g, [...(observed.get(g) ?? []), ...o])
        done += size
        run.progress?.(done, total)
        batch = []
        size = 0
      }
      for (const item of groups) {
        if (size > 0 && size + item.count > ROUND) await flush()
        batch.push(item)
        size += item.count
      }
      if (size > 0) await flush()
      return observed
    }
    const first = await probeGroups(plan.groups.map((g) => ({g, count: g.count})))
    const compared = new Map<ProbeGroup, GroupComparison>()
    for (const g of plan.groups) compared.set(g, compareGroup(g, first.get(g) ?? []))
    const again = plan.groups.filter((g) => compared.get(g)!.spreadOnly)
    if (again.length > 0) {
      total += again.reduce((n, g) => n + g.count * REPROBE_FACTOR, 0)
      const second = await probeGroups(again.map((g) => ({g, count: g.count * REPROBE_FACTOR})))
      for (const g of again) {
        const c = compareGroup(g, second.get(g) ?? [])
        c.result.differences = c.result.differences.map((d) => `${d} (and again on re-probing)`)
        compared.set(g, c)
      }
    }
    // The spread over a service port's endpoints is the same for every client of a frontend kind:
    // pooled, the probes of all clients test it with more power than one group's alone.
    const pools = spreadPools(plan.groups.filter((g) => compared.get(g)!.result.agrees))
    const failing = pools.filter((pool) => pooledSpread(pool, first) !== null)
    if (failing.length > 0) {
      const groups = failing.flat()
      total += groups.reduce((n, g) => n + g.count * REPROBE_FACTOR, 0)
      const second = await probeGroups(groups.map((g) => ({g, count: g.count * REPROBE_FACTOR})))
      for (const pool of failing) {
        const why = pooledSpread(pool, second)
        if (why === null) continue
        const head = compared.get(pool[0]!)!.result
        head.agrees = false
        head.differences.push(
          `${why}, pooled over ${pool.map((g) => g.client).join(', ')} (and again on re-probing)`,
        )
      }
    }
    const out = result(
      run,
      [...compared.values()].map((c) => c.result),
      plan,
      started,
      done,
    )
    return {...out, assumedHooks: sb.assumedHooks}
  } finally {
    await sb.remove()
  }
}

async function probeRound(
  sb: Sandbox,
  batch: Array<{g: ProbeGroup; count: number}>,
): Promise<Map<ProbeGroup, Observation[]>> {
  const nextPort = new Map<string, number>()
  const specs: Array<{spec: ProbeSpec; g: ProbeGroup; ns: ProbeGroup['namespace']}> = []
  for (const {g, count} of batch)
    for (let i = 0; i < count; i++) {
      const port = nextPort.get(g.source) ?? 10_000
      nextPort.set(g.source, port + 1)
      specs.push({
        g,
        ns: g.namespace,
        spec: {
          id: specs.length,
          protocol: g.protocol,
          source: g.source,
          sourcePort: port,
          destination: g.destination,
          port: g.port,
          ...(g.patient ? {patient: true} : {}),
        },
      })
    }
  const answers = new Map<number, string>()
  const byNs = (ns: ProbeGroup['namespace']) => specs.filter((s) => s.ns === ns).map((s) => s.spec)
  const runs = await Promise.all(
    (['ext', 'pod', 'node'] as const).map((ns) => sb.probe(ns, byNs(ns), WAIT_MS)),
  )
  for (const a of runs.flat() as ProbeAnswer[]) answers.set(a.id, a.saw)
  const entries = new Map<string, ConntrackEntry>()
  for (const e of await sb.conntrack()) entries.set(`${e.protocol}|${e.src}|${e.sport}`, e)
  await sb.flushConntrack()
  const out = new Map<ProbeGroup, Observation[]>()
  for (const {spec, g} of specs) {
    const entry = entries.get(`${spec.protocol.toLowerCase()}|${spec.source}|${spec.sourcePort}`)
    const o = observe(spec, answers.get(spec.id) ?? 'timeout', entry)
    out.set(g, [...(out.get(g) ?? []), o])
  }
  return out
}

function loadedWith(rules: VerifyRun['rules']): string {
  if (rules.kind !== 'iptables') return `nft ${rules.kind === 'nft-json' ? '-j ' : ''}-f`
  const backend = rules.backend === undefined ? '' : `${rules.backend}-`
  return [
    rules.text.trim() !== '' ? `iptables-${backend}restore` : null,
    (rules.text6 ?? '').trim() !== '' ? `ip6tables-${backend}restore` : null,
  ]
    .filter((x) => x !== null)
    .join(' + ')
}

function result(
  run: VerifyRun,
  checks: VerifyResult['services'][number]['checks'],
  plan: VerifyPlan,
  started: number,
  probes: number,
): VerifyResult {
  const byService = new Map<string, ServiceVerdict>()
  plan.groups.forEach((g, i) => {
    const v = byService.get(g.service) ?? {
      service: g.service,
      verdict: 'agrees' as const,
      probes: 0,
      checks: [],
      reason: null,
    }
    const c = checks[i]!
    v.checks.push(c)
    v.probes += c.probes
    if (!c.agrees) v.verdict = 'differs'
    byService.set(g.service, v)
  })
  for (const s of plan.skipped)
    if (!byService.has(s.service))
      byService.set(s.service, {
        service: s.service,
        verdict: 'not verified',
        probes: 0,
        checks: [],
        reason: s.reason,
      })
  const services = [...byService.values()].sort((a, b) => a.service.localeCompare(b.service))
  const count = (v: ServiceVerdict['verdict']) => services.filter((s) => s.verdict === v).length
  return {
    schemaVersion: 1,
    kind: 'VerifyResult',
    mode: run.mode,
    loadedWith: loadedWith(run.rules),
    probes,
    assumedHooks: [],
    services,
    summary: {
      agrees: count('agrees'),
      differs: count('differs'),
      notVerified: count('not verified'),
    },
    addresses: plan.addresses,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  }
}
