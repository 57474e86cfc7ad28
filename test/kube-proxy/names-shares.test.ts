/** The chain-name hashes (docs/kube-proxy-layouts.md §2.6) and the share arithmetic of the probability cascade (§2.4, docs/model.md). */
import {describe, expect, it} from 'vitest'
import {
  base32,
  endpointString,
  iptablesChainHash,
  iptablesEndpointHash,
} from '../../src/kube-proxy/iptables-names.js'
import {effectiveShares} from '../../src/kube-proxy/shares.js'

describe('chain-name hashes', () => {
  it("matches the names the spec checked against kube-proxy's tests", () => {
    expect(iptablesChainHash('ns1/svc1:p80', 'tcp')).toBe('XPGD46QRK7WJZT7O')
    expect(iptablesEndpointHash('ns1/svc1:p80', 'tcp', '10.180.0.1:80')).toBe('SXIVWICOYRO3J4NJ')
  })
  it('matches chain names of the upstream corpus dumps', () => {
    // fixtures/iptables/upstream-overall: KUBE-SVC-GNZBNJ2PO5MGZ6GT / KUBE-SEP-RS4RBKLTHTF2IUXJ for ns2/svc2:p80
    expect(iptablesChainHash('ns2/svc2:p80', 'TCP')).toBe('GNZBNJ2PO5MGZ6GT')
    expect(iptablesEndpointHash('ns2/svc2:p80', 'tcp', '10.180.0.2:80')).toBe('RS4RBKLTHTF2IUXJ')
  })
  it('hashes the old `ns/name:` spelling of an unnamed port as written (fixtures/iptables/legacy-k8s-1.1)', () => {
    expect(iptablesChainHash('default/svc-nginx:', 'tcp')).toBe('KMMA4UO25W53IH36')
    expect(iptablesEndpointHash('default/svc-nginx:', 'tcp', '172.16.8.4:80')).toBe(
      'PU5BJ5CJYE3SLHYK',
    )
  })
  it('base32 follows RFC 4648 §10 test vectors (without padding)', () => {
    const b = (s: string) => base32(new TextEncoder().encode(s))
    expect([b(''), b('f'), b('fo'), b('foo'), b('foob'), b('fooba'), b('foobar')]).toEqual([
      '',
      'MY',
      'MZXQ',
      'MZXW6',
      'MZXW6YQ',
      'MZXW6YTB',
      'MZXW6YTBOI',
    ])
  })
  it('endpoint strings are Go JoinHostPort strings', () => {
    expect(endpointString('10.0.0.1', 80)).toBe('10.0.0.1:80')
    expect(endpointString('fd00::1', 80)).toBe('[fd00::1]:80')
  })
})

describe('effective shares of the cascade', () => {
  const close = (got: number[], want: number[]) => {
    expect(got).toHaveLength(want.length)
    got.forEach((g, i) => expect(g).toBeCloseTo(want[i]!, 8))
  }
  it('one endpoint: one unconditional rule takes all', () => {
    expect(effectiveShares([null])).toEqual({shares: [1], total: 1, unreachableFrom: null})
  })
  it("kube-proxy's %0.10f cascades give 1/n each for 2..5 endpoints", () => {
    close(effectiveShares([0.5, null]).shares, [0.5, 0.5])
    close(effectiveShares([0.3333333333, 0.5, null]).shares, [1 / 3, 1 / 3, 1 / 3])
    close(effectiveShares([0.25, 0.3333333333, 0.5, null]).shares, [0.25, 0.25, 0.25, 0.25])
    close(effectiveShares([0.2, 0.25, 0.3333333333, 0.5, null]).shares, [0.2, 0.2, 0.2, 0.2, 0.2])
  })
  it("the kernel's fixed-point re-printing (0.33333333349, 0.20000000019) still gives 1/n", () => {
    const r = effectiveShares([0.33333333349, 0.5, null])
    close(r.shares, [1 / 3, 1 / 3, 1 / 3])
    expect(Math.abs(r.total - 1)).toBeLessThan(1e-6)
    close(
      effectiveShares([0.20000000019, 0.25, 0.33333333349, 0.5, null]).shares,
      [0.2, 0.2, 0.2, 0.2, 0.2],
    )
  })
  it('old %0.5f cascades (0.33333) are off by the rounding, and say so exactly', () => {
    // 0.33333, then (1-0.33333)*0.5 = 0.333335 twice
    close(effectiveShares([0.33333, 0.5, null]).shares, [0.33333, 0.333335, 0.333335])
  })
  it('a cascade without its unconditional last rule does not sum to 1', () => {
    const r = effectiveShares([0.5, 0.5])
    close(r.shares, [0.5, 0.25])
    expect(r.total).toBeCloseTo(0.75, 9)
  })
  it('rules after an unconditional one are never reached', () => {
    const r = effectiveShares([null, null])
    expect(r.shares).toEqual([1, 0])
    expect(r.unreachableFrom).toBe(1)
  })
})
