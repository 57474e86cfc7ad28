/**
 * `npm run bench` (scripts/bench.mjs) with --help or an option it does not know: a usage line and
 * exit 2, not node's stack trace from parseArgs. Both exit before anything is generated or run.
 */
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {ROOT} from './helpers/run-cli.js'

const bench = (...args: string[]) =>
  spawnSync(process.execPath, ['scripts/bench.mjs', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  })

describe('scripts/bench.mjs arguments', () => {
  it('--help prints the usage and exits 0', () => {
    const r = bench('--help')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^usage: node scripts\/bench\.mjs /)
  })

  it('an unknown option is one line and the usage, exit 2', () => {
    const r = bench('--bogus')
    expect(r.status).toBe(2)
    expect(r.stderr.split('\n')[0]).toBe("bench: Unknown option '--bogus'")
    expect(r.stderr).not.toMatch(/\bat .*\(|node:internal/)
  })
})

const built =
  existsSync(`${ROOT}dist/commands/list.js`) &&
  existsSync(`${ROOT}dist-sea/kp-${process.platform}-${process.arch}`)
// `npm test` builds dist/ but not the single executable (`npm run build:sea`; .ci/run builds it).
if (!built) {
  const why = 'the start-up bench needs dist-sea/ (npm run build:sea)'
  if (process.env.CI === 'true') throw new Error(`CI=true: ${why}`)
  process.stderr.write(`skipping scripts/bench.mjs --startup-only: ${why}\n`)
}
describe.skipIf(!built)('scripts/bench.mjs --startup-only', () => {
  it('prints the start-up table: npm and single executable against node -e 0', () => {
    const r = bench('--startup-only', '--startup-runs', '1')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(
      /^\| `kp-\S+ --version` \(single executable\) \| \d+ ms \| [\d.]+ × \|$/m,
    )
    expect(r.stdout).toMatch(
      /^- start-up: single executable `--version` [\d.]+ × `node -e 0` \(target ≤ 1\.5 ×; kp\/.* \(sea, commit \S+\)\)$/m,
    )
  })
})
