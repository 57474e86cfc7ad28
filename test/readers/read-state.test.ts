import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {memoryBytes} from '../../src/readers/bytes.js'
import {readState} from '../../src/readers/read-state.js'
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
    expect(empty.diagnostics).toContainEqual(expect.objectContaining({severity: 'error', code: 'INPUT_EMPTY', source: {path: 'empty.txt', line: 1}}))
    const binary = await readState({sources: [{path: 'bin', text: 'ab\u0000cd'}]})
    expect(binary.diagnostics).toContainEqual(expect.objectContaining({severity: 'error', code: 'INPUT_BINARY'}))
  })

  it('tells a blank file from one whose text starts past the first 64 KiB, read from bytes', async () => {
    const codesOf = async (bytes: Buffer) => (await readState({sources: [{path: 'f', text: bytes.toString('utf8'), bytes: memoryBytes(bytes)}]})).diagnostics.map((d) => d.code)
    const blanks = ' '.repeat(70_000)
    expect(await codesOf(Buffer.from(`${blanks}\n`))).toContain('INPUT_EMPTY')
    // U+3000 is a Unicode space: three bytes, the 64 KiB head cuts it.
    expect(await codesOf(Buffer.from(`${' '.repeat(65_535)}\u3000\n`))).toContain('INPUT_EMPTY')
    expect(await codesOf(Buffer.from(`${blanks}x\n`))).not.toContain('INPUT_EMPTY')
    expect(await codesOf(Buffer.from(`${' '.repeat(65_535)}\u00e9\n`))).not.toContain('INPUT_EMPTY')
  })

  it('says when it cannot tell the format', async () => {
    const s = await readState({sources: [{path: 'notes.txt', text: 'hello operator\nthis is not a dump\n'}]})
    expect(s.diagnostics).toContainEqual(expect.objectContaining({severity: 'error', code: 'INPUT_UNKNOWN_FORMAT', source: {path: 'notes.txt', line: 1}}))
  })
})
