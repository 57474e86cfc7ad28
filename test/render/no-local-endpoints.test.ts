/**
 * A Local traffic policy whose service has endpoints, none of them on this node: kube-proxy writes
 * nothing in nat then, only a DROP "has no local endpoints" in filter (iptables) or a `drop` verdict
 * in no-endpoint-services (nftables; reference "ITP=Local" row of the mode table). A state read
 * from such a dump knows no endpoint but that the traffic is dropped; the renderers rejected it as
 * "has no endpoints" (fixtures/iptables/realsave-handmade-ipv6, ns10/svc10), so a migration turned
 * a silent drop into an ICMP reject and `kp diff` of source and result showed the change.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import type {ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'

const HANDMADE_V6 = 'fixtures/iptables/realsave-handmade-ipv6/input.rules'

describe('a Local policy with no local endpoints, and none known elsewhere', () => {
  it('ITP=Local ClusterIP: dropped in both targets, not rejected; read back, no difference', async () => {
    const state = await readState({
      sources: [{path: HANDMADE_V6, text: readFileSync(HANDMADE_V6, 'utf8')}],
    })
    const svc10 = state.services.find((sp) => sp.name === 'svc10')!
    expect(svc10).toMatchObject({internalTrafficPolicy: 'Local', endpoints: []})
    expect(svc10.frontends).toEqual([expect.objectContaining({type: 'ClusterIP', action: 'drop'})])

    const nft = renderNftables(state, {})
    expect(nft.text).toContain(
      'add element ip6 kube-proxy no-endpoint-services { fd00:10:96::10 . tcp . 80 comment "ns10/svc10:p80" : drop }',
    )
    const ipt = renderIptables(state, {})
    const v6 = ipt.files.find((f) => f.family === 'IPv6')!.text
    expect(v6).toContain(
      '-A KUBE-SERVICES -m comment --comment "ns10/svc10:p80 has no local endpoints" -m tcp -p tcp -d fd00:10:96::10 --dport 80 -j DROP',
    )

    for (const [path, text] of [
      ['back.nft', nft.text],
      ['back.v6.rules', v6],
    ] as const) {
      const back = await readState({sources: [{path, text}]})
      expect(diffStates(state, back).services, path).toEqual([])
    }
  })

  it('ETP=Local and ITP=Local: external frontends are dropped as well; with no endpoints at all both reject', () => {
    const overall = JSON.parse(
      readFileSync('fixtures/kp-json/overall/state.json', 'utf8'),
    ) as ProxyState
    const svc2 = overall.services.find((sp) => sp.name === 'svc2')!
    svc2.internalTrafficPolicy = 'Local'
    svc2.endpoints = []
    for (const f of svc2.frontends) f.action = 'drop'
    const nft = renderNftables(overall, {}).text
    expect(nft).toContain(
      'no-endpoint-services { 172.30.0.42 . tcp . 80 comment "ns2/svc2:p80" : drop }',
    )
    expect(nft).toContain(
      'no-endpoint-services { 1.2.3.4 . tcp . 80 comment "ns2/svc2:p80" : drop }',
    )
    expect(nft).toContain('no-endpoint-nodeports { tcp . 3001 comment "ns2/svc2:p80" : drop }')

    // The same port with no endpoint anywhere (every frontend rejects) is still rejected.
    for (const f of svc2.frontends) f.action = 'reject'
    const rejected = renderNftables(overall, {}).text
    expect(rejected).toContain(
      'no-endpoint-services { 172.30.0.42 . tcp . 80 comment "ns2/svc2:p80" : goto reject-chain }',
    )
    expect(rejected).toContain(
      'no-endpoint-services { 1.2.3.4 . tcp . 80 comment "ns2/svc2:p80" : goto reject-chain }',
    )
  })
})
