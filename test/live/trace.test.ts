/**
 * `kp trace` live: kube-proxy's rules from the corpus are loaded into a network namespace made
 * for the test, and kp run inside it (`ip netns exec`) must trace each connection as it does
 * from the file: the same ways, chances, DNAT targets, masquerade and verdicts with their
 * reasons. Only where the rules were read differs (`live:` paths and line numbers). Skips (and
 * says why) where namespaces cannot be made; fails under CI=true.
 */
import {readFileSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {TraceResult} from '../../src/analyze/trace/index.js'
import {
  Netns,
  addKubeProxyNfacctCounters,
  kernelUnavailable,
  objectsBeforeRules,
  runKpAsync,
  skipEachWhen,
} from './netns.js'

const skipReason = kernelUnavailable('test/live/trace.test.ts', [
  'ip',
  'iptables-restore',
  'iptables-save',
  'nft',
  'nfacct',
])
skipEachWhen(skipReason)

const IPTABLES = 'fixtures/iptables/upstream-overall/input.rules'
const NFT = 'fixtures/nft/upstream-overall/input.nft'

/** The connections traced: endpoints with chances, no endpoints, source ranges, NodePorts, a name. */
const CASES: string[][] = [
  ['172.30.0.44:80'],
  ['172.30.0.46:80'],
  ['5.6.7.8:80', '--from', '198.51.100.7'],
  ['5.6.7.8:80', '--from', '203.0.113.9'],
  [':3001', '--from', 'node'],
  [':3001', '--from', 'external'],
  ['ns5/svc5', '--from', 'external'],
]

/** A trace without where its rules were read: what must be equal live and from the file. */
function answer(t: TraceResult): unknown {
  return {
    mode: t.mode,
    packet: t.packet,
    outcomes: t.outcomes.map((o) => ({
      conditions: o.conditions,
      probability: Number(o.probability.toFixed(6)),
      verdict: o.verdict,
      dnat: o.dnat,
      masquerade: o.masquerade,
      reason: o.reason,
      // Chains and what each rule did, not the path:line (iptables-save reorders the restore input).
      steps: o.steps.map((s) => `${s.table} ${s.chain}: ${s.note}`),
    })),
  }
}

async function trace(args: string[], prefix?: string[]): Promise<TraceResult> {
  const r = await runKpAsync(['trace', ...args, '--json'], {prefix, timeout: 60_000})
  expect(r.exitCode, `kp trace ${args.join(' ')}: ${r.stderr}`).toBe(0)
  return JSON.parse(r.stdout) as TraceResult
}

describe('kp trace live, inside a namespace with the rules loaded, traces as from the dump', () => {
  describe('iptables (upstream-overall loaded with iptables-restore)', () => {
    let ns: Netns | undefined
    beforeAll(() => {
      if (skipReason !== null) return
      ns = new Netns()
      addKubeProxyNfacctCounters(ns)
      ns.run(['iptables-restore'], readFileSync(IPTABLES, 'utf8'))
    })
    afterAll(() => ns?.delete())

    for (const args of CASES)
      it(`kp trace ${args.join(' ')}`, async () => {
        const [live, file] = await Promise.all([
          trace(args, ns!.prefix),
          trace([...args, '-f', IPTABLES]),
        ])
        expect(live.outcomes.length).toBeGreaterThan(0)
        expect(answer(live)).toEqual(answer(file))
        // Read from the kernel, not the file.
        const paths = live.outcomes.flatMap((o) => o.steps.map((s) => s.rule?.source.path))
        expect(paths.some((p) => p?.startsWith('live:'))).toBe(true)
      })
  })

  describe('nftables (upstream nftables-overall loaded with nft -f)', () => {
    let ns: Netns | undefined
    beforeAll(() => {
      if (skipReason !== null) return
      ns = new Netns()
      ns.run(['nft', '-f', '-'], objectsBeforeRules(readFileSync(NFT, 'utf8')))
    })
    afterAll(() => ns?.delete())

    for (const args of CASES.slice(0, 3))
      it(`kp trace ${args.join(' ')}`, async () => {
        const [live, file] = await Promise.all([
          trace(args, ns!.prefix),
          trace([...args, '-f', NFT]),
        ])
        expect(live.outcomes.length).toBeGreaterThan(0)
        // nft renumbers handles and lists the table its own way: compare the answers, not the steps.
        const noSteps = (t: TraceResult) => ({
          ...(answer(t) as object),
          outcomes: (answer(t) as {outcomes: Array<{steps: unknown}>}).outcomes.map(
            ({steps: _steps, ...o}) => o,
          ),
        })
        expect(noSteps(live)).toEqual(noSteps(file))
      })
  })
})
