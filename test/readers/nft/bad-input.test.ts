/**
 * Bad and awkward input: the reader never throws, keeps what it can read and says, with a
 * coded positioned diagnostic, what it could not. Truncated input (a `{` never closed) is an
 * error (NFT_TRUNCATED): what was complete is kept, but services may be missing (parse.ts).
 */
import {describe, expect, it} from 'vitest'
import {buildNftablesState} from '../../../src/readers/nft/build.js'
import {parse} from '../../../src/readers/nft/parse.js'
import {readState} from '../../../src/readers/read-state.js'
import {runKpInProcess} from '../../helpers/run-in-process.js'
import {fixturePath, readFixture, withoutPositions} from './corpus-shape.js'

const read = (text: string, path = 'in.nft') => readState({sources: [{path, text}], format: 'nft'})
const codes = (s: {diagnostics: {code: string; severity: string}[]}) =>
  s.diagnostics.map((d) => `${d.severity} ${d.code}`)

describe('nft reader on bad input', () => {
  it('empty text: no tables, so NFT_NO_KUBE_PROXY at line 1', async () => {
    const parsed = parse({path: 'empty.nft', text: ''})
    expect(parsed.diagnostics).toEqual([])
    const state = buildNftablesState([parsed], {})
    expect(state.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'NFT_NO_KUBE_PROXY',
        message: expect.stringContaining('no `table ip kube-proxy`'),
        source: {path: 'empty.nft', line: 1},
      },
    ])
  })

  it('garbage: statements not understood are warnings (capped), unbalanced braces an error', async () => {
    const lines = Array.from({length: 30}, (_, i) => `hello world ${i}`)
    const state = await read(`${lines.join('\n')}\n\u001b[31m what { is { this\n`)
    const unknown = state.diagnostics.filter((d) => d.code === 'NFT_UNKNOWN_STATEMENT')
    expect(unknown).toHaveLength(21)
    expect(unknown[0]).toMatchObject({severity: 'warning', source: {path: 'in.nft', line: 1}})
    expect(unknown[20]!.message).toContain('10 more statements')
    expect(codes(state)).toContain('error NFT_TRUNCATED')
    expect(codes(state)).toContain('error NFT_NO_KUBE_PROXY')
  })

  it('an unrelated ruleset exits 3 with path:1 (no kube-proxy table)', async () => {
    const r = await runKpInProcess([
      'list',
      '--json',
      '-f',
      fixturePath('nft', 'bad', 'unrelated.nft'),
    ])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('unrelated.nft:1: no `table ip kube-proxy`')
  })

  it('nft list cut in the middle of a chain: keeps the complete part, NFT_TRUNCATED at the end', async () => {
    const text = readFixture('nft', 'upstream-overall', 'list.nft')
    const cut = text.indexOf('\n', text.indexOf('chain service-ULMVA6XW-ns1/svc1/tcp/p80 {') + 1)
    const state = await read(text.slice(0, text.indexOf('\n', cut + 1) + 1))
    const truncated = state.diagnostics.filter((d) => d.code === 'NFT_TRUNCATED')
    expect(truncated.map((d) => d.severity)).toEqual(['error', 'error'])
    expect(truncated.map((d) => d.message.split(' (')[0])).toEqual([
      'the input ends inside chain service-ULMVA6XW-ns1/svc1/tcp/p80',
      'the input ends inside table ip kube-proxy',
    ])
    // the maps came before the cut: every service is still there, with the frontends they name
    expect(state.services.map((s) => s.name)).toEqual([
      'svc1',
      'svc2',
      'svc3',
      'svc4',
      'svc5',
      'svc6',
    ])
  })

  it('a transaction statement cut inside its braces is reported at its line; the rest is kept', async () => {
    const text = readFixture('nft', 'upstream-overall', 'input.nft')
    const lines = text.split('\n')
    const at = lines.findIndex((l) =>
      l.startsWith('add element ip kube-proxy service-ips { 5.6.7.8'),
    )
    const state = await read(
      `${lines.slice(0, at).join('\n')}\nadd element ip kube-proxy service-ips { 5.6.7.8 . tcp\n`,
    )
    expect(
      state.diagnostics
        .filter((d) => d.code === 'NFT_TRUNCATED')
        .map((d) => [d.severity, d.source!.line]),
    ).toEqual([['error', at + 1]])
    expect(state.services.some((s) => s.name === 'svc4')).toBe(true)
  })

  it('a transaction cut in the middle of an `add rule` line: NFT_TRUNCATED there, the cut rule not read', async () => {
    const lines = readFixture('nft', 'upstream-overall', 'input.nft').split('\n')
    const at = lines.findIndex((l) => l.startsWith('add rule ip kube-proxy service-ULMVA6XW'))
    const cutRule = lines[at]!.slice(0, lines[at]!.indexOf('172.30.0.41') + 10)
    const state = await read(`${lines.slice(0, at).join('\n')}\n${cutRule}`)
    expect(
      state.diagnostics
        .filter((d) => d.code === 'NFT_TRUNCATED')
        .map((d) => [d.severity, d.source!.line]),
    ).toEqual([['error', at + 1]])
    expect(JSON.stringify(state)).not.toContain('172.30.0.4"')
  })

  it('a listing that lost only the newline after its last `}` is whole', async () => {
    const text = readFixture('nft', 'upstream-overall', 'list.nft')
    const state = await read(text.trimEnd())
    expect(codes(state)).not.toContain('error NFT_TRUNCATED')
    expect(withoutPositions(state)).toEqual(withoutPositions(await read(text)))
  })

  it('CRLF line ends read like LF', async () => {
    const text = readFixture('nft', 'upstream-overall', 'list.nft')
    expect(withoutPositions(await read(text.replaceAll('\n', '\r\n')))).toEqual(
      withoutPositions(await read(text)),
    )
  })

  it('a 1 MB line (an element list on one line) is read in full', async () => {
    const ips: string[] = []
    let length = 0
    for (let i = 0; length < 1024 * 1024; i++) {
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
      ips.push(ip)
      length += ip.length + 2
    }
    const text = `${readFixture('nft', 'upstream-overall', 'input.nft')}\nadd element ip kube-proxy cluster-ips { ${ips.join(', ')} }\n`
    const parsed = parse({path: 'big.nft', text})
    const doc = parsed.data
    const table = doc.tables.get('ip kube-proxy')!
    expect(table.sets.get('cluster-ips')!.elements).toHaveLength(6 + ips.length)
    const state = buildNftablesState([parsed], {})
    expect(state.services).toHaveLength(6)
  })

  it('a stray `}` and an unterminated string are warnings with their lines', async () => {
    const state = await read('}\ntable ip kube-proxy {\n\tcomment "rules for\n}\n')
    expect(
      state.diagnostics
        .filter((d) => d.severity === 'warning')
        .map((d) => [d.code, d.source!.line]),
    ).toEqual([
      ['NFT_UNBALANCED_BRACE', 1],
      ['NFT_UNTERMINATED_STRING', 3],
    ])
  })

  it('never throws on random bytes', async () => {
    let seed = 7
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
    const alphabet =
      'add table chain rule element map set { } ; , : . " # ip kube-proxy goto 0x4000 \n\t'
    for (let n = 0; n < 20; n++) {
      let text = ''
      for (let i = 0; i < 400; i++) text += alphabet[Math.floor(rnd() * alphabet.length)]
      const state = await read(text)
      expect(state.kind).toBe('ProxyState')
    }
  })

  it('a line of 30,000 stray `}` is 30,000 warnings, not a RangeError', async () => {
    // Was `RangeError: Maximum call stack size exceeded` (a recursive call per `}`), after seconds of copying.
    const state = await read(`${'}'.repeat(30_000)}\n${selectionTable('')}`)
    expect(state.diagnostics.filter((d) => d.code === 'NFT_UNBALANCED_BRACE')).toHaveLength(30_000)
    expect(state.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
    expect(state.services.map((s) => s.frontends.map((f) => f.ip))).toEqual([['172.30.0.41']])
  })

  it('a mangled `numgen` modulus gives shares from the entries, never NaN', async () => {
    // Was share NaN: Number('mod') is NaN, and Math.max(NaN, 1) too.
    const state = await read(
      selectionTable(
        '\t\tnumgen random . mod 1 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }',
      ),
    )
    expect(state.services.map((s) => s.endpoints.map((e) => [e.ip, e.share]))).toEqual([
      [['10.180.0.1', 1]],
    ])
    expect(codes(state)).toEqual(['warning NFT_INCONSISTENT'])
    const inline = await read(
      selectionTable('\t\tdnat ip to numgen random mod x map { 0 : 10.180.0.1 . 80 }'),
    )
    expect(inline.services[0]!.endpoints.map((e) => e.share)).toEqual([1])
  })

  it('a second rule that picks endpoints gets only what the first left over (shares never sum past 1)', async () => {
    // Was shares 1 and 1 (and 2 for an endpoint both rules pick): each rule counted as if it were alone.
    const both =
      '\t\tnumgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }\n\t\tmeta l4proto tcp dnat to '
    const other = await read(selectionTable(`${both}10.180.0.2:80`))
    expect(other.services[0]!.endpoints.map((e) => [e.ip, e.share])).toEqual([
      ['10.180.0.1', 1],
      ['10.180.0.2', 0],
    ])
    // An endpoint chain without affinity (before 1.36) beside a direct dnat (1.37): mixed too.
    expect(other.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['NFT_INCONSISTENT', 8],
      ['NFT_LAYOUT_MIXED', 8],
    ])
    const same = await read(selectionTable(`${both}10.180.0.1:80`))
    expect(same.services[0]!.endpoints.map((e) => [e.ip, e.share])).toEqual([['10.180.0.1', 1]])
    // A first rule that picks only half the time leaves the other half to the next one.
    const half = await read(
      selectionTable(
        '\t\tnumgen random mod 2 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }\n\t\tmeta l4proto tcp dnat to 10.180.0.2:80',
      ),
    )
    expect(half.services[0]!.endpoints.map((e) => [e.ip, e.share])).toEqual([
      ['10.180.0.1', 0.5],
      ['10.180.0.2', 0.5],
    ])
  })

  it('an iptables-save source read with nft input is a warning, not a TypeError', async () => {
    // Was `TypeError: chain.rules is not a function`: the iptables ruleset's tables passed for nft tables.
    const iptables = '*raw\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j ACCEPT\nCOMMIT\n'
    const state = await readState({
      sources: [
        {path: 'a.rules', text: iptables},
        {path: 'b.nft', text: 'table ip kube-proxy {\n}\n'},
      ],
    })
    expect(
      state.diagnostics.map((d) => [d.severity, d.code, d.source?.path, d.source?.line]),
    ).toEqual([['warning', 'NFT_WRONG_SOURCE', 'a.rules', 1]])
    expect(state.foreign).toEqual([])
  })
})

/** A kube-proxy table with one service port whose service chain holds `rules`. */
function selectionTable(rules: string): string {
  return `table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }
	}
	chain service-ULMVA6XW-ns1/svc1/tcp/p80 {
${rules}
	}
	chain endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 {
		meta l4proto tcp dnat to 10.180.0.1:80
	}
}
`
}
