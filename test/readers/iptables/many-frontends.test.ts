/**
 * A service port with tens of thousands of frontends (a crafted or broken dump: one KUBE-SVC chain
 * behind 100,000 external addresses, or 60,000 "has no endpoints" REJECT rules of one port). Each
 * new frontend used to be looked up by scanning the port's frontends, so such a dump took time
 * quadratic in its size: 80,000 of them took 23 s (nat) and 50 s (filter). Past a few frontends a
 * port's are now indexed. The tests read the dumps and check what came out; a scan per frontend
 * does not finish within their time limit.
 */
import {describe, expect, it} from 'vitest'
import {readText, service} from './helpers.js'

const N = 60_000
/** The nat shape costs less per lookup: more frontends make a scan per frontend as plain. */
const NAT_N = 100_000
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`

describe('one service port with tens of thousands of frontends', () => {
  it('nat: 100,000 external IPs jumping to one KUBE-SVC chain', async () => {
    const lines = [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]',
      ':KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]',
    ]
    for (let i = 0; i < NAT_N; i++)
      lines.push(
        `-A KUBE-SERVICES -d ${address(i)}/32 -p tcp -m comment --comment "ns/svc:http external IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA`,
      )
    // The same address again is the same frontend.
    lines.push(
      `-A KUBE-SERVICES -d ${address(7)}/32 -p tcp -m comment --comment "ns/svc:http external IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA`,
    )
    lines.push(
      '-A KUBE-SVC-AAAAAAAAAAAAAAAA -j KUBE-SEP-BBBBBBBBBBBBBBBB',
      '-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m tcp -j DNAT --to-destination 10.244.0.5:8080',
      'COMMIT',
      '',
    )
    const sp = service(await readText(lines.join('\n')), 'ns/svc:http/tcp')
    expect(sp.frontends).toHaveLength(NAT_N)
    expect(new Set(sp.frontends.map((f) => f.ip)).size).toBe(NAT_N)
    expect(sp.endpoints.map((e) => `${e.ip}:${e.port}`)).toEqual(['10.244.0.5:8080'])
  }, 20_000)

  it('filter: 60,000 "has no endpoints" REJECT rules; the first address in KUBE-SERVICES is the ClusterIP', async () => {
    const lines = ['*filter', ':KUBE-SERVICES - [0:0]', ':KUBE-EXTERNAL-SERVICES - [0:0]']
    lines.push(
      '-A KUBE-SERVICES -d 172.30.0.1/32 -p tcp -m comment --comment "ns/svc:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
    )
    for (let i = 0; i < N; i++)
      lines.push(
        `-A KUBE-EXTERNAL-SERVICES -d ${address(i)}/32 -p tcp -m comment --comment "ns/svc:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
      )
    lines.push('COMMIT', '')
    const sp = service(await readText(lines.join('\n')), 'ns/svc:http/tcp')
    expect(sp.frontends).toHaveLength(N + 1)
    expect(sp.frontends.filter((f) => f.type === 'ClusterIP').map((f) => f.ip)).toEqual([
      '172.30.0.1',
    ])
    expect(sp.frontends.every((f) => f.action === 'reject')).toBe(true)
  }, 20_000)
})
