/**
 * `kp collect`: flag handling (before any command runs), the bundle it writes in a fresh
 * network namespace, and exit 4 when nothing can be collected. The iptables/nftables round
 * trips (collect → list -f equals the file read) are in test/live/kernel.test.ts.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {BundleManifest} from '../../src/readers/bundle.js'
import {runKpInProcess} from '../helpers/run-in-process.js'
import {
  AS_NOBODY,
  Netns,
  kernelUnavailable,
  nobodyUnavailable,
  runKpAsync,
  skipEachWhen,
} from '../live/netns.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-collect-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const skipReason = kernelUnavailable('test/commands/collect.test.ts')
const nobodyReason = nobodyUnavailable()

describe('kp collect flags', () => {
  it('refuses a folder that already holds files, and leaves it alone (exit 2)', async () => {
    const out = join(tmp, 'busy')
    mkdirSync(out)
    writeFileSync(join(out, 'notes.txt'), 'mine\n')
    const r = await runKpInProcess(['collect', '--out', out])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(`--out ${out}: folder is not empty`)
    expect(r.stderr).toContain('--force')
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine\n')
    expect(existsSync(join(out, 'manifest.json'))).toBe(false)
  })

  it('refuses --out that is a file, input flags, and a missing --out (exit 2)', async () => {
    const file = join(tmp, 'a-file')
    writeFileSync(file, '')
    const [asFile, withF, noOut] = await Promise.all([
      runKpInProcess(['collect', '--out', file]),
      runKpInProcess(['collect', '--out', join(tmp, 'never'), '-f', 'x.rules']),
      runKpInProcess(['collect']),
    ])
    expect(asFile.exitCode).toBe(2)
    expect(asFile.stderr).toContain('exists and is not a folder')
    expect(withF.exitCode).toBe(2)
    expect(withF.stderr).toContain('kp collect reads this node; --file does not apply')
    expect(existsSync(join(tmp, 'never'))).toBe(false)
    expect(noOut.exitCode).toBe(2)
    expect(noOut.stderr).toMatch(/Missing required flag[\s\S]*out/)
  })
})

describe('kp collect in a fresh network namespace', () => {
  skipEachWhen(skipReason)
  it('saves every output with a manifest, records what was not run, and the bundle says it has no rules', async () => {
    const ns = new Netns()
    const out = join(tmp, 'fresh')
    try {
      const r = await runKpAsync(['collect', '--out', out, '--json'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(0)
      const manifest = JSON.parse(r.stdout) as BundleManifest
      expect(manifest).toMatchObject({kind: 'KpBundle', schemaVersion: 1, mode: null})
      expect(manifest.createdBy).toMatch(/^kp\/\d+\.\d+\.\d+/)
      expect(manifest.warnings).toEqual([
        expect.stringContaining(
          'no kube-proxy rules found: nft has no table ip kube-proxy or ip6 kube-proxy',
        ),
      ])
      expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'))).toEqual(manifest)

      const byCommand = new Map(manifest.files.map((f) => [f.command.join(' '), f]))
      // The kernel release is read from /proc (what `uname -r` prints), no program needed.
      expect(byCommand.has('uname -r')).toBe(false)
      expect(manifest.facts.kernel).toBe(readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim())
      for (const f of manifest.files)
        if (f.path !== null) expect(existsSync(join(out, f.path))).toBe(true)
      // A fresh namespace has no legacy tables: not run (it would load modules), and said why.
      expect(byCommand.get('iptables-legacy-save')).toMatchObject({
        path: null,
        exitCode: null,
        read: false,
      })
      expect(byCommand.get('iptables-legacy-save')!.error).toMatch(
        /^not run: the legacy backend has no IPv4 tables/,
      )
      expect(byCommand.get('iptables-nft-save')).toMatchObject({
        path: 'iptables-nft-save.txt',
        format: 'iptables-save',
        exitCode: 0,
        read: false,
      })
      expect(manifest.files.some((f) => f.read)).toBe(false)
      // Each family's kube-proxy table was asked for by name; not there is no file and no failure.
      for (const family of ['ip', 'ip6']) {
        expect(byCommand.get(`nft -j list table ${family} kube-proxy`)).toMatchObject({
          path: null,
          format: 'nft-json',
          exitCode: 1,
          read: false,
          error: `nft has no table ${family} kube-proxy`,
        })
      }

      const list = await runKpInProcess(['list', '-f', out])
      expect(list.exitCode).toBe(3)
      expect(list.stderr).toContain('the bundle holds no kube-proxy rules to read')

      const again = await runKpAsync(['collect', '--out', out, '--force', '--json'], {
        prefix: ns.prefix,
      })
      expect(again.exitCode).toBe(0)
    } finally {
      ns.delete()
    }
  })

  it('exits 4 with "cannot write" when the folder cannot be made (it hung at full CPU under /proc)', async () => {
    const ns = new Netns()
    try {
      const r = await runKpAsync(['collect', '--out', '/proc/kp-test-no-such-folder', '--json'], {
        prefix: ns.prefix,
        timeout: 30_000,
      })
      expect(r.exitCode).toBe(4)
      expect(JSON.parse(r.stdout)).toMatchObject({error: {code: 'OUTPUT_UNWRITABLE', exitCode: 4}})
      expect(r.stderr).toContain('cannot write /proc/kp-test-no-such-folder: ENOENT')
    } finally {
      ns.delete()
    }
  })
})

describe('kp collect without root', () => {
  skipEachWhen(nobodyReason)
  it('exits 4 when no ruleset could be saved, and writes nothing', async () => {
    // A folder the unprivileged user may write, so the only failure left is the missing root.
    chmodSync(tmp, 0o755)
    const parent = join(tmp, 'world-writable')
    mkdirSync(parent, {mode: 0o777})
    chmodSync(parent, 0o777)
    const out = join(parent, 'as-nobody')
    const r = await runKpAsync(['collect', '--out', out, '--json'], {
      prefix: AS_NOBODY,
    })
    expect(r.exitCode).toBe(4)
    expect(JSON.parse(r.stdout)).toMatchObject({error: {code: 'LIVE_NEEDS_ROOT', exitCode: 4}})
    expect(existsSync(out)).toBe(false)
  })
})
