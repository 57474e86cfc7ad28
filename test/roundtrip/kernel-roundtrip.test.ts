/**
 * The real-kernel round trip (issue 4 §4): every upstream corpus case is read from its fixture,
 * rendered into iptables AND into nftables, loaded with the real tools into a network namespace
 * made for it (one per case and target, so live mode detection sees only one mode), and read back
 * LIVE by kp inside that namespace: `kp diff SAVED_STATE live` must find every service port,
 * frontend and endpoint unchanged, and no node-setting difference except the ones the target mode
 * cannot express (FIXED_BY_TARGET: iptables -> nftables loses randomFully=false and
 * localhostNodePorts=true). A second group checks that `kp migrate` announces those losses.
 *
 * This closes the loop reader -> renderer -> kernel -> live reader: a field the renderer writes in
 * a way the reader (or the kernel's listing of it) reads differently shows up as a difference.
 * Skips, saying why, where network namespaces cannot be made.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {DiffResult, FieldDifference} from '../../src/analyze/diff.js'
import {planMigration} from '../../src/analyze/migrate.js'
import type {ProxyState} from '../../src/model/types.js'
import {loadInputs} from '../../src/readers/load.js'
import {readState} from '../../src/readers/read-state.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import type {KubeProxyVersion} from '../../src/kube-proxy/versions.js'
import type {RenderedFile, RenderResult} from '../../src/render/types.js'
import {ROOT} from '../helpers/run-cli.js'
import {Netns, kernelUnavailable, runKpAsync, skipEachWhen} from '../live/netns.js'

const skipReason = kernelUnavailable('test/roundtrip/kernel-roundtrip.test.ts')

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
  for (const [dir, file] of [
    ['iptables', 'input.rules'],
    ['nft', 'input.nft'],
  ] as const) {
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

/**
 * kube-proxy adds these jump rules to the built-in chains itself, with `-I`, outside the restore
 * input (docs/kube-proxy-layouts.md §2.2; proxier.go iptablesJumpChains). The
 * renderer leaves them out of its file and says so in a finding. Live reading finds the KUBE-*
 * chains without them (tried by hand), but no node kube-proxy runs on lacks them, so the test adds
 * them the way kube-proxy does: the read-back is then of what a real node holds, jumps included.
 */
const JUMP_RULES: string[][] = [
  [
    'filter',
    'INPUT',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'comment',
    '--comment',
    'kubernetes load balancer firewall',
    '-j',
    'KUBE-PROXY-FIREWALL',
  ],
  [
    'filter',
    'INPUT',
    '-m',
    'comment',
    '--comment',
    'kubernetes health check service ports',
    '-j',
    'KUBE-NODEPORTS',
  ],
  [
    'filter',
    'INPUT',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'comment',
    '--comment',
    'kubernetes externally-visible service portals',
    '-j',
    'KUBE-EXTERNAL-SERVICES',
  ],
  [
    'filter',
    'FORWARD',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'comment',
    '--comment',
    'kubernetes load balancer firewall',
    '-j',
    'KUBE-PROXY-FIREWALL',
  ],
  [
    'filter',
    'FORWARD',
    '-m',
    'comment',
    '--comment',
    'kubernetes forwarding rules',
    '-j',
    'KUBE-FORWARD',
  ],
  [
    'filter',
    'FORWARD',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'comment',
    '--comment',
    'kubernetes service portals',
    '-j',
    'KUBE-SERVICES',
  ],
  [
    'filter',
    'FORWARD',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'comment',
    '--comment',
    'kubernetes externally-visible service portals',
    '-j',
    'KUBE-EXTERNAL-SERVICES',
  ],
  [
    'filter',
    'OUTPUT',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'comment',
    '--comment',
    'kubernetes load balancer firewall',
    '-j',
    'KUBE-PROXY-FIREWALL',
  ],
  [
    'filter',
    'OUTPUT',
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'comment',
    '--comment',
    'kubernetes service portals',
    '-j',
    'KUBE-SERVICES',
  ],
  [
    'nat',
    'OUTPUT',
    '-m',
    'comment',
    '--comment',
    'kubernetes service portals',
    '-j',
    'KUBE-SERVICES',
  ],
  [
    'nat',
    'PREROUTING',
    '-m',
    'comment',
    '--comment',
    'kubernetes service portals',
    '-j',
    'KUBE-SERVICES',
  ],
  [
    'nat',
    'POSTROUTING',
    '-m',
    'comment',
    '--comment',
    'kubernetes postrouting rules',
    '-j',
    'KUBE-POSTROUTING',
  ],
]

/**
 * The jump rules as one restore input (one process instead of one `iptables -I` per rule): `-I`
 * in reverse order leaves them first in their chains in the order listed, as kube-proxy's -I does.
 */
function jumpRulesRestoreInput(): string {
  const quote = (w: string) => (w.includes(' ') ? `"${w}"` : w)
  const out: string[] = []
  for (const table of ['filter', 'nat']) {
    out.push(`*${table}`)
    for (const [t, chain, ...rule] of [...JUMP_RULES].reverse())
      if (t === table) out.push(`-I ${chain} ${rule.map(quote).join(' ')}`)
    out.push('COMMIT')
  }
  return `${out.join('\n')}\n`
}

/** Reads a fixture the way `kp list -f` does, in-process (faster than a CLI run per case). */
async function readFixture(path: string): Promise<ProxyState> {
  const inputs = await loadInputs([path])
  return readState({sources: inputs.sources, facts: inputs.facts})
}

/** The line a loader complained about (iptables-restore: `Error occurred at line: N`, nft: `FILE:N:C-C: Error`), with its text. */
function offendingLine(message: string, file: RenderedFile, path: string): string {
  const atPath = message.indexOf(`${path}:`)
  const m =
    atPath >= 0
      ? /^(\d+):/.exec(message.slice(atPath + path.length + 1))
      : /line:? (\d+)/.exec(message)
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
    const r = spawnSync(ns.prefix[0]!, [...ns.prefix.slice(1), ...loaderFor(target, file, path)], {
      encoding: 'utf8',
    })
    if (r.status !== 0) {
      throw new Error(
        `${loaderFor(target, file, path).join(' ')} exited ${r.status}:\n${r.stderr}\noffending line: ${offendingLine(r.stderr, file, path)}`,
      )
    }
    if (target === 'iptables')
      ns.run(
        [file.family === 'IPv6' ? 'ip6tables-restore' : 'iptables-restore', '--noflush'],
        jumpRulesRestoreInput(),
      )
  }
}

function render(
  state: ProxyState,
  target: Target,
  kubeProxyVersion?: KubeProxyVersion,
): RenderResult {
  return target === 'iptables' ? renderIptables(state) : renderNftables(state, {kubeProxyVersion})
}

/**
 * Each nftables layout kp writes (docs/kube-proxy-layouts.md §3.10). 1.34 is left out: its text
 * is 1.35's, byte for byte (test/render/nftables-versions.test.ts).
 */
const RUNS: [Target, KubeProxyVersion | undefined][] = [
  ['iptables', undefined],
  ['nftables', '1.35'],
  ['nftables', '1.36'],
  ['nftables', '1.37'],
]

/**
 * Node settings nftables mode does not let kube-proxy choose: its `masquerading` chain always ends
 * in `masquerade fully-random` (docs/kube-proxy-layouts.md §3, "chain masquerading"),
 * and it never accepts NodePorts on localhost (docs/ipvs-layouts.md (d), caveat 3: localhost
 * NodePort clients break after a move to nftables). iptables mode can express either value of both.
 */
const FIXED_BY_TARGET: Record<
  Target,
  Partial<Record<'randomFully' | 'localhostNodePorts', boolean>>
> = {
  iptables: {},
  nftables: {randomFully: true, localhostNodePorts: false},
}

/**
 * The only differences a round trip may show: a node setting the source state has that the
 * target mode cannot keep. Every service port, frontend and endpoint must come back unchanged.
 */
function expectedNodeDifferences(state: ProxyState, target: Target): FieldDifference[] {
  const out: FieldDifference[] = []
  for (const [field, fixed] of Object.entries(FIXED_BY_TARGET[target]) as [
    'randomFully' | 'localhostNodePorts',
    boolean,
  ][]) {
    const had = state.node[field]
    if (had !== null && had !== fixed) out.push({field, a: had, b: fixed})
  }
  return out
}

/** What a finding must talk about to announce that a node setting is lost (matched in its title or message). */
const ANNOUNCED_BY: Record<string, RegExp> = {
  randomFully: /random/i,
  localhostNodePorts: /localhost/i,
}

/**
 * One round trip costs one kp process (about 2 s of CPU from the TypeScript source); the 28 run
 * concurrently (vitest's maxConcurrency, 5), so on a shared, loaded 2-core machine one of them can
 * wait well past vitest's 60 s default for CPU. Measured: 75 s for the whole file at load 9,
 * one test over 60 s at load 12.
 */
const ROUND_TRIP_TIMEOUT_MS = 180_000

interface Prepared {
  state: ProxyState
  saved: string
  rendered: RenderResult
}

it('finds the corpus cases', () => {
  // 6 iptables + 8 nftables upstream cases (fixtures/iptables/README.md, fixtures/nft/PROVENANCE.md).
  expect(CASES.map((c) => c.name.split('/')[0])).toEqual([
    ...Array(6).fill('iptables'),
    ...Array(8).fill('nft'),
  ])
})

describe('round trip: corpus state -> render -> kernel -> live read', () => {
  skipEachWhen(skipReason)
  const tmp = mkdtempSync(join(tmpdir(), 'kp-roundtrip-'))
  afterAll(() => rmSync(tmp, {recursive: true, force: true}))

  async function prepare(
    c: CorpusCase,
    target: Target,
    version?: KubeProxyVersion,
  ): Promise<Prepared> {
    const state = await readFixture(c.input)
    expect(state.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
    expect(state.services.length).toBeGreaterThan(0)
    const dir = mkdtempSync(join(tmp, `${c.name.replace('/', '-')}-${target}${version ?? ''}-`))
    const saved = join(dir, 'source-state.json')
    writeFileSync(saved, JSON.stringify(state))
    return {state, saved, rendered: render(state, target, version)}
  }

  describe.concurrent.each(CASES)('$name', (c) => {
    it.each(RUNS)(
      'renders into %s (kube-proxy %s layout), loads, and reads back live unchanged',
      async (target, version) => {
        const {state, saved, rendered} = await prepare(c, target, version)
        const ns = new Netns()
        try {
          load(ns, target, rendered.files, dirname(saved))
          const r = await runKpAsync(['diff', saved, 'live', '--json'], {prefix: ns.prefix})
          const shown = `${c.name} -> ${target} ${version ?? ''}: kp diff exited ${r.exitCode}\n${r.stderr}\n${r.stdout}`
          const expectedNode = expectedNodeDifferences(state, target)
          expect(r.exitCode, shown).toBe(expectedNode.length === 0 ? 0 : 1)
          const diff = JSON.parse(r.stdout) as DiffResult
          expect(diff.b.mode, shown).toBe(target)
          expect(diff.services, shown).toEqual([])
          expect(diff.node, shown).toEqual(expectedNode)
        } finally {
          ns.delete()
        }
      },
      ROUND_TRIP_TIMEOUT_MS,
    )
  })
})

// Nothing is dropped silently (docs/architecture.md). What `kp migrate --to nftables` shows (the renderer's findings
// and the migration analysis) must name each node setting the round trip above loses.
async function unannounced(c: CorpusCase): Promise<{state: ProxyState; fields: string[]}> {
  const state = await readFixture(c.input)
  const findings = [...renderNftables(state).findings, ...planMigration(state, 'nftables')]
  // Losing localhost NodePorts changes nothing on a node without IPv4 NodePorts (parse-basic,
  // syncrepeated-*): kp diff still shows the setting, but there is nothing to announce.
  const hasIPv4NodePort = state.services.some(
    (sp) => sp.family === 'IPv4' && sp.frontends.some((f) => f.type === 'NodePort'),
  )
  const lost = expectedNodeDifferences(state, 'nftables')
    .map((d) => d.field)
    .filter((field) => field !== 'localhostNodePorts' || hasIPv4NodePort)
  return {
    state,
    fields: lost.filter(
      (field) => !findings.some((f) => ANNOUNCED_BY[field]!.test(`${f.title} ${f.message}`)),
    ),
  }
}

describe.each(CASES.filter((c) => c.name.startsWith('iptables/')))(
  '$name: iptables -> nftables findings (no kernel needed)',
  (c) => {
    it('kp migrate --to nftables announces lost localhost NodePorts (where NodePorts exist)', async () => {
      const {state, fields} = await unannounced(c)
      // None of kube-proxy's iptables test dumps has --random-fully (grep finds none),
      // so every one of them changes randomFully=false in nftables mode: the test below checks it is announced.
      expect(state.node.randomFully).toBe(false)
      expect(fields.filter((f) => f !== 'randomFully')).toEqual([])
    })

    // MASQUERADE without --random-fully becomes nftables' `masquerade fully-random`:
    // MIGRATE_MASQUERADE_FULLY_RANDOM (src/analyze/migrate/conntrack.ts) must say so.
    it('kp migrate --to nftables announces that masquerading becomes fully-random', async () => {
      const {fields} = await unannounced(c)
      expect(fields).not.toContain('randomFully')
    })
  },
)
