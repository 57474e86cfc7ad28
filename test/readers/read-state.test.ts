import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {memoryBytes} from '../../src/readers/bytes.js'
import type {BundleFacts} from '../../src/readers/bundle.js'
import {readState} from '../../src/readers/read-state.js'
import {sniffFormat} from '../../src/readers/registry.js'
import type {FormatId} from '../../src/readers/types.js'
import {ROOT} from '../helpers/run-cli.js'

const fixture = (p: string) => ({path: p, text: readFileSync(`${ROOT}${p}`, 'utf8')})

describe('readState', () => {
  it('reads iptables mode seen through nft list ruleset, also when --mode iptables is forced', async () => {
    const src = fixture('fixtures/nft/iptables-nft-multipleservices-older/input.nft')
    const detected = await readState({sources: [src]})
    const forced = await readState({sources: [src]}, {mode: 'iptables'})
    expect(detected.mode).toBe('iptables')
    expect(detected.services.length).toBeGreaterThan(0)
    // Before the fix, --mode iptables sent nft text to the iptables-save builder, which found nothing.
    expect(forced.services).toEqual(detected.services)
    expect(forced.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
  })

  it('reports empty and binary input as positioned errors instead of throwing', async () => {
    const empty = await readState({sources: [{path: 'empty.txt', text: '  \n\n'}]})
    expect(empty.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'INPUT_EMPTY',
        source: {path: 'empty.txt', line: 1},
      }),
    )
    const binary = await readState({sources: [{path: 'bin', text: 'ab\u0000cd'}]})
    expect(binary.diagnostics).toContainEqual(
      expect.objectContaining({severity: 'error', code: 'INPUT_BINARY'}),
    )
  })

  it('tells a blank file from one whose text starts past the first 64 KiB, read from bytes', async () => {
    const codesOf = async (bytes: Buffer) =>
      (
        await readState({
          sources: [{path: 'f', text: bytes.toString('utf8'), bytes: memoryBytes(bytes)}],
        })
      ).diagnostics.map((d) => d.code)
    const blanks = ' '.repeat(70_000)
    expect(await codesOf(Buffer.from(`${blanks}\n`))).toContain('INPUT_EMPTY')
    // U+3000 is a Unicode space: three bytes, the 64 KiB head cuts it.
    expect(await codesOf(Buffer.from(`${' '.repeat(65_535)}\u3000\n`))).toContain('INPUT_EMPTY')
    expect(await codesOf(Buffer.from(`${blanks}x\n`))).not.toContain('INPUT_EMPTY')
    expect(await codesOf(Buffer.from(`${' '.repeat(65_535)}\u00e9\n`))).not.toContain('INPUT_EMPTY')
  })

  it('says when it cannot tell the format', async () => {
    const s = await readState({
      sources: [{path: 'notes.txt', text: 'hello operator\nthis is not a dump\n'}],
    })
    expect(s.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'INPUT_UNKNOWN_FORMAT',
        source: {path: 'notes.txt', line: 1},
      }),
    )
  })

  it('a format it does not know (from a hand-written bundle manifest) is an error, not a throw', async () => {
    // Was `Error: no format bogus` out of readState (formatEntry), exit 70.
    const src = {...fixture('fixtures/ipvs/generated/ipvsadm-Sn.txt'), format: 'bogus' as FormatId}
    const s = await readState({sources: [src]})
    expect(s.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'INPUT_UNKNOWN_FORMAT',
        source: {path: src.path, line: 1},
      }),
    ])
  })

  it(
    'sniffs 64 KiB of blank lines in linear time (the kube pattern took seconds), and still finds YAML and JSON keys',
    {timeout: 5000},
    async () => {
      // Was 10+ s: /^\s*.../m tried every line start against all the blank lines after it.
      const blank = await readState({
        sources: [{path: 'blank.txt', text: `${'\n'.repeat(65_000)}x`}],
      })
      expect(blank.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
        ['INPUT_UNKNOWN_FORMAT', 1],
      ])
      for (const head of [
        '\n\n  apiVersion: v1\n',
        '{"apiVersion": "v1"}',
        '{\n  "kind": "List"',
        '\r\nkind: Service\r\n',
        '\u00a0items:\n',
      ])
        expect(sniffFormat(head), JSON.stringify(head)).toBe('kube')
    },
  )

  it('two saved states: the error names the second file, not a dump that state was read from', async () => {
    // Was `fixtures/iptables/upstream-overall/input.rules:1: several saved ProxyStates given` (the state's own source).
    const a = fixture('fixtures/diff/upstream-overall/iptables.state.json')
    const b = fixture('fixtures/kp-json/overall/state.json')
    const s = await readState({sources: [a, b]})
    expect(s.diagnostics.filter((d) => d.code === 'INPUT_SEVERAL_STATES')).toEqual([
      expect.objectContaining({severity: 'error', source: {path: b.path, line: 1}}),
    ])
  })

  it("takes from bundle facts only values of the model's types, never undefined", async () => {
    // Were node.name {"a": 1} and, for facts without the members, undefined (keys missing from --json).
    const src = fixture('fixtures/ipvs/generated/ipvsadm-Sn.txt')
    const odd = {
      node: {a: 1},
      kernel: 5,
      nftVersion: ['1'],
      iptablesBackends: 'nf_tables',
      sysctls: {},
    } as unknown as BundleFacts
    for (const facts of [odd, {} as BundleFacts, 5 as unknown as BundleFacts]) {
      const s = await readState({sources: [src], facts})
      expect([s.node.name, s.node.kernel, s.node.nftVersion, s.node.iptablesBackends]).toEqual([
        null,
        null,
        null,
        null,
      ])
    }
    const good = await readState({
      sources: [src],
      facts: {
        node: 'node-a',
        kernel: '6.1.0',
        nftVersion: null,
        iptablesBackends: ['nf_tables'],
        sysctls: {},
      },
    })
    expect([
      good.node.name,
      good.node.kernel,
      good.node.nftVersion,
      good.node.iptablesBackends,
    ]).toEqual(['node-a', '6.1.0', null, ['nf_tables']])
  })
})
