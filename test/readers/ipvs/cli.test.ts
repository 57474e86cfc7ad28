/**
 * The IPVS readers through the real CLI: several `-f` files of one node, and the refusal of
 * `ipvsadm -L` without `-n` (exit 3 with `path:line: message`, src/errors.ts EXIT).
 */
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {runKpInProcess} from '../../helpers/run-in-process.js'

const G = 'fixtures/ipvs/generated/'

describe('kp list on IPVS dumps', () => {
  it('ipvsadm -Sn + ipset list + iptables-save of node-a: exit 0, eleven service ports in IPVS mode', async () => {
    const r = await runKpInProcess([
      'list',
      '--json',
      '-f',
      `${G}ipvsadm-Sn.txt`,
      '-f',
      `${G}ipset-list.ipvs-mode.txt`,
      '-f',
      `${G}iptables-save.ipvs-mode.nft-backend.txt`,
    ])
    expect(r.stderr).not.toMatch(/kp: (error|warning)/)
    expect(r.exitCode).toBe(0)
    const state = JSON.parse(r.stdout) as ProxyState
    expect(state.mode).toBe('ipvs')
    expect(state.sources.map((s) => s.format)).toEqual(['ipvsadm', 'ipset', 'iptables-save'])
    // fixtures/PROVENANCE.md (IPVS corpus, generated/): kubernetes, 3 kube-dns ports × 2 families, sticky, web, lb, sctp.
    expect(state.services).toHaveLength(11)
  })

  it('ipvsadm -L without -n: exit 3, the first resolved line, and the advice to use -n', async () => {
    const r = await runKpInProcess([
      'list',
      '--json',
      '-f',
      'fixtures/ipvsadm/non-numeric/ipvsadm-L.txt',
    ])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('fixtures/ipvsadm/non-numeric/ipvsadm-L.txt:4: ')
    expect(r.stderr).toContain('ipvsadm -Ln')
  })
})
