/** `kp migrate --kube-proxy-version` (issue 22 §2): the release whose layout is written. */
import {describe, expect, it} from 'vitest'
import {runKpInProcess} from '../helpers/run-in-process.js'

const SOURCE = 'fixtures/iptables/upstream-overall/input.rules'

describe('kp migrate --kube-proxy-version', () => {
  it('writes the layout asked for and names it in --json and the header', async () => {
    for (const v of ['1.35', '1.37']) {
      const r = await runKpInProcess([
        'migrate',
        '--to',
        'nftables',
        '-f',
        SOURCE,
        '--kube-proxy-version',
        `v${v}.2`,
        '--json',
      ])
      const doc = JSON.parse(r.stdout)
      expect(doc.kubeProxyVersion).toBe(v)
      expect(doc.text).toMatch(new RegExp(`^# kube-proxy nftables mode, kube-proxy ${v} layout`))
      expect(doc.text.includes('mark-for-masquerade')).toBe(v === '1.35')
    }
  })

  it('defaults to the newest layout kp knows', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', SOURCE, '--json'])
    expect(JSON.parse(r.stdout).kubeProxyVersion).toBe('1.37')
  })

  it('a version kp does not know is a usage error listing the known ones', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '-f',
      SOURCE,
      '--kube-proxy-version',
      '1.31',
    ])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('1.34, 1.35, 1.36, 1.37')
  })
})
