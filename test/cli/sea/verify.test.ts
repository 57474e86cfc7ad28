/**
 * `kp verify` from the single executable with no `node` on PATH: its probes are kp itself
 * (`kp probe`), started in the sandbox's namespaces. The bundle once reached node:sea through a
 * dynamic import(), which a single executable does not have: every verify failed as "a bug".
 * Needs the executable (`npm run build:sea`; CI builds it), root and the kernel tools.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {ROOT} from '../../helpers/run-cli.js'
import {kernelUnavailable} from '../../live/netns.js'

const SEA = join(ROOT, `dist-sea/kp-${process.platform}-${process.arch}`)
const TOOLS = ['ip', 'iptables-restore', 'nft', 'conntrack', 'nfacct', 'sysctl']

function missingExecutable(): string | null {
  if (existsSync(SEA)) return null
  const reason = `no ${SEA}: run \`npm run build:sea\` first`
  if (process.env.CI === 'true') throw new Error(`CI=true: test/cli/sea/verify.test.ts: ${reason}`)
  process.stderr.write(`test/cli/sea/verify.test.ts skipped: ${reason}\n`)
  return reason
}
const skip = missingExecutable() ?? kernelUnavailable('test/cli/sea/verify.test.ts', TOOLS)

// The kernel tools kp runs (and cat, which reads conntrack's table), and nothing else: no node.
const bin = mkdtempSync(join(tmpdir(), 'kp-sea-verify-'))
afterAll(() => rmSync(bin, {recursive: true, force: true}))
for (const tool of [...TOOLS, 'cat']) {
  const found = (process.env.PATH ?? '')
    .split(':')
    .map((dir) => join(dir, tool))
    .find((path) => existsSync(path))
  if (found) symlinkSync(found, join(bin, tool))
}

describe.skipIf(skip !== null)('kp verify from the single executable', () => {
  it('runs its probes with no node on PATH, and the rules agree', () => {
    expect(existsSync(join(bin, 'node'))).toBe(false)
    const r = spawnSync(
      SEA,
      ['verify', '-f', 'fixtures/verify/generated-node/ruleset.nft', '--probes', '100', '--json'],
      {cwd: ROOT, encoding: 'utf8', env: {PATH: bin, HOME: bin}, timeout: 120_000},
    )
    expect(r.stderr).not.toContain('internal error')
    expect(r.status).toBe(0)
    const result = JSON.parse(r.stdout) as {summary: {agrees: number; differs: number}}
    expect(result.summary.differs).toBe(0)
    expect(result.summary.agrees).toBeGreaterThan(0)
  }, 150_000)
})
