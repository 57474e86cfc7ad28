/**
 * The real-kernel round trip (issue 4 §4): every upstream corpus case is read from its fixture,
 * rendered into iptables AND into nftables, loaded with the real tools into a network namespace
 * made for it (one per case and target, so live mode detection sees only one mode), and read back
 * LIVE by kp inside that namespace: `kp diff SAVED_STATE live` must say the two are equal.
 *
 * This closes the loop reader -> renderer -> kernel -> live reader: a field the renderer writes in
 * a way the reader (or the kernel's listing of it) reads differently shows up as a difference.
 * Skips, saying why, where network namespaces cannot be made.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {ProxyState} from '../../src/model/types.js'
import {loadInputs} from '../../src/readers/load.js'
import {readState} from '../../src/readers/read-state.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import type {RenderedFile} from '../../src/render/types.js'
import {ROOT} from '../helpers/run-cli.js'
import {Netns, netnsUnavailable, runKpAsync} from '../live/netns.js'

const skipReason = netnsUnavailable()
if (skipReason) process.stderr.write(`test/roundtrip/kernel-roundtrip.test.ts skipped: ${skipReason}\n`)

interface CorpusCase {
  /** e.g. 'iptables/upstream-overall' */
  name: string
  input: string
}

/**
 * The upstream corpus cases as the reader fixtures hold them (fixtures/iptables/README.md,
 * fixtures/nft/PROVENANCE.md). upstream-sortrules-transition is left out: it is kube-proxy's
 * TestSortIPTablesRules sample, a mix of two layouts that is inconsistent on purpose and has
 * no expected state to round-trip (its README row says "by hand in fixtures.test.ts").
 */
function corpusCases(): CorpusCase[] {
  const out: CorpusCase[] = []
  for (const [dir, file] of [['iptables', 'input.rules'], ['nft', 'input.nft']] as const) {
    for (const name of readdirSync(join(ROOT, 'fixtures', dir)).sort()) {
      if (!name.startsWith('upstream-') || name === 'upstream-sortrules-transition') continue
      const input = join(ROOT, 'fixtures', dir, name, file)
      if (existsSync(input)) out.push({name: `${dir}/${name}`, input})
    }
  }
  return out
}

const CASES = corpusCases()
type Target = 'iptables' | 'nftables'
const TARGETS: Target[] = ['iptables', 'nftables']

/**
 * kube-proxy adds these jump rules to the built-in chains itself, with `-I`, outside the restore
 * input (reference/kube-proxy-iptables-nftables.md §2.2; proxier.go iptablesJumpChains). The
 * renderer leaves them out of its file and says so in a finding, so the test adds them the way
 * kube-proxy does: without them the KUBE-* chains are loaded but unreachable, which is not a
 * state kube-proxy ever leaves a node in.
 */
const JUMP_RULES: string[][] = [
  ['filter', 'INPUT', '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes load balancer firewall', '-j', 'KUBE-PROXY-FIREWALL'],
  ['filter', 'INPUT', '-m', 'comment', '--comment', 'kubernetes health check service ports', '-j', 'KUBE-NODEPORTS'],
  ['filter', 'INPUT', '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes externally-visible service portals', '-j', 'KUBE-EXTERNAL-SERVICES'],
  ['filter', 'FORWARD', '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes load balancer firewall', '-j', 'KUBE-PROXY-FIREWALL'],
  ['filter', 'FORWARD', '-m', 'comment', '--comment', 'kubernetes forwarding rules', '-j', 'KUBE-FORWARD'],
  ['filter', 'FORWARD', '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'],
  ['filter', 'FORWARD', '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes externally-visible service portals', '-j', 'KUBE-EXTERNAL-SERVICES'],
  ['filter', 'OUTPUT', '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes load balancer firewall', '-j', 'KUBE-PROXY-FIREWALL'],
  ['filter', 'OUTPUT', '-m', 'conntrack', '--ctstate', 'NEW', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'],
  ['nat', 'OUTPUT', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'],
  ['nat', 'PREROUTING', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES'],
  ['nat', 'POSTROUTING', '-m', 'comment', '--comment', 'kubernetes postrouting rules', '-j', 'KUBE-POSTROUTING'],
]

/** Reads a fixture the way `kp list -f` does, in-process (faster than a CLI run per case). */
async function readFixture(path: string): Promise<ProxyState> {
  const inputs = await loadInputs([path])
  return readState({sources: inputs.sources, facts: inputs.facts})
}

/** The line a loader complained about (`line N` from iptables-restore, `FILE:N:C` from nft), with its text. */
function offendingLine(message: string, file: RenderedFile, path: string): string {
  const m = /line (\d+)/.exec(message) ?? new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):`).exec(message)
  if (!m) return '(the loader named no line)'
  const n = Number(m[1])
  return `${file.name}:${n}: ${file.text.split('\n')[n - 1] ?? '(past the end of the file)'}`
}

function loaderFor(target: Target, file: RenderedFile, path: string): string[] {
  if (target === 'nftables') return ['nft', '-f', path]
  return [file.family === 'IPv6' ? 'ip6tables-restore' : 'iptables-restore', '--noflush', path]
}

/** Loads every rendered file into the namespace; a load error fails with the line it names. */
function load(ns: Netns, target: Target, files: RenderedFile[], dir: string): void {
  for (const file of files) {
    const path = join(dir, `${target}-${file.name}`)
    writeFileSync(path, file.text)
    const r = spawnSync(ns.prefix[0]!, [...ns.prefix.slice(1), ...loaderFor(target, file, path)], {encoding: 'utf8'})
    if (r.status !== 0) {
      throw new Error(`${loaderFor(target, file, path).join(' ')} exited ${r.status}:\n${r.stderr}\noffending line: ${offendingLine(r.stderr, file, path)}`)
    }
    if (target === 'iptables') {
      const tool = file.family === 'IPv6' ? 'ip6tables' : 'iptables'
      // -I in reverse, so the rules end up first in the order listed, as kube-proxy's -I does per rule.
      for (const [table, chain, ...rule] of [...JUMP_RULES].reverse()) ns.run([tool, '-t', table!, '-I', chain!, ...rule])
    }
  }
}

function render(state: ProxyState, target: Target): RenderedFile[] {
  return (target === 'iptables' ? renderIptables(state) : renderNftables(state)).files
}

describe.skipIf(skipReason !== null)('round trip: corpus state -> render -> kernel -> live read', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kp-roundtrip-'))
  afterAll(() => rmSync(tmp, {recursive: true, force: true}))

  it('finds the corpus cases', () => {
    // 6 iptables + 8 nftables upstream cases (fixtures/iptables/README.md, fixtures/nft/PROVENANCE.md).
    expect(CASES.map((c) => c.name.split('/')[0])).toEqual([...Array(6).fill('iptables'), ...Array(8).fill('nft')])
  })

  describe.concurrent.each(CASES)('$name', (c) => {
    it.each(TARGETS)('renders into %s, loads, and reads back live unchanged', async (target) => {
      const state = await readFixture(c.input)
      expect(state.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
      const dir = mkdtempSync(join(tmp, `${c.name.replace('/', '-')}-${target}-`))
      const saved = join(dir, 'source-state.json')
      writeFileSync(saved, JSON.stringify(state))
      const ns = new Netns()
      try {
        load(ns, target, render(state, target), dir)
        const r = await runKpAsync(['diff', saved, 'live', '--json'], {prefix: ns.prefix})
        if (r.exitCode !== 0) process.stderr.write(`${c.name} -> ${target}: kp diff exited ${r.exitCode}\n${r.stderr}\n${r.stdout}\n`)
        expect(r.exitCode).toBe(0)
        expect((JSON.parse(r.stdout) as {equal: boolean}).equal).toBe(true)
      } finally {
        ns.delete()
      }
    })
  })
})
