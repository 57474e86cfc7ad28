/**
 * Reading a saved ProxyState back: every field checked against src/model/types.ts, every
 * problem a coded diagnostic with the line it is on, nothing filled in.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {emptyState, sortState} from '../../../src/core/state.js'
import {parse} from '../../../src/readers/kp-json/parse.js'
import {jsonSyntaxError, parseJsonWithLines} from '../../../src/readers/json-lines.js'
import {ROOT} from '../../helpers/run-cli.js'

const overallPath = `${ROOT}fixtures/kp-json/overall/state.json`
const overallText = readFileSync(overallPath, 'utf8')

function read(text: string) {
  return parse({path: 'saved.json', text})
}

function codesAndLines(text: string) {
  return read(text).diagnostics.map((d) => [d.severity, d.code, d.source?.line, d.message])
}

/** The text of a valid state, pretty-printed, so that field lines are predictable. */
function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2)
}

describe('kp-json reader', () => {
  it('reads the hand-made overall state unchanged and already in sorted order', () => {
    const r = read(overallText)
    expect(r.diagnostics).toEqual([])
    expect(r.data).toEqual(JSON.parse(overallText))
    expect(sortState(structuredClone(r.data!))).toEqual(r.data)
  })

  it('reads an optional member added after the first release, and a state saved without it', () => {
    const withField = structuredClone(JSON.parse(overallText))
    const fe = withField.services[0].frontends[0]
    fe.nodeSourceExcluded = true
    const r = read(pretty(withField))
    expect(r.diagnostics).toEqual([])
    expect(r.data!.services[0]!.frontends[0]!.nodeSourceExcluded).toBe(true)
    expect(read(overallText).data!.services[0]!.frontends[0]).not.toHaveProperty(
      'nodeSourceExcluded',
    )
    fe.nodeSourceExcluded = 'yes'
    expect(codesAndLines(pretty(withField))).toEqual([
      [
        'error',
        'KPJSON_BAD_FIELD',
        expect.any(Number),
        expect.stringContaining('nodeSourceExcluded'),
      ],
    ])
  })

  it('reads an empty state, also behind a byte-order mark', () => {
    const r = read(pretty(emptyState('nftables')))
    expect(r.diagnostics).toEqual([])
    expect(r.data).toEqual(emptyState('nftables'))
    expect(read(`\ufeff${pretty(emptyState('nftables'))}`).data).toEqual(emptyState('nftables'))
  })

  it('reports each missing node field at the line of "node" instead of crashing on node: {}', () => {
    const s = {...emptyState('iptables'), node: {}}
    const text = pretty(s)
    const nodeLine = text.split('\n').findIndex((l) => l.includes('"node"')) + 1
    const r = read(text)
    expect(r.data).toBeNull()
    const missing = r.diagnostics.filter((d) => d.code === 'KPJSON_MISSING_FIELD')
    expect(missing.map((d) => d.message.split(':')[0])).toEqual(
      Object.keys(emptyState('iptables').node).map((k) => `node.${k}`),
    )
    expect(missing.map((d) => `${d.source?.path}:${d.source?.line}`)).toEqual(
      missing.map(() => `saved.json:${nodeLine}`),
    )
  })

  it('points a wrong value at its own line, with the path to it', () => {
    const s = JSON.parse(overallText)
    s.services[3].frontends[1].port = 'eighty'
    s.services[0].endpoints[0].share = 1.5
    s.services[5].frontends[0].action = 'REJECT'
    const text = pretty(s)
    const lines = text.split('\n')
    const lineOf = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1
    expect(codesAndLines(text)).toEqual([
      [
        'error',
        'KPJSON_BAD_FIELD',
        lineOf('"share": 1.5'),
        'services[0].endpoints[0].share: expected a number from 0 to 1, found 1.5',
      ],
      [
        'error',
        'KPJSON_BAD_FIELD',
        lineOf('"port": "eighty"'),
        'services[3].frontends[1].port: expected an integer from 0 to 65535, found "eighty"',
      ],
      [
        'error',
        'KPJSON_BAD_FIELD',
        lineOf('"action": "REJECT"'),
        'services[5].frontends[0].action: expected one of "forward", "reject", "drop", found "REJECT"',
      ],
    ])
    // The bad service ports are left out; the others are read (the state is then incomplete).
    const data = read(text).data!
    expect(data.services).toHaveLength(JSON.parse(overallText).services.length - 3)
  })

  it('reads nothing when an error is outside the service ports', () => {
    const s = JSON.parse(overallText)
    s.node.podCIDRs = ['10.0.0.0/33']
    expect(read(pretty(s)).data).toBeNull()
  })

  it('checks addresses and CIDRs', () => {
    const s = JSON.parse(overallText)
    s.node.podCIDRs = ['10.0.0.0/33']
    s.services[0].endpoints[0].ip = '10.180.0.256'
    s.services[4].frontends[1].sourceRanges = ['203.0.113.0']
    s.node.nodePortAddresses = ['192.168.1.5', 'fd00::/64']
    const text = pretty(s)
    expect(read(text).diagnostics.map((d) => d.message)).toEqual([
      'node.podCIDRs[0]: expected a CIDR, found "10.0.0.0/33"',
      'services[0].endpoints[0].ip: expected an IP address, found "10.180.0.256"',
      'services[4].frontends[1].sourceRanges[0]: expected a CIDR, found "203.0.113.0"',
    ])
  })

  it('warns about members the model does not have and leaves them out', () => {
    const s = JSON.parse(overallText)
    s.services[0].color = 'blue'
    const text = pretty(s)
    const r = read(text)
    expect(r.diagnostics).toEqual([
      {
        severity: 'warning',
        code: 'KPJSON_UNKNOWN_FIELD',
        message: 'services[0].color: not part of the ProxyState model; ignored',
        source: {
          path: 'saved.json',
          line: text.split('\n').findIndex((l) => l.includes('"color"')) + 1,
        },
      },
    ])
    expect(r.data).toEqual(JSON.parse(overallText))
  })

  it('refuses another kind or schema version, with the line', () => {
    expect(codesAndLines('{\n  "kind": "ExplainResult"\n}')).toEqual([
      [
        'error',
        'KPJSON_NOT_STATE',
        2,
        'kind: not a kp ProxyState (kind is "ExplainResult", expected "ProxyState")',
      ],
    ])
    const v2 = pretty({...emptyState('iptables'), schemaVersion: 2})
    expect(codesAndLines(v2)).toEqual([
      [
        'error',
        'KPJSON_SCHEMA_VERSION',
        2,
        'schemaVersion: unsupported schemaVersion; this kp reads 1 (found 2)',
      ],
    ])
    expect(codesAndLines('[1]')[0]!.slice(0, 3)).toEqual(['error', 'KPJSON_NOT_STATE', 1])
  })

  it('reports JSON syntax errors at their line', () => {
    expect(codesAndLines('{\n  "kind": "ProxyState",\n  "mode": iptables\n}')).toEqual([
      ['error', 'KPJSON_SYNTAX', 3, 'not valid JSON: unexpected "i"'],
    ])
    expect(codesAndLines('{"kind": "ProxyState"')).toEqual([
      [
        'error',
        'KPJSON_SYNTAX',
        1,
        'not valid JSON: expected "," or "}" in an object, found the end of the input',
      ],
    ])
    expect(codesAndLines('{"kind": "Proxy\tState"}')[0]![3]).toBe(
      'not valid JSON: a control character must be escaped inside a string',
    )
    expect(codesAndLines('{} {}')[0]![3]).toBe(
      'not valid JSON: unexpected "{" after the JSON document',
    )
    // A member name with an escaped newline is quoted as JSON: the message stays one line (it was two).
    expect(codesAndLines('{"kind": "ProxyState", "a\\nb" 1}')).toEqual([
      ['error', 'KPJSON_SYNTAX', 1, 'not valid JSON: expected ":" after "a\\nb", found "1"'],
    ])
  })

  it('a value nested too deep for JSON.stringify is named in the message, never a RangeError', () => {
    // Was `RangeError: Maximum call stack size exceeded` out of the reader (JSON.stringify in the message).
    const deep = '['.repeat(20000) + ']'.repeat(20000)
    const text = `{"schemaVersion": 1, "kind": "ProxyState", "mode": ${deep}}`
    const d = read(text).diagnostics.find(
      (x) => x.source?.line === 1 && x.message.startsWith('mode:'),
    )
    expect(d).toMatchObject({
      severity: 'error',
      code: 'KPJSON_BAD_FIELD',
      message: expect.stringContaining('found an array nested too deep to show'),
    })
    expect(codesAndLines(`{"kind": ${deep}}`)).toEqual([
      [
        'error',
        'KPJSON_NOT_STATE',
        1,
        'kind: not a kp ProxyState (kind is an array nested too deep to show, expected "ProxyState")',
      ],
    ])
  })
})

describe("a frontend's own endpoints (optional, issue 21 §4)", () => {
  const overall = JSON.parse(overallText) as ReturnType<typeof emptyState>
  const withOwn = () => {
    const state = structuredClone(overall)
    const sp = state.services.find((s) => s.endpoints.length > 1)!
    sp.frontends[0]!.endpoints = [structuredClone(sp.endpoints[0]!)]
    return {state, fe: sp.frontends[0]!}
  }

  it('are read back when present, and a state saved without them still reads', () => {
    const {state, fe} = withOwn()
    const r = read(pretty(state))
    expect(r.diagnostics).toEqual([])
    expect(r.data).toEqual(state)
    expect(fe.endpoints).toHaveLength(1)
    expect(overallText).not.toContain('"frontends": [{"endpoints"')
    expect(read(overallText).diagnostics).toEqual([])
  })

  it("are checked like the service port's", () => {
    const {state, fe} = withOwn()
    fe.endpoints![0]!.ip = 'not-an-ip'
    expect(read(pretty(state)).diagnostics.map((d) => [d.code, d.message])).toEqual([
      [
        'KPJSON_BAD_FIELD',
        expect.stringMatching(/frontends\[0\]\.endpoints\[0\]\.ip.*an IP address/),
      ],
    ])
  })
})

describe('parseJsonWithLines', () => {
  it('parses what JSON.parse parses, to the same value', () => {
    const text =
      '{"a": [1, -2.5e3, true, false, null, "x\\u0041\\n"], "b": {"": {}}, "__proto__": 1, "a": "last wins"}'
    const r = parseJsonWithLines(text)
    expect(r.ok && r.value).toEqual(JSON.parse(text))
  })
  it('refuses nesting deeper than 64 levels instead of overflowing the stack', () => {
    const r = parseJsonWithLines('['.repeat(100_000))
    expect(r).toEqual({ok: false, message: 'nested deeper than 64 levels', line: 1})
  })
  it('jsonSyntaxError looks past 64 levels, to 1,000, within the stack', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
    expect(jsonSyntaxError(`[${nested(999)},\n x]`)).toEqual({message: 'unexpected "x"', line: 2})
    expect(jsonSyntaxError(`[${nested(1001)},\n x]`)).toEqual({
      message: 'nested deeper than 1000 levels',
      line: 1,
    })
  })
  it('records the line of every member and item', () => {
    const r = parseJsonWithLines('{\n "a": [\n  1,\n\n  2\n ]\n}')
    if (!r.ok) throw new Error(r.message)
    const root = r.value as {a: number[]}
    expect(r.lines.get(root)?.members).toEqual({a: 2})
    expect(r.lines.get(root.a)?.members).toEqual([3, 5])
  })
})
