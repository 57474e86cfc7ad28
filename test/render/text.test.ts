/**
 * The pieces a renderer streams (src/render/text.ts, src/cli/text-file.ts) must add up to the
 * same bytes as the one string it used to build and tidy with a regex, however the text is cut.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {writeTextFile} from '../../src/cli/text-file.js'
import {addressFamily, parseAddress} from '../../src/core/address.js'
import {TidyTextSink} from '../../src/render/text.js'

const tidyWhole = (text: string): string => `${text.replace(/\n{3,}/g, '\n\n').trimEnd()}\n`

function tidyInPieces(pieces: string[]): string {
  const out: string[] = []
  const sink = new TidyTextSink((piece) => out.push(piece))
  for (const piece of pieces) sink.write(piece)
  sink.end()
  return out.join('')
}

/** A deterministic pseudo-random sequence, so a failure can be reproduced. */
function random(seed: number): () => number {
  let x = seed
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648
    return x / 2147483648
  }
}

describe('TidyTextSink', () => {
  it('gives the text of the whole-string tidy for every way of cutting it', () => {
    const next = random(7)
    const alphabet = ['a', 'b', '\n', '\n', '\n', ' ', '\t', '\u00a0', '\u2028', '# x', 'é']
    for (let round = 0; round < 2000; round++) {
      let text = ''
      const length = Math.floor(next() * 40)
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(next() * alphabet.length)]
      const pieces: string[] = []
      for (let at = 0; at < text.length;) {
        const size = Math.floor(next() * 6)
        pieces.push(text.slice(at, at + size))
        at += size
      }
      expect(tidyInPieces(pieces), JSON.stringify(pieces)).toBe(tidyWhole(text))
    }
  })

  it('writes one newline for an empty or blank text', () => {
    expect(tidyInPieces([])).toBe('\n')
    expect(tidyInPieces(['\n\n', ' \n'])).toBe('\n')
  })
})

describe('writeTextFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-text-file-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('writes the pieces in order, small and larger than its buffer, as UTF-8', () => {
    const path = join(dir, 'out.txt')
    const big = 'x'.repeat(600_000) + '\n'
    const pieces = ['add rule ip kube-proxy é\n', big, 'ünïcode 🙂\n', big, 'end\n']
    const returned = writeTextFile(path, (sink) => {
      for (const piece of pieces) sink(piece)
      return 'done'
    })
    expect(returned).toBe('done')
    expect(readFileSync(path, 'utf8')).toBe(pieces.join(''))
  })
})

describe('addressFamily', () => {
  it('agrees with parseAddress', () => {
    const inputs = [
      '10.0.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '256.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      '01.002.3.4',
      '1.2.3.0004',
      '1..2.3',
      '.1.2.3',
      '1.2.3.',
      '',
      'a.b.c.d',
      '1.2.3.4 ',
      ' 1.2.3.4',
      '١.2.3.4',
      '10.0.0.1/8',
      '::',
      '::1',
      'fd00::1',
      '2001:db8::a:b:c:d:e',
      '2001:db8:0:0:0:0:0:1',
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      'fd00::g',
      '::ffff:1.2.3.4',
      '::ffff:1.2.3.256',
      '1:2:3:4:5:6:1.2.3.4',
      '1:2:3:4:5:6:7:1.2.3.4',
      ':',
      ':::',
      '12345::',
      'fe80::1%eth0',
    ]
    for (const text of inputs)
      expect(addressFamily(text), text).toBe(parseAddress(text)?.family ?? null)
  })
})
