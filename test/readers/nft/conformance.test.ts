/**
 * The 8 nftables cases of kube-proxy's own tests (fixtures/nft/upstream-*, copied from the
 * corpus) against their hand-derived expectations, in every form the same ruleset takes:
 * the transaction dump kube-proxy writes, real `nft list`, `nft -a list` and `nft -j list`.
 */
import {readdirSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {
  fixturePath,
  fromCorpus,
  fromState,
  readFixture,
  readFixtureState,
  withoutPositions,
  type CorpusService,
} from './corpus-shape.js'

const cases = readdirSync(fixturePath('nft')).filter((d) => d.startsWith('upstream-'))

/** As written in the rules (docs/model.md): the test dumps say 0x4000, real nft prints 0x00004000. */
function sameButMark(state: ProxyState): unknown {
  return withoutPositions({...state, node: {...state.node, masqueradeMark: null}})
}

describe('nftables corpus conformance', () => {
  it('has all 8 corpus cases', () => {
    expect(cases.sort()).toEqual([
      'upstream-badips',
      'upstream-overall',
      'upstream-startup',
      'upstream-syncrepeated-emptied',
      'upstream-syncrepeated-initial',
      'upstream-syncrepeated-noendpoints',
      'upstream-syncrepeated-stalechains',
      'upstream-syncrepeated-twoendpoints',
    ])
  })

  for (const c of cases) {
    describe(c, () => {
      it('the transaction dump gives the expected services', async () => {
        const state = await readFixtureState(['nft', c, 'input.nft'])
        expect(state.mode).toBe('nftables')
        expect(state.diagnostics.filter((d) => d.severity !== 'info')).toEqual([])
        const expected = JSON.parse(readFixture('nft', c, 'expected.json')) as CorpusService[]
        expect(fromState(state)).toEqual(fromCorpus(expected))
        expect(state.node.masqueradeMark).toBe('0x4000')
        expect(state.node.localhostNodePorts).toBe(false)
        for (const sp of state.services) {
          if (sp.endpoints.length === 0) continue
          const sum = sp.endpoints.reduce((a, e) => a + (e.share ?? 0), 0)
          expect(Math.abs(sum - 1)).toBeLessThan(1e-9)
        }
      })

      it('nft list, nft -a list and nft -j list give the same model', async () => {
        const dump = await readFixtureState(['nft', c, 'input.nft'])
        const list = await readFixtureState(['nft', c, 'list.nft'])
        const handles = await readFixtureState(['nft', c, 'list-a.nft'])
        const json = await readFixtureState(['nft-json', c, 'input.json'])
        expect(list.sources[0]!.format).toBe('nft')
        expect(json.sources[0]!.format).toBe('nft-json')
        expect(json.sources[0]!.tool).toBe('nftables v1.0.6 (Lester Gooch #5)')
        for (const other of [list, handles, json]) {
          expect(other.node.masqueradeMark).toBe('0x00004000')
          expect(sameButMark(other)).toEqual(sameButMark(dump))
        }
      })
    })
  }
})
