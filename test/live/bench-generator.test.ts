/**
 * The benchmark's input generator (scripts/bench/gen-iptables.mjs) must write what a real
 * iptables-save prints: its dumps are loaded into a network namespace with iptables-restore
 * and must come back from iptables-save unchanged (only the header dates and counters differ).
 * Hashes and probabilities are checked against the values in docs/kube-proxy-layouts.md (§2.6, §2.8).
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {
  chainHash,
  generateIptablesSave,
  kernelProbability,
} from '../../scripts/bench/gen-iptables.mjs'
import {Netns, kernelUnavailable} from './netns.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-gen-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const skipReason = kernelUnavailable('test/live/bench-generator.test.ts')

/** Header/footer comment lines carry the time; counters are the kernel's. */
const comparable = (dump: string) =>
  dump
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ' [0:0]'))
    .join('\n')

describe('benchmark dump generator', () => {
  it('computes kube-proxy chain hashes and the kernel-rounded probabilities of the spec', () => {
    // docs/kube-proxy-layouts.md §2.6 (checked there against kube-proxy's tests) and §2.8.
    expect(chainHash('ns1/svc1:p80tcp')).toBe('XPGD46QRK7WJZT7O')
    expect(chainHash('ns1/svc1:p80tcp10.180.0.1:80')).toBe('SXIVWICOYRO3J4NJ')
    expect([2, 3, 4, 5].map(kernelProbability)).toEqual([
      '0.50000000000',
      '0.33333333349',
      '0.25000000000',
      '0.20000000019',
    ])
  })

  it('writes dumps that iptables-save prints back unchanged, with and without comments', async ({
    skip,
  }) => {
    if (skipReason !== null) skip(skipReason)
    // 20 × 3 = 60 endpoints keeps the comments; 150 × 10 = 1500 is kube-proxy's large-cluster mode.
    for (const [services, endpointsPerService, largeCluster] of [
      [20, 3, false],
      [150, 10, true],
    ] as const) {
      const path = join(tmp, `${services}x${endpointsPerService}.txt`)
      const written = (await generateIptablesSave(path, {services, endpointsPerService})) as {
        lines: number
        largeCluster: boolean
      }
      expect(written.largeCluster).toBe(largeCluster)
      const text = readFileSync(path, 'utf8')
      expect(text.split('\n').length - 1).toBe(written.lines)
      const ns = new Netns()
      try {
        ns.run(['iptables-restore'], text)
        expect(comparable(ns.run(['iptables-save']))).toBe(comparable(text))
      } finally {
        ns.delete()
      }
    }
  })
})
