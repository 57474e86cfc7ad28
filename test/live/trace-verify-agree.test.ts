/**
 * `kp trace` agrees with the kernel (issue 24): `kp verify` loads each fixture's rules into its
 * sandbox and sends its probes (kp makes and deletes its own kp-v-<pid>-… namespaces). Its plan is
 * rebuilt here with the same API (it is a pure function of the rules), and every connection the
 * kernel handled must be one that `kp trace` of the same client, source, destination, port and
 * protocol says is possible: the same DNAT target, masquerade, reject or drop. Where enough probes
 * were sent, the kernel must also have reached every endpoint trace names. verify runs as the CLI:
 * its probe program is kp itself, which a test worker cannot start.
 * Stand-ins: none but verify's sink namespace, which plays every endpoint (no pods exist here).
 */
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {traceConnection, type TraceResult} from '../../src/analyze/trace/index.js'
import {collectTraceSources, type TraceSources} from '../../src/analyze/trace/inputs.js'
import type {ClientKind} from '../../src/analyze/trace/types.js'
import {planVerify, type VerifyPlan} from '../../src/analyze/verify/plan.js'
import type {ProbeGroup} from '../../src/analyze/verify/types.js'
import type {VerifyResult} from '../../src/analyze/verify/types.js'
import type {ProxyState} from '../../src/model/types.js'
import {readFiles} from '../../src/readers/read-state.js'
import {ROOT, runKpAsync} from '../helpers/run-cli.js'
import {kernelUnavailable, skipEachWhen} from './netns.js'

const TOOLS = ['ip', 'iptables-restore', 'nft', 'conntrack', 'nfacct', 'sysctl']
const skipReason = kernelUnavailable('test/live/trace-verify-agree.test.ts', TOOLS)
skipEachWhen(skipReason)

/** Below this many expected connections an endpoint trace names may be missed by chance. */
const ENOUGH = 8
/** verify's least --probes: where it tests a spread it sends at least this many connections. */
const PROBES = 100

type Read = TraceSources & {state: ProxyState}

async function read(file: string): Promise<Read> {
  const {sources, onParsed} = collectTraceSources()
  const {state} = await readFiles({files: [join(ROOT, file)], onParsed})
  return {state, ...sources}
}

/** verify's kinds of client as trace's: every outside client is `external` with its address. */
const TRACE_CLIENT: Record<ProbeGroup['client'], ClientKind> = {
  external: 'external',
  'second-node-address': 'external',
  'inside-source-range': 'external',
  pod: 'pod',
  hairpin: 'pod',
  node: 'node',
  localhost: 'node',
  'unused-port': 'pod',
}

/** What the kernel did with one connection, in verify's words (`forwarded IP:PORT masqueraded`). */
type Seen = string

/** Every way trace says the connection can go, in the same words, with its chance. */
function possible(t: TraceResult, udp: boolean): Map<Seen, number> {
  const out = new Map<Seen, number>()
  for (const o of t.outcomes) {
    let words: string
    if (o.verdict === 'forwarded' && o.dnat !== null)
      words = `forwarded ${o.dnat}${o.masquerade ? ' masqueraded' : ''}`
    else if (o.verdict === 'forwarded' || o.verdict === 'delivered') words = 'passed'
    else if (o.verdict === 'rejected' || o.verdict === 'dropped')
      words = udp ? 'blocked' : o.verdict
    else words = `unknown: ${o.reason ?? ''}`
    out.set(words, (out.get(words) ?? 0) + o.probability)
  }
  return out
}

/**
 * A connection DNATed to an address of the node itself is delivered here and never leaves
 * through POSTROUTING, so conntrack shows no masquerade whatever the rules say.
 */
function sameAs(seen: Seen, traced: Seen, nodeIps: string[]): boolean {
  if (seen === traced) return true
  const target = /^forwarded (\S+):\d+/.exec(traced)?.[1]
  return target !== undefined && nodeIps.includes(target) && seen === traced.replace(/ masq.*/, '')
}

interface Disagreement {
  group: string
  kernel: Record<Seen, number>
  trace: Record<Seen, number>
  why: string
}

/** `file`'s rules traced against what the kernel did with `loaded` (by default the same rules). */
async function agreeOn(
  file: string,
  loaded = join(ROOT, file),
): Promise<{disagreements: Disagreement[]; planned: number; groups: number; full: number}> {
  const r = await read(file)
  const plan: VerifyPlan = planVerify(r.state, {probes: PROBES})
  const run = await runKpAsync(['verify', '-f', loaded, '--probes', String(PROBES), '--json'], {
    timeout: 60_000,
  })
  expect(run.exitCode, run.stderr).toBeLessThanOrEqual(1)
  const result = JSON.parse(run.stdout) as VerifyResult
  const disagreements: Disagreement[] = []
  let groups = 0
  let full = 0
  for (const g of plan.groups) {
    const check = result.services
      .find((s) => s.service === g.service)
      ?.checks.find(
        (c) => c.client === g.client && c.frontend === g.frontend && c.source === g.source,
      )
    if (check === undefined) continue
    groups++
    const t = traceConnection({
      state: r.state,
      rulesets: r.rulesets,
      nftDocuments: r.nftDocuments,
      nodeIps: plan.addresses.nodeIps,
      packet: {
        from: TRACE_CLIENT[g.client],
        source: g.source,
        destination: g.destination,
        port: g.port,
        protocol: g.protocol,
      },
    })
    const traced = possible(t, g.protocol === 'UDP')
    const name = `${file} ${g.service} ${g.client} ${g.source} -> ${g.destination}:${g.port}/${g.protocol}`
    const report = (why: string) =>
      disagreements.push({
        group: name,
        kernel: check.observed,
        trace: Object.fromEntries(traced),
        why,
      })
    if (t.unsupported !== null) {
      report(`trace cannot walk it: ${t.unsupported}`)
      continue
    }
    const outside = Object.keys(check.observed).filter(
      (seen) => ![...traced.keys()].some((w) => sameAs(seen, w, plan.addresses.nodeIps)),
    )
    if (outside.length > 0) {
      report(`the kernel did what trace says cannot happen: ${outside.join('; ')}`)
      continue
    }
    // Alternatives under conditions are not odds: only an unconditional answer must be reached in full.
    const conditional = t.outcomes.some((o) => o.conditions.length > 0)
    if (conditional || g.expect.sticky) continue
    full++
    const missed = [...traced]
      .filter(([, p]) => p * check.probes >= ENOUGH)
      .map(([w]) => w)
      .filter(
        (w) => !Object.keys(check.observed).some((seen) => sameAs(seen, w, plan.addresses.nodeIps)),
      )
    if (missed.length > 0)
      report(`trace names what ${check.probes} probes never saw: ${missed.join('; ')}`)
  }
  return {disagreements, planned: plan.groups.length, groups, full}
}

const tmp = mkdtempSync(join(tmpdir(), 'kp-trace-agree-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

describe('kp trace agrees with the kernel (verify sandbox)', () => {
  const fixtures = [
    'fixtures/verify/generated-node/ruleset.nft',
    'fixtures/iptables/upstream-overall/input.rules',
    'fixtures/nft/upstream-overall/input.nft',
    'fixtures/iptables/handmade-ipv6/input.rules',
    // Issue 24: 127.0.0.1:NodePort of an old KUBE-XLB layout, the ≤1.24 "no local endpoints"
    // mark on an LB IP, kube-proxy 1.37's localhost reject map, and localhost NodePorts off with
    // a port rejected in filter INPUT (trace walks the loopback pass back into the node).
    'fixtures/iptables/handmade-legacy-xlb/input.rules',
    'fixtures/verify/legacy-xlb-lb-nolocal/input.rules',
    'fixtures/verify/nft-localhost-reject/ruleset.nft',
    'fixtures/verify/iptables-localhost-off/iptables-save.txt',
  ]
  for (const file of fixtures)
    it(`${file}: every connection the kernel handled is one trace says can happen`, async () => {
      const {disagreements, planned, groups, full} = await agreeOn(file)
      process.stderr.write(`${file}: ${groups} probe groups, ${full} compared in full\n`)
      expect(disagreements).toEqual([])
      // The plan rebuilt here is the one kp verify ran: each of its groups has a check.
      expect(groups).toBe(planned)
      expect(groups).toBeGreaterThan(0)
      expect(full).toBeGreaterThan(0)
    }, 60_000)

  it('tells rules loaded apart from the rules traced (the comparison can fail)', async () => {
    const file = 'fixtures/verify/generated-node/ruleset.nft'
    const text = readFileSync(join(ROOT, file), 'utf8')
    const broken = text.replace(/1 : 10\.244\.2\.10 \. 8080/, '1 : 10.244.2.99 . 8080')
    expect(broken).not.toBe(text)
    const loaded = join(tmp, 'broken.nft')
    writeFileSync(loaded, broken)
    const {disagreements} = await agreeOn(file, loaded)
    expect(disagreements.length).toBeGreaterThan(0)
    for (const d of disagreements) {
      expect(d.group).toMatch(/ gen\/web:/)
      expect(d.why).toMatch(/10\.244\.2\.99:8080/)
    }
  }, 60_000)

  it('tells loaded IPv6 rules apart from the rules traced', async () => {
    const file = 'fixtures/iptables/handmade-ipv6/input.rules'
    const text = readFileSync(join(ROOT, file), 'utf8')
    const broken = text.replace(
      '--to-destination [fd00:10:244::22]:8443',
      '--to-destination [fd00:10:244::99]:8443',
    )
    expect(broken).not.toBe(text)
    const loaded = join(tmp, 'broken-ipv6.rules')
    writeFileSync(loaded, broken)
    const {disagreements} = await agreeOn(file, loaded)
    expect(disagreements.length).toBeGreaterThan(0)
    for (const d of disagreements) {
      expect(d.group).toMatch(/ ns9\/svc9\/tcp /)
      expect(d.why).toMatch(/\[fd00:10:244::99\]:8443/)
    }
  }, 60_000)
})
