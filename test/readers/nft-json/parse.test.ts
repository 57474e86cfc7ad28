/**
 * `nft -j` specifics: bad JSON, the wrong document, objects kp skips, the tool version, and
 * the expressions rendered into nft list words (checked against real `nft list` of the same
 * ruleset, fixtures/nft/upstream-overall/list.nft).
 */
import {describe, expect, it} from 'vitest'
import {parseNftText} from '../../../src/readers/nft/parse.js'
import {parse, parseNftJson} from '../../../src/readers/nft-json/parse.js'
import {readFixture} from '../nft/corpus-shape.js'

describe('nft -j reader', () => {
  it('invalid JSON is an error at line 1, never a throw', () => {
    const r = parseNftJson('{"nftables": [', 'bad.json')
    expect(r.diagnostics).toEqual([{severity: 'error', code: 'NFT_JSON_INVALID', message: expect.stringContaining('not valid JSON'), source: {path: 'bad.json', line: 1}}])
  })

  it('JSON without a "nftables" array is an error', () => {
    const r = parseNftJson('{"kind": "List"}', 'x.json')
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['error', 'NFT_JSON_INVALID']])
  })

  it('skips objects it does not use with one info, and warns on entries that are not objects', () => {
    const text = JSON.stringify({nftables: [{table: {family: 'inet', name: 'x', handle: 1}}, {flowtable: {family: 'inet', name: 'f', table: 'x'}}, {counter: {family: 'inet', name: 'c', table: 'x'}}, 42]})
    const r = parseNftJson(text, 'x.json')
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source!.line])).toEqual([
      ['warning', 'NFT_JSON_SHAPE', 4],
      ['info', 'NFT_SKIPPED_OBJECT', 1],
    ])
  })

  it('names the nft version from metainfo as the tool', () => {
    const parsed = parse({path: 'x.json', text: readFixture('nft-json', 'upstream-overall', 'input.json')})
    expect(parsed.source).toEqual({path: 'x.json', format: 'nft-json', tool: 'nftables v1.0.6 (Lester Gooch #5)'})
  })

  it('renders every rule as the words nft list prints for it', () => {
    const json = parseNftJson(readFixture('nft-json', 'upstream-overall', 'input.json'), 'j').doc
    const text = parseNftText(readFixture('nft', 'upstream-overall', 'list.nft'), 't').doc
    const rules = (doc: typeof json) =>
      [...doc.tables.get('ip kube-proxy')!.chains.values()].flatMap((c) => c.rules().map((r) => `${c.name}: ${r.tokens.join(' ')}${r.comment === null ? '' : ` comment ${r.comment}`}`))
    expect(rules(json)).toEqual(rules(text))
    const elements = (doc: typeof json) =>
      [...doc.tables.get('ip kube-proxy')!.sets.values()].flatMap((s) => s.elements.map((e) => `${s.name}: ${e.key.join(' . ')} ${e.comment ?? ''} : ${(e.value ?? []).join(' ')}`))
    expect(elements(json)).toEqual(elements(text))
  })
})
