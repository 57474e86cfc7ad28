/**
 * docs/codes.md is the catalogues (src/catalog/) written out. When a code or finding ID changes,
 * this fails until `npm run docs:codes` writes the file again.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {codesDocument} from '../../src/catalog/doc.js'
import {DIAGNOSTICS} from '../../src/catalog/diagnostics.js'
import {FINDINGS} from '../../src/catalog/findings.js'
import {ROOT} from '../helpers/run-cli.js'

describe('docs/codes.md', () => {
  it('is what `npm run docs:codes` writes', () => {
    const written = readFileSync(`${ROOT}docs/codes.md`, 'utf8')
    expect(written, 'docs/codes.md is stale: run `npm run docs:codes`').toBe(codesDocument())
  })
  it('has a row for every code and finding ID', () => {
    const doc = codesDocument()
    for (const code of [...Object.keys(DIAGNOSTICS), ...Object.keys(FINDINGS)])
      expect(doc).toContain(`| \`${code}\` |`)
  })
})
