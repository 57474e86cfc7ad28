/**
 * iptables-mode kube-proxy seen through `nft list ruleset` on an iptables-nft node
 * (fixtures/nft/iptables-nft-multipleservices-older: the corpus dump loaded with
 * iptables-restore 1.8.9 nf_tables and listed with nft 1.0.6). Comments are gone, so the
 * services are compared by address with the corpus expectation of the same dump.
 */
import {describe, expect, it} from 'vitest'
import {readState} from '../../../src/readers/read-state.js'
import {
  fromCorpus,
  fromState,
  readFixture,
  readFixtureState,
  type CorpusService,
} from './corpus-shape.js'

const dir = 'iptables-nft-multipleservices-older'

describe('iptables-nft through nft list ruleset', () => {
  it('is recognised as iptables mode', async () => {
    const state = await readFixtureState(['nft', dir, 'input.nft'])
    expect(state.mode).toBe('iptables')
    expect(state.sources[0]!.format).toBe('nft')
    expect(state.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
  })

  it('recovers the same services, by address, as the corpus expects', async () => {
    const state = await readFixtureState(['nft', dir, 'input.nft'])
    const expected = JSON.parse(readFixture('nft', dir, 'expected.json')) as CorpusService[]
    expect(fromState(state, false)).toEqual(fromCorpus(expected, false))
    expect(state.services.every((s) => s.namespace === null && s.name === null)).toBe(true)
  })

  it('turns `meta random & 2147483647 < N` into shares (N / 2^31, then the rest)', async () => {
    const text = readFixture('nft', dir, 'input.nft')
    // the dump's --probability 0.5000000000 as the kernel stores it
    expect(text).toContain('meta random & 2147483647 < 1073741824')
    const state = await readFixtureState(['nft', dir, 'input.nft'])
    const svc4 = state.services.find((s) => s.frontends.some((f) => f.ip === '172.30.0.44'))!
    expect(svc4.endpoints.map((e) => [e.ip, e.share])).toEqual([
      ['10.180.0.4', 1073741824 / 2 ** 31],
      ['10.180.0.5', 1 - 1073741824 / 2 ** 31],
    ])
  })

  it('reads the LoadBalancer with its source range from KUBE-FW, and the node facts', async () => {
    const state = await readFixtureState(['nft', dir, 'input.nft'])
    const lb = state.services.flatMap((s) => s.frontends).find((f) => f.type === 'LoadBalancer')
    expect(lb).toEqual({
      type: 'LoadBalancer',
      ip: '5.6.7.8',
      port: 80,
      sourceRanges: ['203.0.113.0/25'],
      action: 'forward',
    })
    expect(state.node).toMatchObject({
      podCIDRs: ['10.0.0.0/8'],
      localDetector: 'cidr',
      masqueradeMark: '0x4000',
      nodePortAddresses: [],
      conntrackInvalidDrop: true,
    })
  })

  it('uses kube-proxy comments where nft shows them, and reads past xt leftovers', async () => {
    const text = readFixture('nft', dir, 'input.nft')
      .replace(
        'jump KUBE-SVC-XPGD46QRK7WJZT7O\n',
        'jump KUBE-SVC-XPGD46QRK7WJZT7O comment "ns1/svc1:p80 cluster IP"\n',
      )
      .replace(
        'meta l4proto tcp ip daddr 172.30.0.44  tcp dport 80',
        'meta l4proto tcp ip daddr 172.30.0.44 xt match "comment" tcp dport 80',
      )
      .replace('jump KUBE-SEP-C6EBXVWJJZMIWKLZ', 'jump KUBE-SEP-C6EBXVWJJZMIWKLZ # xt_comment')
    const state = await readState({sources: [{path: 'commented.nft', text}]})
    const svc1 = state.services.find((s) => s.frontends.some((f) => f.ip === '172.30.0.41'))!
    expect([svc1.namespace, svc1.name, svc1.portName]).toEqual(['ns1', 'svc1', 'p80'])
    const svc4 = state.services.find((s) => s.frontends.some((f) => f.ip === '172.30.0.44'))!
    expect(svc4.endpoints.map((e) => e.ip)).toEqual(['10.180.0.4', '10.180.0.5'])
  })

  it('nft -j of the same ruleset: iptables mode, and says what xt statements hide', async () => {
    const state = await readFixtureState(['nft-json', dir, 'input.json'])
    expect(state.mode).toBe('iptables')
    // DNAT is an `xt target` in JSON: the endpoints are unknown and each such chain is reported.
    expect(
      state.diagnostics.some((d) => d.code === 'NFT_NO_DNAT' && d.severity === 'warning'),
    ).toBe(true)
    const clusterIps = state.services
      .flatMap((s) => s.frontends.filter((f) => f.type === 'ClusterIP').map((f) => f.ip))
      .sort()
    expect(clusterIps).toEqual([
      '172.30.0.41',
      '172.30.0.42',
      '172.30.0.43',
      '172.30.0.44',
      '172.30.0.45',
      '172.30.0.46',
    ])
  })

  it('a random threshold outside 0..2^31 is a warning and a clamped share, never a share outside 0..1', async () => {
    // Was shares 2 and -1 (threshold 2^32) or NaN (threshold not a number).
    const text = readFixture('nft', dir, 'input.nft')
    for (const threshold of ['4294967296', 'abc', '-5']) {
      const state = await readState({
        sources: [{path: 'x.nft', text: text.replace('< 1073741824 ', `< ${threshold} `)}],
      })
      const shares = state.services.flatMap((s) => s.endpoints.map((e) => e.share))
      expect(shares.every((x) => x !== null && x >= 0 && x <= 1)).toBe(true)
      expect(
        state.diagnostics.filter((d) => d.code === 'NFT_INCONSISTENT').map((d) => d.source?.line),
      ).toEqual([118])
    }
  })
})
