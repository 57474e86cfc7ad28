/**
 * The catalogues are closed: every code and finding ID written in src/ is in src/catalog/, every
 * catalogue entry is emitted somewhere, and the severity an emit site writes next to a code is
 * one its entry lists. tsc checks most emit sites (diag(), the readers' reporters, finding());
 * this catches the rest (error constructors, tables) and the entries nothing emits any more.
 */
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'
import {DIAGNOSTICS, severitiesOf, type CodeEntry} from '../../src/catalog/diagnostics.js'
import {FINDINGS} from '../../src/catalog/findings.js'
import {prefixOf} from '../../src/catalog/doc.js'
import {SEVERITIES} from '../../src/catalog/severity.js'
import {FAIL_ON} from '../../src/analyze/migrate.js'
import {ROOT} from '../helpers/run-cli.js'

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p))
    else if (p.endsWith('.ts')) out.push(p)
  }
  return out
}

/** The source outside the catalogue, without its comment lines (a code named in a comment is not emitted). */
const files = sourceFiles(join(ROOT, 'src'))
  .map((p) => ({path: relative(ROOT, p), text: readFileSync(p, 'utf8')}))
  .filter((f) => !f.path.startsWith(join('src', 'catalog')))
  .map((f) => ({
    path: f.path,
    text: f.text
      .split('\n')
      .filter((l) => !/^\s*(\/\/|\/\*|\*)/.test(l))
      .join('\n'),
  }))

/** Upper-case string literals with an underscore: the shape of every code and finding ID. */
const CODE_LITERAL = /(['"`])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\1/g
/** Such literals that are not codes. */
const NOT_CODES = new Set([
  'KP_DIFF_WORKER_MIN_BYTES', // an environment variable (src/readers/read-in-worker.ts)
  'NET_ADMIN', // Linux capabilities of the collector pod (src/live/remote/collector.ts)
  'NET_RAW',
])

const literals = new Map<string, string[]>()
for (const f of files)
  for (const m of f.text.matchAll(CODE_LITERAL)) {
    const code = m[2]!
    if (NOT_CODES.has(code)) continue
    literals.set(code, [...(literals.get(code) ?? []), f.path])
  }

const catalogue: Record<string, CodeEntry> = {...DIAGNOSTICS, ...FINDINGS}

describe('the code catalogues', () => {
  it('find the codes in src', () => {
    expect(literals.size).toBeGreaterThan(200)
  })
  it('hold every code and finding ID src writes', () => {
    const missing = [...literals.keys()].filter((c) => !(c in catalogue))
    expect(missing, `not in src/catalog/: ${missing.join(', ')}`).toEqual([])
  })
  it('hold no entry that src does not emit', () => {
    const unused = Object.keys(catalogue).filter((c) => !literals.has(c))
    expect(unused, 'catalogue entries no source file writes').toEqual([])
  })
  it('build no code from a template', () => {
    const built = files.filter((f) => /`[A-Z][A-Z0-9]*_[A-Z0-9_]*\$\{/.test(f.text))
    expect(built.map((f) => f.path)).toEqual([])
  })
  it('keep diagnostic codes and finding IDs apart, each with its prefixes', () => {
    expect(Object.keys(DIAGNOSTICS).filter((c) => c in FINDINGS)).toEqual([])
    expect(new Set(Object.keys(FINDINGS).map(prefixOf))).toEqual(new Set(['RENDER', 'MIGRATE']))
    expect(
      Object.keys(DIAGNOSTICS).filter((c) => ['RENDER', 'MIGRATE'].includes(prefixOf(c))),
    ).toEqual([])
  })
  it('give every entry a one-line meaning and action, and its severities once each', () => {
    for (const [code, e] of Object.entries(catalogue)) {
      for (const text of [e.meaning, e.action]) {
        expect(text, code).not.toMatch(/\n/)
        expect(text.length, code).toBeGreaterThan(5)
      }
      const sev = severitiesOf(e)
      expect(sev.length, code).toBeGreaterThan(0)
      expect(new Set(sev).size, code).toBe(sev.length)
      if (e.exit !== undefined) expect(sev, code).toEqual(['error'])
    }
  })
  it('list the severity each emit site writes next to a code', () => {
    // diag('warning', 'CODE' / report('info', 'CODE' / note('CODE', 'error' / id: 'CODE', severity: 'info'
    const patterns = [
      /\b(?:diag|report)\(\s*'(error|warning|info)',\s*'([A-Z0-9_]+)'/g,
      /\b(?:note|finding|assumed)\(\s*'([A-Z0-9_]+)',\s*'(error|warning|info)'/g,
      /\bid: '([A-Z0-9_]+)',\s*severity: '(error|warning|info)'/g,
    ]
    const wrong: string[] = []
    let seen = 0
    for (const f of files)
      for (const [i, re] of patterns.entries())
        for (const m of f.text.matchAll(re)) {
          const [severity, code] = i === 0 ? [m[1]!, m[2]!] : [m[2]!, m[1]!]
          seen++
          const e = catalogue[code]
          if (e && !severitiesOf(e).includes(severity as never))
            wrong.push(`${f.path}: ${code} emitted as ${severity}`)
        }
    expect(seen).toBeGreaterThan(100)
    expect(wrong).toEqual([])
  })
  it('give --fail-on the catalogue severities, most severe first, then none', () => {
    expect(FAIL_ON).toEqual([...SEVERITIES, 'none'])
  })
})
