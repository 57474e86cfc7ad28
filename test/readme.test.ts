/**
 * The README's exit-code table and format list are the EXIT table (src/errors.ts) and the
 * FORMATS registry (src/readers/registry.ts), written out. When either changes, this fails and
 * prints the block to paste between the README's markers.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {EXIT} from '../src/errors.js'
import {FORMATS} from '../src/readers/registry.js'
import {ROOT} from './helpers/run-cli.js'

const readme = readFileSync(`${ROOT}README.md`, 'utf8')

/** The lines between `<!-- NAME:start ... -->` and `<!-- NAME:end -->`. */
function block(name: string): string {
  const start = readme.indexOf(`<!-- ${name}:start`)
  const end = readme.indexOf(`<!-- ${name}:end -->`)
  expect(start, `README has no <!-- ${name}:start --> marker`).toBeGreaterThanOrEqual(0)
  expect(end, `README has no <!-- ${name}:end --> marker`).toBeGreaterThan(start)
  return readme.slice(readme.indexOf('\n', start) + 1, end).trimEnd()
}

describe('README', () => {
  it('has the exit-code table of src/errors.ts', () => {
    const expected = [
      '| code | meaning |',
      '|---|---|',
      ...Object.values(EXIT).map((e) => `| ${e.code} | ${e.meaning} |`),
    ].join('\n')
    expect(block('exit-codes')).toBe(expected)
  })
  it('lists the formats of src/readers/registry.ts', () => {
    expect(block('formats')).toBe(FORMATS.map((f) => `- \`${f.id}\`: ${f.description}`).join('\n'))
  })
  it('runs the example that package.json ships', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
      scripts: Record<string, string>
    }
    const example = pkg.scripts.example!.replace(/^npm run build && \.\/bin\/run\.js /, 'kp ')
    expect(readme).toContain(`\`${example}\``)
    expect(readme).toContain('npm ci && npm run example')
    expect(readme).toContain('npm ci && npm test')
  })
  it('links the model documentation, which documents both JSON documents', () => {
    expect(readme).toContain('(docs/model.md)')
    const model = readFileSync(`${ROOT}docs/model.md`, 'utf8')
    for (const heading of ['## ProxyState', '## ExplainResult']) expect(model).toContain(heading)
  })
})

describe('docs/model.md', () => {
  const model = readFileSync(`${ROOT}docs/model.md`, 'utf8')
  /** Every member name anywhere in a JSON value. */
  function keys(value: unknown, out = new Set<string>()): Set<string> {
    if (Array.isArray(value)) for (const v of value) keys(v, out)
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        out.add(k)
        keys(v, out)
      }
    }
    return out
  }
  it('documents every field of a ProxyState and of an ExplainResult', async () => {
    const {explainService} = await import('../src/analyze/explain.js')
    const {parseServiceQuery} = await import('../src/analyze/explain-query.js')
    const state = JSON.parse(readFileSync(`${ROOT}fixtures/kp-json/overall/state.json`, 'utf8'))
    const ask = (text: string) => {
      const query = parseServiceQuery(text)
      if ('invalid' in query) throw new Error(query.invalid)
      return explainService(state, query)
    }
    const [byName, byAddress] = [ask('ns2/svc2'), ask('5.6.7.8:80')]
    const all = new Set([...keys(state), ...keys(byName), ...keys(byAddress)])
    // documented as `key` or as a path ending in it: `frontends[].key`, `masquerade.key`
    const documented = (k: string) => new RegExp(`\`(?:[\\w\\[\\]]+\\.)*${k}\``).test(model)
    expect([...all].filter((k) => !documented(k))).toEqual([])
    expect(documented('noSuchField')).toBe(false)
  })
})
