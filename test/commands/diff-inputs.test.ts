/**
 * `kp diff A B` on every kind of input, and when A, B or both have input errors: A is read
 * before B, so A's diagnostics come first and A's input error wins.
 */
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {bundleFile, writeBundle} from '../helpers/bundle.js'
import {ROOT, type CliResult} from '../helpers/run-cli.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

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

const tmp = mkdtempSync(join(tmpdir(), 'kp-diff-inputs-'))
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

const runDiff = (args: string[]): Promise<CliResult> => runKpInProcess(['diff', ...args])

describe('kp diff of two inputs: exit code, no stack trace', () => {
  it.each([
    ['equal saved states', [`${STATES}iptables.state.json`, `${STATES}nftables.state.json`], 0],
    [
      'equal saved states, --json',
      [`${STATES}iptables.state.json`, `${STATES}nftables.state.json`, '--json'],
      0,
    ],
    [
      'iptables rules equal to their cluster objects',
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
    ['B an empty folder', [IPT_OVERALL, EMPTY_FOLDER], 3],
    ['B a broken bundle, --json', [IPT_OVERALL, BROKEN_BUNDLE, '--json'], 3],
    ['A with an error diagnostic', [NFT_UNRELATED, NFT_OVERALL], 3],
    ['A and B both with errors: A wins', [NFT_UNRELATED, NOT_A_DUMP], 3],
    ['A an empty folder, B with an error', [EMPTY_FOLDER, NFT_UNRELATED, '--json'], 3],
    ['A a broken bundle, B fine', [BROKEN_BUNDLE, IPT_OVERALL], 3],
  ] as Array<[string, string[], number]>)('%s', async (_name, args, exitCode) => {
    const r = await runDiff(args)
    expect(r.exitCode).toBe(exitCode)
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /)
  })

  it('reports A before B (a check of the check: the fixtures do warn on both sides)', async () => {
    const r = await runDiff([IPT_WARNINGS, IPVSADM_WARNINGS])
    const a = r.stderr.indexOf(IPT_WARNINGS)
    const b = r.stderr.indexOf(IPVSADM_WARNINGS)
    expect(a).toBeGreaterThanOrEqual(0)
    expect(b).toBeGreaterThan(a)
  })

  it("reports only A's error when both fail", async () => {
    const r = await runDiff([NFT_UNRELATED, NOT_A_DUMP])
    expect(r.stderr).toContain(`kp: ${NFT_UNRELATED}:1:`)
    expect(r.stderr).not.toContain(NOT_A_DUMP)
  })
})
