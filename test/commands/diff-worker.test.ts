/**
 * `kp diff A B` reads large inputs at the same time, B in a worker thread
 * (src/readers/read-in-worker.ts). The fixtures are small, so the threshold is forced:
 * KP_DIFF_WORKER_MIN_BYTES=0 reads B in a worker, a huge one reads in turn as before. The two
 * must print the same stdout and stderr and exit the same way, on equal and different inputs,
 * and when A, B or both have input errors. A preloaded spy (test/helpers/worker-spy.cjs)
 * records that the worker really started, and crashes it to check kp reads B itself then.
 */
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {bundleFile, writeBundle} from '../helpers/bundle.js'
import {ROOT, runKpAsync, type CliResult} from '../helpers/run-cli.js'

const STATES = 'fixtures/diff/upstream-overall/'
const IPT_OVERALL = 'fixtures/iptables/upstream-overall/input.rules'
const IPT_OLDER = 'fixtures/iptables/upstream-multipleservices-older/input.rules'
const NFT_OVERALL = 'fixtures/nft/upstream-overall/input.nft'
const CLUSTER = 'fixtures/kube/iptables-overall/cluster.yaml'
/** Warnings (IPT_UNKNOWN_RULE) and hidden info diagnostics on each side. */
const IPT_WARNINGS = 'fixtures/iptables/upstream-sortrules-transition/input.rules'
const IPVSADM_WARNINGS = 'fixtures/ipvsadm/variants/ipvsadm-Ln.txt'
const NFT_INFO = 'fixtures/nft/upstream-syncrepeated-stalechains/input.nft'
/** An nft ruleset without kube-proxy's table: an error diagnostic (exit 3). */
const NFT_UNRELATED = 'fixtures/nft/bad/unrelated.nft'
/** Not a format kp reads: INPUT_UNKNOWN_FORMAT. */
const NOT_A_DUMP = 'fixtures/iptables/upstream-overall/source-ranges.json'

const tmp = mkdtempSync(join(tmpdir(), 'kp-diff-worker-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const EMPTY_FOLDER = join(tmp, 'empty-folder')
mkdirSync(EMPTY_FOLDER)
const BROKEN_BUNDLE = join(tmp, 'broken-bundle')
mkdirSync(BROKEN_BUNDLE)
writeFileSync(join(BROKEN_BUNDLE, 'manifest.json'), '{"kind": "KpBundle",')
const EMPTY_FILE = join(tmp, 'empty.rules')
writeFileSync(EMPTY_FILE, '\n')
/** A `kp collect` bundle of the overall iptables dump, with node facts. */
const BUNDLE = writeBundle(
  join(tmp, 'bundle'),
  [
    [
      bundleFile('iptables/iptables-save.txt', {
        command: ['iptables-save'],
        tool: 'iptables v1.8.9 (nf_tables)',
      }),
      readFileSync(join(ROOT, IPT_OVERALL)),
    ],
  ],
  {
    node: 'node-b',
    kernel: '6.1.0',
    nftVersion: null,
    iptablesBackends: ['nf_tables'],
    sysctls: {},
  },
)

const WORKER_ON = '0'
const WORKER_OFF = '1e18'
/** A kp that hangs on a worker fails the test instead of blocking it. */
const TIMEOUT = 45_000

const SPY_OPTIONS =
  `${process.env.NODE_OPTIONS ?? ''} --require ${join(ROOT, 'test/helpers/worker-spy.cjs')}`.trim()

/** `threshold` '' is the default one. */
function runDiff(
  args: string[],
  threshold: string,
  spy: {log: string; crash?: string},
): Promise<CliResult> {
  return runKpAsync(['diff', ...args], {
    timeout: TIMEOUT,
    env: {
      KP_DIFF_WORKER_MIN_BYTES: threshold,
      NODE_OPTIONS: SPY_OPTIONS,
      KP_SPY_LOG: spy.log,
      KP_SPY_CRASH: spy.crash ?? '',
    },
  })
}

let runs = 0
function spyLog(): string {
  const log = join(tmp, `spy-${++runs}.log`)
  writeFileSync(log, '')
  return log
}
const workersStarted = (log: string): string[] =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('started '))

/** Runs the diff with the worker forced on and off; both must print and exit the same. */
async function onAndOff(args: string[], crash?: string): Promise<{on: CliResult; off: CliResult}> {
  const onLog = spyLog()
  const offLog = spyLog()
  const [on, off] = await Promise.all([
    runDiff(args, WORKER_ON, {log: onLog, crash}),
    runDiff(args, WORKER_OFF, {log: offLog, crash}),
  ])
  expect(workersStarted(onLog)).toEqual([expect.stringMatching(/read-worker(-tsx\.mjs|\.js)$/)])
  expect(workersStarted(offLog)).toEqual([])
  expect(on).toEqual(off)
  return {on, off}
}

describe('kp diff reads B in a worker: same output and exit code as reading in turn', () => {
  it.each([
    ['equal saved states', [`${STATES}iptables.state.json`, `${STATES}nftables.state.json`], 0],
    [
      'equal saved states, --json',
      [`${STATES}iptables.state.json`, `${STATES}nftables.state.json`, '--json'],
      0,
    ],
    [
      'iptables rules equal to their cluster objects (--cluster in the worker too)',
      [IPT_OVERALL, CLUSTER, '--node', 'test-node', '--cluster', CLUSTER],
      0,
    ],
    ['a bundle folder against its own dump', [IPT_OVERALL, BUNDLE, '--json'], 0],
    ['iptables dumps that differ in one service', [IPT_OVERALL, IPT_OLDER], 1],
    ['iptables vs nftables, --json', [IPT_OVERALL, NFT_OVERALL, '--json'], 1],
    [
      'nft text read with --mode iptables',
      [
        'fixtures/nft/iptables-nft-multipleservices-older/input.nft',
        IPT_OLDER,
        '--mode',
        'iptables',
      ],
      0,
    ],
    ['warnings on both sides, A first', [IPT_WARNINGS, IPVSADM_WARNINGS], 1],
    ['info diagnostics on both sides, --verbose', [NFT_INFO, IPT_WARNINGS, '--verbose'], 1],
    ['B with an error diagnostic after A warnings', [IPT_WARNINGS, NFT_UNRELATED], 3],
    ['B in an unknown format, --json', [IPT_OVERALL, NOT_A_DUMP, '--json'], 3],
    ['B an empty file', [NFT_OVERALL, EMPTY_FILE], 3],
    ['B an empty folder (an InputError thrown in the worker)', [IPT_OVERALL, EMPTY_FOLDER], 3],
    [
      'B a broken bundle (an InputError thrown in the worker), --json',
      [IPT_OVERALL, BROKEN_BUNDLE, '--json'],
      3,
    ],
    ['A with an error diagnostic', [NFT_UNRELATED, NFT_OVERALL], 3],
    ['A and B both with errors: A wins', [NFT_UNRELATED, NOT_A_DUMP], 3],
    ['A an empty folder, B with an error', [EMPTY_FOLDER, NFT_UNRELATED, '--json'], 3],
    ['A a broken bundle, B fine', [BROKEN_BUNDLE, IPT_OVERALL], 3],
  ] as Array<[string, string[], number]>)('%s', async (_name, args, exitCode) => {
    const {on} = await onAndOff(args)
    expect(on.exitCode).toBe(exitCode)
    expect(on.stderr).not.toMatch(/internal error|\n\s+at /)
  })

  it('reports A before B (a check of the check: the fixtures do warn on both sides)', async () => {
    const {on} = await onAndOff([IPT_WARNINGS, IPVSADM_WARNINGS])
    const a = on.stderr.indexOf(IPT_WARNINGS)
    const b = on.stderr.indexOf(IPVSADM_WARNINGS)
    expect(a).toBeGreaterThanOrEqual(0)
    expect(b).toBeGreaterThan(a)
  })

  it("reports only A's error when both fail, though the worker has read B", async () => {
    const {on} = await onAndOff([NFT_UNRELATED, NOT_A_DUMP])
    expect(on.stderr).toContain(`kp: ${NFT_UNRELATED}:1:`)
    expect(on.stderr).not.toContain(NOT_A_DUMP)
  })
})

describe('kp diff when the worker crashes (a bug)', () => {
  it.each(['throw', 'exit', 'async'])(
    'reads B itself when the worker crashes (%s): same output, no stack trace, no hang',
    async (crash) => {
      const cases: Array<[string[], number]> = [
        [[IPT_OVERALL, NFT_OVERALL, '--json'], 1],
        [[`${STATES}iptables.state.json`, `${STATES}nftables.state.json`], 0],
        [[IPT_OVERALL, NFT_UNRELATED], 3],
        [[NFT_UNRELATED, NFT_OVERALL], 3],
      ]
      const results = await Promise.all(cases.map(([args]) => onAndOff(args, crash)))
      expect(results.map((r) => r.on.exitCode)).toEqual(cases.map(([, exitCode]) => exitCode))
      for (const {on} of results)
        expect(on.stderr).not.toMatch(/worker-spy|internal error|\n\s+at /)
    },
  )
})

describe('kp diff on small inputs', () => {
  it('reads in turn, without a worker, at the default threshold', async () => {
    const log = spyLog()
    const r = await runDiff([IPT_OVERALL, NFT_OVERALL], '', {log})
    expect(r.exitCode).toBe(1)
    expect(workersStarted(log)).toEqual([])
  })
})
