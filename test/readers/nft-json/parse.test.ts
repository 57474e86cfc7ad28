/**
 * `nft -j` specifics: bad JSON, the wrong document, objects kp skips, the tool version, and
 * the expressions rendered into nft list words (checked against real `nft list` of the same
 * ruleset, fixtures/nft/upstream-overall/list.nft).
 */
import {describe, expect, it} from 'vitest'
import {parseNftText} from '../../../src/readers/nft/parse.js'
import {parse, parseNftJson} from '../../../src/readers/nft-json/parse.js'
import {readState} from '../../../src/readers/read-state.js'
import {readFixture} from '../nft/corpus-shape.js'

describe('nft -j reader', () => {
  it('invalid JSON is an error at line 1, never a throw', () => {
    const r = parseNftJson('{"nftables": [', 'bad.json')
    expect(r.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'NFT_JSON_INVALID',
        message: expect.stringContaining('not valid JSON'),
        source: {path: 'bad.json', line: 1},
      },
    ])
  })

  it('a document cut off keeps its whole entries and says where it was cut: NFT_JSON_TRUNCATED', async () => {
    const text = readFixture('nft-json', 'upstream-overall', 'input.json')
    const whole = JSON.parse(text) as {nftables: unknown[]}
    const at = 20000
    const r = parseNftJson(text.slice(0, at), 'cut.json')
    const errors = r.diagnostics.filter((d) => d.severity === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]!.code).toBe('NFT_JSON_TRUNCATED')
    const read = Number(/after (\d+) whole entries/.exec(errors[0]!.message)![1])
    expect(read).toBeGreaterThan(10)
    expect(read).toBeLessThan(whole.nftables.length)
    expect(errors[0]!.message).toContain(`cut off in entry ${read + 1}`)
    expect(errors[0]!.source).toEqual({path: 'cut.json', line: 1})
    const state = await readState({sources: [{path: 'cut.json', text: text.slice(0, at)}]})
    // svc1's chains were whole before the cut; svc4's endpoint chain was cut and svc5's rules are
    // all after it: unknown (incomplete), not "no endpoints".
    const byName = (n: string) => state.services.find((sp) => sp.name === n)!
    expect(byName('svc1').incomplete).toBeUndefined()
    expect(byName('svc1').endpoints).toHaveLength(1)
    expect(byName('svc4').incomplete).toBeDefined()
    expect(byName('svc5').incomplete).toBeDefined()
    expect(errors[0]!.message).toContain('chain(s) whose rules may come after the cut are left out')
    // Pretty-printed (jq .), the cut is at the last line; cut after the array, too.
    const pretty = JSON.stringify(whole, null, 2)
    const cutPretty = pretty.slice(0, Math.floor(pretty.length * 0.7))
    const p = parseNftJson(cutPretty, 'cut-pretty.json')
    expect(p.diagnostics.find((d) => d.code === 'NFT_JSON_TRUNCATED')?.source?.line).toBe(
      cutPretty.split('\n').length,
    )
    const noBrace = parseNftJson(text.trimEnd().slice(0, -1), 'no-brace.json')
    expect(noBrace.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual([
      'NFT_JSON_TRUNCATED',
    ])
  })

  it('JSON without a "nftables" array is an error', () => {
    const r = parseNftJson('{"kind": "List"}', 'x.json')
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['error', 'NFT_JSON_INVALID']])
  })

  it('skips objects it does not use with one info, and warns on entries that are not objects', () => {
    const text = JSON.stringify({
      nftables: [
        {table: {family: 'inet', name: 'x', handle: 1}},
        {flowtable: {family: 'inet', name: 'f', table: 'x'}},
        {counter: {family: 'inet', name: 'c', table: 'x'}},
        42,
      ],
    })
    const r = parseNftJson(text, 'x.json')
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source!.line])).toEqual([
      ['warning', 'NFT_JSON_SHAPE', 4],
      ['info', 'NFT_SKIPPED_OBJECT', 1],
    ])
  })

  it('names the nft version from metainfo as the tool', () => {
    const parsed = parse({
      path: 'x.json',
      text: readFixture('nft-json', 'upstream-overall', 'input.json'),
    })
    expect(parsed.source).toEqual({
      path: 'x.json',
      format: 'nft-json',
      tool: 'nftables v1.0.6 (Lester Gooch #5)',
    })
  })

  it('renders every rule as the words nft list prints for it', () => {
    const json = parseNftJson(readFixture('nft-json', 'upstream-overall', 'input.json'), 'j').doc
    const text = parseNftText(readFixture('nft', 'upstream-overall', 'list.nft'), 't').doc
    const rules = (doc: typeof json) =>
      [...doc.tables.get('ip kube-proxy')!.chains.values()].flatMap((c) =>
        c
          .rules()
          .map(
            (r) =>
              `${c.name}: ${r.tokens.join(' ')}${r.comment === null ? '' : ` comment ${r.comment}`}`,
          ),
      )
    expect(rules(json)).toEqual(rules(text))
    const elements = (doc: typeof json) =>
      [...doc.tables.get('ip kube-proxy')!.sets.values()].flatMap((s) =>
        s.elements.map(
          (e) =>
            `${s.name}: ${e.key.join(' . ')} ${e.comment ?? ''} : ${(e.value ?? []).join(' ')}`,
        ),
      )
    expect(elements(json)).toEqual(elements(text))
  })

  it('a JSON.parse message that quotes a newline stays one line, at the line of the error', () => {
    // Was two lines: V8 quotes the text around the error, `"Type: ha\nN"... is not valid JSON`;
    // and always line 1. The stray "," is on line 2.
    const r = parseNftJson('{"nftables": [\n,\n]}', 'bad.json')
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      ['error', 'NFT_JSON_INVALID', 2],
    ])
    expect(r.diagnostics[0]!.message).not.toMatch(/[\r\n]/)
  })

  it('a syntax error after an entry nested deeper than 64 levels is reported where it is', () => {
    // Was "nested deeper than 64 levels" on line 1: the line-finding parser stopped at the depth
    // limit of saved states before it reached the error JSON.parse had found.
    const deep = '['.repeat(70) + ']'.repeat(70)
    const r = parseNftJson(
      `{"nftables": [{"x": ${deep}},\n{"table": {"family": "ip" "name": "kube-proxy"}}]}`,
      'bad.json',
    )
    expect(r.diagnostics.map((d) => [d.code, d.source?.line, d.message])).toEqual([
      [
        'NFT_JSON_INVALID',
        2,
        expect.stringContaining('expected "," or "}" in an object, found "\\""'),
      ],
    ])
  })

  it('an entry nested past the stack or with an object for a name is skipped with a warning, never thrown', () => {
    // Was a RangeError (expr recursing into {"elem": {"val": ...}}) and a TypeError
    // (String({"toString": 1}): "Cannot convert object to primitive value") out of the reader.
    const deep = '{"elem":{"val":'.repeat(20000) + '1' + '}}'.repeat(20000)
    const text = [
      '{"nftables": [',
      '{"table": {"family": "ip", "name": "kube-proxy"}},',
      '{"chain": {"family": "ip", "table": "kube-proxy", "name": "c"}},',
      `{"rule": {"family": "ip", "table": "kube-proxy", "chain": "c", "expr": [{"match": {"op": "==", "left": ${deep}, "right": 1}}]}},`,
      '{"chain": {"family": "ip", "table": "kube-proxy", "name": {"toString": 1}}},',
      '{"rule": {"family": "ip", "table": "kube-proxy", "chain": "c", "expr": [{"jump": {"target": {"toString": 1}}}]}},',
      '{"chain": {"family": "ip", "table": "kube-proxy", "name": "d"}}',
      ']}',
    ].join('\n')
    const r = parseNftJson(text, 'x.json')
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source!.line])).toEqual([
      ['warning', 'NFT_JSON_SHAPE', 4],
      ['warning', 'NFT_JSON_SHAPE', 5],
      ['warning', 'NFT_JSON_SHAPE', 6],
    ])
    expect([...r.doc.tables.get('ip kube-proxy')!.chains.keys()]).toEqual(['c', 'd'])
  })

  it('an entry missing a name, or with null for one, or empty, is skipped with a warning, never read as "undefined" or "null"', () => {
    // Was a table, a chain and a jump target named "undefined" (String(undefined)), and one named
    // "null"; a rule without statements was reported later as "a rule kp does not recognise: ",
    // and an empty entry as '"undefined" entry without an object'.
    const text = [
      '{"nftables": [',
      '{"table": {"family": "ip", "name": "kube-proxy"}},',
      '{"table": {"family": "ip"}},',
      '{"chain": {"family": "ip", "table": "kube-proxy"}},',
      '{"chain": {"family": "ip", "table": "kube-proxy", "name": null}},',
      '{"chain": {"family": "ip", "table": "kube-proxy", "name": "c"}},',
      '{"rule": {"family": "ip", "table": "kube-proxy", "chain": "c", "expr": [{"jump": {}}]}},',
      '{"rule": {"family": "ip", "table": "kube-proxy", "chain": "c", "expr": [{"match": {"op": "==", "left": {"numgen": {"mode": "random"}}, "right": 1}}]}},',
      '{"rule": {"family": "ip", "table": "kube-proxy", "chain": "c", "expr": [{"jump": {"target": "d"}}]}},',
      '{"rule": {"family": "ip", "table": "kube-proxy", "chain": "e", "expr": [null, {}]}},',
      '{}',
      ']}',
    ].join('\n')
    const r = parseNftJson(text, 'x.json')
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source!.line])).toEqual(
      [3, 4, 5, 7, 8, 10, 11].map((line) => ['warning', 'NFT_JSON_SHAPE', line]),
    )
    expect(r.diagnostics.slice(-2).map((d) => d.message)).toEqual([
      'a rule in chain e without statements ("expr") kp can read; skipped',
      'an empty entry of "nftables"; skipped',
    ])
    expect(r.diagnostics[0]!.message).toBe(
      'an entry with a name or number missing, or null, an object or an array in its place; skipped',
    )
    expect([...r.doc.tables.keys()]).toEqual(['ip kube-proxy'])
    const chain = r.doc.tables.get('ip kube-proxy')!.chains
    expect([...chain.keys()]).toEqual(['c'])
    expect(
      chain
        .get('c')!
        .rules()
        .map((rule) => rule.tokens.join(' ')),
    ).toEqual(['jump d'])
  })

  it('a negative or fractional set timeout is a warning, never a negative affinity timeout', async () => {
    // Was sessionAffinity.timeoutSeconds -1: any JSON number was taken as the timeout.
    const text = readFixture('nft-json', 'newest-inline-dnat', 'input.json').replaceAll(
      '"timeout": 10800',
      '"timeout": -1',
    )
    const r = parseNftJson(text, 'x.json')
    expect(
      r.diagnostics.map((d) => [
        d.severity,
        d.code,
        d.message.replace(/affinity-[^:]+/, 'affinity-X'),
      ]),
    ).toEqual([
      [
        'warning',
        'NFT_JSON_SHAPE',
        'set affinity-X: cannot read the timeout (not a whole number of seconds)',
      ],
      [
        'warning',
        'NFT_JSON_SHAPE',
        'set affinity-X: cannot read the timeout (not a whole number of seconds)',
      ],
    ])
    const state = await readState({sources: [{path: 'x.json', text}]})
    const web = state.services.find((sp) => sp.name === 'web')!
    expect(web.sessionAffinity).toEqual({type: 'ClientIP', timeoutSeconds: null})
  })
})
