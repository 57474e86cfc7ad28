/**
 * The rule text `kp explain --rules` quotes (src/readers/rule-text.ts): a line of a text dump as
 * it is, an `nft -j` entry in nft's words (chain NAME handle N: RULE), a map by the elements that
 * lead to the same service port's chains; nothing for a source this run did not read.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import type {SourceRef} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import {ruleTextOf} from '../../src/readers/rule-text.js'
import type {SourceText} from '../../src/readers/types.js'
import {ROOT} from '../helpers/run-cli.js'

const source = (path: string, format?: SourceText['format']): SourceText => ({
  path,
  text: readFileSync(`${ROOT}${path}`, 'utf8'),
  format,
})

async function quoted(src: SourceText, name: string): Promise<string[][]> {
  const state = await readState({sources: [src]})
  const sp = state.services.find((s) => `${s.namespace}/${s.name}` === name)!
  const text = ruleTextOf([src])
  return sp.rules.map((ref) => text(ref, sp.rules))
}

const SVC1_CHAIN = 'service-ULMVA6XW-ns1/svc1/tcp/p80'
// The rules of ns1/svc1's service chain as `nft list` prints them, from the same ruleset's text.
const LIST = readFileSync(`${ROOT}fixtures/nft/upstream-overall/list.nft`, 'utf8').split('\n')
const open = LIST.indexOf(`\tchain ${SVC1_CHAIN} {`)
const SVC1_RULES = LIST.slice(open + 1, LIST.indexOf('\t}', open)).map((l) => l.trim())

/** The handles of a chain's rules in an nft -j document, in order. */
function handles(path: string, chain: string): number[] {
  const doc = JSON.parse(readFileSync(`${ROOT}${path}`, 'utf8')) as {nftables: any[]}
  return doc.nftables.filter((e) => e.rule?.chain === chain).map((e) => e.rule.handle as number)
}

describe('ruleTextOf', () => {
  it('quotes an nft -j chain as its rules, chain NAME handle N: RULE, and a map by its element', async () => {
    for (const path of [
      'fixtures/nft-json/upstream-overall/input.json',
      'fixtures/nft-json/pretty/input.json', // the same document over many lines
    ]) {
      const [map, chain] = await quoted(source(path), 'ns1/svc1')
      expect(map).toEqual([`map service-ips: 172.30.0.41 . tcp . 80 : goto ${SVC1_CHAIN}`])
      const h = handles(path, SVC1_CHAIN)
      expect(h).toHaveLength(2)
      expect(SVC1_RULES).toHaveLength(2)
      expect(chain).toEqual(SVC1_RULES.map((r, i) => `chain ${SVC1_CHAIN} handle ${h[i]}: ${r}`))
    }
  })

  it('the same rules read from nft text are the lines themselves', async () => {
    const path = 'fixtures/nft/upstream-overall/list.nft'
    const lines = readFileSync(`${ROOT}${path}`, 'utf8').split('\n')
    const src = source(path)
    const state = await readState({sources: [src]})
    const sp = state.services.find((s) => s.name === 'svc1')!
    const text = ruleTextOf([src])
    expect(sp.rules.map((ref) => text(ref, sp.rules))).toEqual(
      sp.rules.map((ref) => [lines[ref.line - 1]]),
    )
  })

  it('quotes live output by its live: path, and nothing for a path this run did not read', () => {
    const live: SourceText = {path: 'live:iptables-nft-save', text: '*nat\n-A KUBE-SERVICES -j X\n'}
    const text = ruleTextOf([live])
    const ref = (path: string, line: number): SourceRef => ({path, line})
    expect(text(ref('live:iptables-nft-save', 2), [])).toEqual(['-A KUBE-SERVICES -j X'])
    expect(text(ref('live:iptables-nft-save', 9), [])).toEqual([])
    expect(text(ref('saved-elsewhere.rules', 2), [])).toEqual([])
  })

  it('an nft -j document kp cannot parse quotes nothing, never throws', () => {
    const broken: SourceText = {path: 'x.json', text: '{"nftables": [', format: 'nft-json'}
    expect(ruleTextOf([broken])({path: 'x.json', line: 1}, [])).toEqual([])
  })
})
