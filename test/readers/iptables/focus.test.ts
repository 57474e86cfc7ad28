/**
 * The focused read behind `kp explain NAME` (ReadOptions.focus, src/readers/iptables/focus.ts)
 * must answer exactly what the full read answers for the services it was asked about: same
 * service ports (frontends, endpoints, shares, policies, rule lines), same node settings.
 * The expectation is the full read of the same fixture, not a copy of the output.
 */
import {mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {ProxyState, ServicePort} from '../../../src/model/types.js'
import {memoryBytes} from '../../../src/readers/bytes.js'
import {
  evidenceSignature,
  readRanges,
  selectFocusedLines,
} from '../../../src/readers/iptables/focus.js'
import {parseIptablesText} from '../../../src/readers/iptables/parse.js'
import type {IptablesRule} from '../../../src/readers/iptables/ruleset.js'
import {loadInputs} from '../../../src/readers/load.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'
import {generateIptablesSave} from '../../../scripts/bench/gen-iptables.mjs'

const FIXTURES = readdirSync(join(ROOT, 'fixtures/iptables'), {withFileTypes: true})
  .filter((d) => d.isDirectory())
  .map((d) => d.name)

function load(dir: string): {path: string; text: string} {
  const path = join('fixtures/iptables', dir, 'input.rules')
  return {path, text: readFileSync(join(ROOT, path), 'utf8')}
}

const read = (src: {path: string; text: string}, needles?: string[]): Promise<ProxyState> =>
  readState({sources: [src]}, needles ? {focus: {needles}} : {})

const named = (state: ProxyState, namespace: string | null, name: string): ServicePort[] =>
  state.services.filter((s) => (namespace === null || s.namespace === namespace) && s.name === name)

/** Dumps with table headers are read focused; `-S` output and grep fragments are not (their tables are inferred from all rules). */
const headerless = (text: string): boolean => !/^\*\w+$/m.test(text)

describe('focused read == full read for the services asked about', () => {
  it.each(FIXTURES)('%s: every named service, by ns/name and by bare name', async (dir) => {
    const src = load(dir)
    const full = await read(src)
    const names = [
      ...new Set(
        full.services.filter((s) => s.name !== null).map((s) => `${s.namespace}/${s.name}`),
      ),
    ]
    for (const nsName of names) {
      const [namespace, name] = nsName.split('/') as [string, string]
      const focused = await read(src, [nsName])
      const focusedCodes = focused.diagnostics.map((d) => d.code)
      expect(focusedCodes.includes('IPT_FOCUSED_READ'), nsName).toBe(!headerless(src.text))
      expect(named(focused, namespace, name), nsName).toEqual(named(full, namespace, name))
      expect(focused.node, nsName).toEqual(full.node)
      expect(focused.diagnostics.filter((d) => d.severity === 'error')).toEqual(
        full.diagnostics.filter((d) => d.severity === 'error'),
      )
      // It may skip the whole-dump checks, but says nothing a full read does not.
      const said = (state: ProxyState) =>
        state.diagnostics
          .filter((d) => d.severity === 'warning')
          .map((d) => `${d.code} ${d.source?.line ?? ''} ${d.message}`)
      const fullWarnings = new Set(said(full))
      expect(
        said(focused).filter((w) => !fullWarnings.has(w)),
        nsName,
      ).toEqual([])

      const anyNamespace = await read(src, [`/${name}`])
      expect(named(anyNamespace, null, name), `/${name}`).toEqual(named(full, null, name))
      expect(anyNamespace.node).toEqual(full.node)
    }
  })
})

describe('what a focused read leaves out', () => {
  it('reads only the matching service of a many-service dump, and says the read was focused', async () => {
    const src = load('upstream-overall')
    const full = await read(src)
    const focused = await read(src, ['ns1/svc1'])
    expect(full.services.length).toBeGreaterThan(5)
    expect(new Set(focused.services.map((s) => `${s.namespace}/${s.name}`))).toEqual(
      new Set(['ns1/svc1']),
    )
    const info = focused.diagnostics.find((d) => d.code === 'IPT_FOCUSED_READ')
    expect(info?.severity).toBe('info')
    expect(info?.message).toContain('ns1/svc1')
  })

  it('follows jumps into SEP chains that carry no comment (large-cluster mode)', async () => {
    const src = load('handmade-node-with-cni')
    const full = await read(src)
    const withEndpoints = full.services.find((s) => s.endpoints.length > 0 && s.name !== null)!
    const focused = await read(src, [`${withEndpoints.namespace}/${withEndpoints.name}`])
    const again = named(focused, withEndpoints.namespace, withEndpoints.name!)
    expect(again.flatMap((s) => s.endpoints)).toEqual(
      named(full, withEndpoints.namespace, withEndpoints.name!).flatMap((s) => s.endpoints),
    )
    expect(again.flatMap((s) => s.endpoints).length).toBeGreaterThan(0)
  })

  it('skips the whole-dump checks: foreign rules are not listed', async () => {
    const src = load('handmade-node-with-cni')
    const full = await read(src)
    expect(full.foreign.length).toBeGreaterThan(0)
    const some = full.services.find((s) => s.name !== null)!
    expect((await read(src, [`${some.namespace}/${some.name}`])).foreign).toEqual([])
  })

  it('a needle nothing holds gives no service, and the node settings still', async () => {
    const src = load('upstream-overall')
    const full = await read(src)
    const focused = await read(src, ['no-such-ns/no-such-svc'])
    expect(focused.services).toEqual([])
    expect(focused.node).toEqual(full.node)
  })
})

describe('a per-service chain no dispatch rule reaches', () => {
  it('is read when its rules name the service, as the full read reads it, warnings included', async () => {
    // A mistyped chain name (found by mutating the fixture): the rule now appends to a chain the
    // dump never declares, whose hash is not the service's. The full read makes it a service port
    // of its own and warns twice; the focused read chose chains only by the hashes dispatch rules
    // jump to, missed it, and answered without a warning.
    const {path, text} = load('realsave-multipleservices-older')
    const edited = text.replace(
      '-A KUBE-SVC-GNZBNJ2PO5MGZ6GT ! -s',
      '-A KUBE-SVC-GNZBNJ00PO5MGZ6GT ! -s',
    )
    expect(edited).not.toBe(text)
    const src = {path, text: edited}
    const full = await read(src)
    const focused = await read(src, ['ns2/svc2'])
    expect(named(full, 'ns2', 'svc2').length).toBe(2)
    expect(named(focused, 'ns2', 'svc2')).toEqual(named(full, 'ns2', 'svc2'))
    const codes = (state: ProxyState) =>
      state.diagnostics.filter((d) => d.message.includes('GNZBNJ00')).map((d) => d.code)
    expect(codes(full)).toEqual(['IPT_UNDECLARED_CHAIN', 'IPT_HASH_MISMATCH'])
    expect(codes(focused)).toEqual(codes(full))
  })
})

describe('chain names and targets spelled as iptables-save never spells them', () => {
  // The parser reads these as the plain spelling (quotes removed, --jump as -j); the byte-level
  // choice of lines did not, and a focused read lost an endpoint without a word (found by
  // mutating handmade-node-with-cni: a quoted chain name).
  const {path, text} = load('handmade-node-with-cni')
  const jump =
    '-A KUBE-SVC-ZROLNW67U6B7G27Z -m statistic --mode random --probability 0.20000000019 -j KUBE-SEP-LLRWB7JUSHQAIA4E'
  it.each([
    [
      'a quote inside a chain name',
      jump,
      jump.replace('-A KUBE-SVC-ZROLNW67U6B7G27Z', '-A KUB"E-SVC-ZRO"LNW67U6B7G27Z'),
    ],
    [
      'a quoted target',
      jump,
      jump.replace('-j KUBE-SEP-LLRWB7JUSHQAIA4E', '-j "KUBE-SEP-LLRWB7JUSHQAIA4E"'),
    ],
    ['--jump for -j', jump, jump.replace(' -j ', ' --jump ')],
  ])('%s: explain reads what the full read reads', async (_, from, to) => {
    expect(text).toContain(from)
    const src = {path, text: text.replace(from, to)}
    const full = await read(src)
    expect(named(full, 'team', 'api')[0]!.endpoints.length).toBe(5)
    expect(named(await read(src, ['team/api']), 'team', 'api')).toEqual(named(full, 'team', 'api'))
  })

  it('--jump in the only dispatch rule of a service whose own chains name it nowhere', async () => {
    const dump = [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]',
      ':KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]',
      '-A KUBE-SERVICES -d 10.0.0.1/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 --jump KUBE-SVC-AAAAAAAAAAAAAAAA',
      '-A KUBE-SVC-AAAAAAAAAAAAAAAA -j KUBE-SEP-BBBBBBBBBBBBBBBB',
      '-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m tcp -j DNAT --to-destination 10.1.0.1:80',
      'COMMIT',
      '',
    ].join('\n')
    const src = {path: 'jump.rules', text: dump}
    const full = await read(src)
    expect(named(full, 'ns', 'a')[0]!.endpoints.map((e) => e.ip)).toEqual(['10.1.0.1'])
    expect(named(await read(src, ['ns/a']), 'ns', 'a')).toEqual(named(full, 'ns', 'a'))
  })
})

describe('a service that is most of the dump', () => {
  it('is read with the whole dump, not picked out line by line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kp-focus-'))
    try {
      // One service of 12,000 endpoints: its SVC chain alone is 1.6 MB of the 4.7 MB dump.
      const path = join(dir, 'dump.txt')
      await generateIptablesSave(path, {services: 1, endpointsPerService: 12_000})
      const big = readFileSync(path)
      expect(selectFocusedLines(memoryBytes(big), ['ns0/svc-0'])).toBeNull()
      const [src] = (await loadInputs([path])).sources
      const state = await readState({sources: [src!]}, {focus: {needles: ['ns0/svc-0']}})
      expect(state.diagnostics.map((d) => d.code)).not.toContain('IPT_FOCUSED_READ')
      expect(named(state, 'ns0', 'svc-0')[0]!.endpoints.length).toBe(12_000)
      // A small service of a dump is still picked out.
      await generateIptablesSave(path, {services: 20, endpointsPerService: 2})
      expect(selectFocusedLines(memoryBytes(readFileSync(path)), ['ns3/svc-3'])).not.toBeNull()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('how the chosen lines are parsed', () => {
  it("reads them the full read's way, plain lines in place, and to the same rules", () => {
    // All through readLine, explain of a service with 200,000 endpoints took 16 s (6 s now).
    const {text} = load('upstream-overall')
    const lines = selectFocusedLines(memoryBytes(Buffer.from(text, 'utf8')), ['ns1/svc1'])!
    const focused = parseIptablesText(lines.text, 't', {...lines, needles: ['ns1/svc1']})
    const rules = focused.ruleset.rules
    expect(rules.length).toBeGreaterThan(10)
    expect(focused.plainLinesRead).toBeGreaterThan(rules.length / 2)
    // The same rules, line for line, as the full read has on those lines.
    const full = new Map(parseIptablesText(text, 't').ruleset.rules.map((r) => [r.line, r]))
    const shape = (r: IptablesRule) => ({
      line: r.line,
      chain: r.chain,
      target: r.target,
      comment: r.comment,
      matches: r.matches,
      targetOptions: r.targetOptions,
      source: r.source,
      destination: r.destination,
      dport: r.dport,
    })
    for (const r of rules) expect(shape(r), `line ${r.line}`).toEqual(shape(full.get(r.line)!))
  })
})

describe('reading the bytes in pieces', () => {
  const choose = (text: string, needles: string[], pieceBytes?: number) =>
    selectFocusedLines(memoryBytes(Buffer.from(text, 'utf8')), needles, pieceBytes)
  /** Lines cut anywhere: a piece boundary inside a name, a quoted comment, a CRLF pair, and lines longer than a piece. */
  const PIECES = [16, 61, 257]

  it.each(FIXTURES)('%s: any piece size chooses the same lines as one piece', (dir) => {
    const {text} = load(dir)
    const named = [
      ...new Set([...text.matchAll(/"([\w.-]+\/[\w.-]+)[: ]/g)].map((m) => m[1]!)),
    ].slice(0, 3)
    for (const needles of [...named.map((n) => [n]), ['no-such/service']]) {
      const whole = choose(text, needles)
      for (const pieceBytes of PIECES)
        expect(
          choose(text, needles, pieceBytes),
          `${needles.join()} in ${pieceBytes}-byte pieces`,
        ).toEqual(whole)
    }
  })

  it('keeps line numbers, CRLF endings and a last line without a newline', () => {
    const {text} = load('upstream-overall')
    const crlf = text.replace(/\n/g, '\r\n').replace(/\r\n$/, '')
    for (const pieceBytes of [undefined, ...PIECES]) {
      const lines = choose(crlf, ['ns1/svc1'], pieceBytes)!
      expect(lines.endsWithNewline).toBe(false)
      expect(lines.lineCount).toBe(crlf.split('\n').length)
      const chosen = lines.text.split('\n')
      // Each chosen line is the source line its index names, ending included.
      const source = crlf.split('\n')
      chosen.forEach((line, k) =>
        expect(line, `line ${lines.lineIndex[k]! + 1}`).toBe(source[lines.lineIndex[k]!]),
      )
      expect(chosen.at(-1)).toBe('COMMIT')
    }
  })

  it('reads a file through loadInputs as it reads the same text from memory', async () => {
    const {path, text} = load('handmade-node-with-cni')
    const [fromFile] = (await loadInputs([join(ROOT, path)])).sources
    const full = await read({path, text})
    const some = full.services.find((s) => s.name !== null && s.endpoints.length > 0)!
    const needles = [`${some.namespace}/${some.name}`]
    const viaFile = await readState({sources: [fromFile!]}, {focus: {needles}})
    const viaText = await read({path: join(ROOT, path), text}, needles)
    expect(viaFile.services).toEqual(viaText.services)
    expect(viaFile.node).toEqual(full.node)
    expect(viaFile.diagnostics.map((d) => d.code)).toContain('IPT_FOCUSED_READ')
  })
})

describe('node evidence from the services not asked about', () => {
  const dump = (masq: [string, string][]) => {
    const lines = ['*nat', ':KUBE-SERVICES - [0:0]', ':KUBE-MARK-MASQ - [0:0]']
    const rules: string[] = []
    masq.forEach(([name, source], i) => {
      const hash = `HASH${i}`.padEnd(16, 'X')
      lines.push(`:KUBE-SVC-${hash} - [0:0]`, `:KUBE-SEP-${hash} - [0:0]`)
      rules.push(
        `-A KUBE-SERVICES -d 172.30.0.${i + 1}/32 -p tcp -m comment --comment "ns/${name}:p cluster IP" -m tcp --dport 80 -j KUBE-SVC-${hash}`,
        `-A KUBE-SVC-${hash} ${source} -d 172.30.0.${i + 1}/32 -p tcp -m comment --comment "ns/${name}:p cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
        `-A KUBE-SVC-${hash} -m comment --comment "ns/${name}:p -> 10.1.0.${i + 1}:80" -j KUBE-SEP-${hash}`,
        `-A KUBE-SEP-${hash} -s 10.1.0.${i + 1}/32 -j KUBE-MARK-MASQ`,
        `-A KUBE-SEP-${hash} -p tcp -m tcp -j DNAT --to-destination 10.1.0.${i + 1}:80`,
      )
    })
    return [...lines, ...rules, '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000', 'COMMIT', ''].join(
      '\n',
    )
  }

  it('reads one rule of each shape, so evidence that differs between services is all seen', async () => {
    // Three services masquerade alike; a fourth shows a second pod CIDR, a fifth the interface detector.
    const text = dump([
      ['a', '! -s 10.0.0.0/8'],
      ['b', '! -s 10.0.0.0/8'],
      ['c', '! -s 10.0.0.0/8'],
      ['d', '! -s 10.64.0.0/10'],
      ['e', '! -i cbr0'],
    ])
    const src = {path: 'evidence.rules', text}
    const full = await read(src)
    expect(full.node.podCIDRs).toEqual(['10.0.0.0/8', '10.64.0.0/10'])
    const focused = await read(src, ['ns/a'])
    expect(focused.node).toEqual(full.node)
    expect(named(focused, 'ns', 'a')).toEqual(named(full, 'ns', 'a'))
    const lines = selectFocusedLines(memoryBytes(Buffer.from(text)), ['ns/a'])!
    // b and c repeat a's masquerade rule: neither is read, nor are their chains declared.
    expect(lines.text).not.toContain('ns/b:p')
    expect(lines.text).not.toContain('KUBE-SVC-HASH1')
    expect(lines.text).toContain('10.64.0.0/10')
    expect(lines.text).toContain('! -i cbr0')
  })

  it('evidenceSignature keeps what the node settings are read from and drops what names the service', () => {
    const rule = (chain: string, comment: string, rest: string) =>
      `-A ${chain} ${rest} -d 172.30.0.9/32 -p tcp -m comment --comment "${comment}" -m tcp --dport 443 -j KUBE-MARK-MASQ`
    const a = evidenceSignature(
      rule('KUBE-SVC-AAAAAAAAAAAAAAAA', 'ns/a:https cluster IP', '! -s 10.0.0.0/8'),
    )
    expect(
      evidenceSignature(
        rule('KUBE-SVC-BBBBBBBBBBBBBBBB', 'other/b:https cluster IP', '! -s 10.0.0.0/8'),
      ),
    ).toBe(a)
    expect(
      evidenceSignature(
        rule('KUBE-SVC-BBBBBBBBBBBBBBBB', 'other/b:https cluster IP', '! -s 10.9.0.0/16'),
      ),
    ).not.toBe(a)
    expect(
      evidenceSignature(rule('KUBE-SVC-BBBBBBBBBBBBBBBB', 'other/b:https cluster IP', '! -i cbr0')),
    ).not.toBe(a)
    expect(
      evidenceSignature(
        rule('KUBE-SVL-BBBBBBBBBBBBBBBB', 'other/b:https cluster IP', '! -s 10.0.0.0/8'),
      ),
    ).not.toBe(a)
    expect(
      evidenceSignature(
        rule(
          'KUBE-SVC-BBBBBBBBBBBBBBBB',
          'masquerade traffic for other/b:https external destinations',
          '! -s 10.0.0.0/8',
        ),
      ),
    ).not.toBe(a)
  })
})

describe('readRanges', () => {
  it('reads ranges that lie close together with one read, far ones apart, and hands each its own bytes', () => {
    // 64 KiB of text; a counting reader over it.
    const text = Buffer.from(
      Array.from({length: 4096}, (_, i) => `line ${String(i).padStart(6, '0')}\n`).join(''),
    )
    const inner = memoryBytes(text).open()
    let reads = 0
    const reader = {
      ...inner,
      readInto: (into: Uint8Array, at: number, position: number, length: number) => (
        reads++,
        inner.readInto(into, at, position, length)
      ),
    }
    // Three ranges a few bytes apart, then one 40 KiB further on.
    const starts = [0, 24, 48, 48 + 40 * 1024]
    const ends = [12, 36, 60, 48 + 40 * 1024 + 12]
    const got: string[] = []
    readRanges(reader, starts, ends, (i, bytes) => {
      got[i] = bytes.toString()
    })
    expect(got).toEqual(starts.map((from, i) => text.toString('utf8', from, ends[i])))
    expect(reads).toBe(2)
  })
})
