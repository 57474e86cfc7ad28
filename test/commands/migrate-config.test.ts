/** kp migrate --kube-proxy-config: kube-proxy's configuration feeds the findings and the renderer. */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {Finding} from '../../src/analyze/findings.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const DUMP = 'fixtures/iptables/upstream-overall/input.rules'
const CONFIGMAP = 'fixtures/kube-proxy-config/configmap-kubeadm.yaml'
const NFT_CONFIG = 'fixtures/kube-proxy-config/config-nftables.yaml'
const tmp = mkdtempSync(join(tmpdir(), 'kp-migrate-config-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

async function migrate(args: string[]) {
  const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', DUMP, '--json', ...args])
  return {...r, doc: r.exitCode === 0 || r.exitCode === 1 ? JSON.parse(r.stdout) : null}
}
const ids = (findings: Finding[]) => findings.map((f) => f.id)

describe('kp migrate --kube-proxy-config', () => {
  it('a ConfigMap that never set mode: MIGRATE_DEFAULT_MODE_CHANGE at its line; without it, "cannot verify"', async () => {
    const withConfig = await migrate(['--check', '--kube-proxy-config', CONFIGMAP])
    const f = withConfig.doc.findings.find((x: Finding) => x.id === 'MIGRATE_DEFAULT_MODE_CHANGE')
    expect(f.evidence).toEqual([{path: CONFIGMAP, line: 55}])
    expect(ids(withConfig.doc.findings)).not.toContain('MIGRATE_DEFAULT_MODE_CHANGE_UNVERIFIED')
    const without = await migrate(['--check'])
    expect(ids(without.doc.findings)).toContain('MIGRATE_DEFAULT_MODE_CHANGE_UNVERIFIED')
    expect(ids(without.doc.findings)).not.toContain('MIGRATE_DEFAULT_MODE_CHANGE')
  })

  it("renders the configuration's masquerade bit and settings instead of kube-proxy's defaults; a flag wins", async () => {
    const r = await migrate(['--kube-proxy-config', NFT_CONFIG])
    expect(r.doc.text).toContain('0x8000')
    expect(r.doc.text).not.toContain('0x4000')
    expect(ids(r.doc.findings)).not.toContain('RENDER_DEFAULT_MASQUERADE_MARK')
    expect(ids(r.doc.findings)).not.toContain('RENDER_DEFAULT_MASQUERADE_ALL')
    const flag = await migrate(['--kube-proxy-config', NFT_CONFIG, '--masquerade-mark', '0x4000'])
    expect(flag.doc.text).toContain('0x4000')
    expect(flag.doc.text).not.toContain('0x8000')
  })

  it('a configuration kp cannot read ends the run with path:line (exit 3)', async () => {
    const bad = join(tmp, 'bad.yaml')
    writeFileSync(bad, 'kind: KubeProxyConfiguration\nmode: [nftables\n')
    const r = await migrate(['--check', '--kube-proxy-config', bad])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toMatch(new RegExp(`^kp: ${bad}:\\d+: Flow sequence`))
    const missing = await migrate(['--check', '--kube-proxy-config', join(tmp, 'nope.yaml')])
    expect(missing.exitCode).toBe(3)
  })
})

describe('kp migrate --check-kernel', () => {
  it('is a usage error for a target other than nftables (exit 2)', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'ipvs',
      '-f',
      DUMP,
      '--check',
      '--check-kernel',
    ])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('--to nftables')
  })
})
