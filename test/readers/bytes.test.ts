/**
 * Sources read as bytes (src/readers/bytes.ts): decoded in pieces, a file must give exactly the
 * text that decoding it whole gives, and the iptables reader must read the pieces as it reads
 * the whole text.
 */
import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {memoryBytes, textPieces} from '../../src/readers/bytes.js'
import {parseIptablesText} from '../../src/readers/iptables/parse.js'
import {loadInputs} from '../../src/readers/load.js'
import {readState} from '../../src/readers/read-state.js'
import {ROOT} from '../helpers/run-cli.js'

const pieces = (text: string, pieceBytes: number): string[] => [
  ...textPieces(memoryBytes(Buffer.from(text, 'utf8')), pieceBytes),
]

describe('textPieces', () => {
  it.each([
    ['ASCII lines', 'a\nbb\nccc\n'],
    ['no final newline', 'a\nbb\nccc'],
    ['empty', ''],
    ['CRLF', 'one\r\ntwo\r\n'],
    ['UTF-8 around the cuts', '-A X -m comment --comment "café ☕ 𝄞"\n'.repeat(7) + 'é'],
    ['a line longer than a piece', `${'x'.repeat(100)}\nshort\n${'y'.repeat(40)}`],
  ])('%s: the pieces join to the text, and each but the last ends a line', (_name, text) => {
    for (const size of [1, 2, 7, 16, 1000]) {
      const got = pieces(text, size)
      expect(got.join(''), `pieces of ${size}`).toBe(text)
      for (const piece of got.slice(0, -1))
        expect(piece.endsWith('\n'), `pieces of ${size}`).toBe(true)
    }
  })
})

const DIRS = readdirSync(join(ROOT, 'fixtures/iptables'), {withFileTypes: true})
  .filter((d) => d.isDirectory())
  .map((d) => d.name)

describe('the iptables reader over pieces', () => {
  it.each(DIRS)('%s: pieces of any size read as the whole text', (dir) => {
    const text = readFileSync(join(ROOT, 'fixtures/iptables', dir, 'input.rules'), 'utf8')
    const whole = parseIptablesText(text, 'x')
    for (const size of [16, 300]) {
      const inPieces = parseIptablesText(pieces(text, size), 'x')
      expect(inPieces.diagnostics).toEqual(whole.diagnostics)
      const rules = (r: typeof whole) =>
        r.ruleset.rules.map((rule) => [
          rule.line,
          rule.table,
          rule.chain,
          rule.text,
          rule.target,
          rule.matches,
          rule.targetOptions,
        ])
      expect(rules(inPieces)).toEqual(rules(whole))
    }
  })

  it.each(DIRS)('%s: a file read by loadInputs gives the state its text gives', async (dir) => {
    const path = join(ROOT, 'fixtures/iptables', dir, 'input.rules')
    const fromFile = await readState({sources: (await loadInputs([path])).sources})
    const fromText = await readState({sources: [{path, text: readFileSync(path, 'utf8')}]})
    expect(fromFile).toEqual(fromText)
  })
})
