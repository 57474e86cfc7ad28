/**
 * The newest layout (fixtures/nft/newest-inline-dnat, see its provenance): inline
 * `dnat ip to numgen random mod N map {...}`, the ClusterIP masquerade in `services`,
 * no mark-for-masquerade chain, hairpin-connections; affinity still with endpoint chains.
 */
import {describe, expect, it} from 'vitest'
import {
  fromCorpus,
  fromState,
  readFixture,
  readFixtureState,
  withoutPositions,
  type CorpusService,
} from './corpus-shape.js'

describe('newest nftables layout', () => {
  it('gives the hand-derived services from real nft list output', async () => {
    const state = await readFixtureState(['nft', 'newest-inline-dnat', 'input.nft'])
    // The fixture joins the blog's 1.36 `mod 1 map` and the walk-through's single-endpoint
    // `dnat to` of 1.37 (its PROVENANCE): two generations, which the reader says.
    expect(state.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.code)).toEqual([
      'NFT_LAYOUT_MIXED',
    ])
    expect(state.node.kubeProxyLayouts).toEqual(['1.36', '1.37+'])
    const expected = JSON.parse(
      readFixture('nft', 'newest-inline-dnat', 'expected.json'),
    ) as CorpusService[]
    expect(fromState(state)).toEqual(fromCorpus(expected))
  })

  it('shares come from numgen mod N, 1/N each', async () => {
    const state = await readFixtureState(['nft', 'newest-inline-dnat', 'input.nft'])
    const shares = Object.fromEntries(
      state.services.map((s) => [s.name, s.endpoints.map((e) => e.share)]),
    )
    expect(shares).toEqual({
      empty: [],
      kubernetes: [1],
      metrics: [1],
      web: [0.5, 0.5],
      'backend-api': [0.5, 0.5],
    })
  })

  it('reads the mark and pod CIDR from the services chain, random-fully from masquerading', async () => {
    const state = await readFixtureState(['nft', 'newest-inline-dnat', 'input.nft'])
    expect(state.node).toMatchObject({
      podCIDRs: ['10.244.0.0/16'],
      localDetector: 'cidr',
      masqueradeMark: '0x00004000',
      masqueradeAll: false,
      randomFully: true,
      nodePortAddresses: ['192.168.0.231'],
    })
  })

  it('the hand-written source, nft list, nft -a list and nft -j give the same model', async () => {
    const base = withoutPositions(
      await readFixtureState(['nft', 'newest-inline-dnat', 'input.nft']),
    )
    for (const parts of [
      ['nft', 'newest-inline-dnat', 'source.nft'],
      ['nft', 'newest-inline-dnat', 'list-a.nft'],
      ['nft-json', 'newest-inline-dnat', 'input.json'],
    ]) {
      expect(withoutPositions(await readFixtureState(parts))).toEqual(base)
    }
  })
})
