/**
 * The layer rules of docs/architecture.md and docs/architecture.md, checked on the source text:
 * the model imports nothing, only src/live runs programs, only the kube and kube-proxy-config readers (and -o yaml's writer) know yaml,
 * only the CLI layer knows oclif / chalk, and nothing in src writes to the console.
 */
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT} from './helpers/run-cli.js'

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p))
    else if (p.endsWith('.ts')) out.push(p)
  }
  return out
}

const files = sourceFiles(join(ROOT, 'src')).map((p) => ({
  path: relative(ROOT, p),
  text: readFileSync(p, 'utf8'),
}))
const importRe =
  /(?:^|\n)\s*(?:import|export)[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

function importsOf(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(importRe)) out.push((m[1] ?? m[2])!)
  return out
}

function offenders(allowed: (path: string) => boolean, pkg: RegExp): string[] {
  return files
    .filter((f) => !allowed(f.path) && importsOf(f.text).some((i) => pkg.test(i)))
    .map((f) => f.path)
}

describe('layer rules', () => {
  it('finds the source files', () => {
    expect(files.length).toBeGreaterThan(10)
  })
  it('the model imports nothing', () => {
    const bad = files
      .filter((f) => f.path.startsWith('src/model/') && importsOf(f.text).length > 0)
      .map((f) => f.path)
    expect(bad).toEqual([])
  })
  it('only src/live imports child_process', () => {
    expect(
      offenders((p) => p.startsWith('src/live/'), /^(node:child_process|child_process)$/),
    ).toEqual([])
  })
  it('only the kube and kube-proxy-config readers and the -o yaml writer import yaml', () => {
    expect(
      offenders(
        (p) =>
          p.startsWith('src/readers/kube/') ||
          p.startsWith('src/readers/kube-proxy-config/') ||
          p === 'src/cli/output-format.ts',
        /^yaml$/,
      ),
    ).toEqual([])
  })
  it('only the CLI layer imports oclif and chalk', () => {
    expect(
      offenders(
        (p) => p.startsWith('src/cli/') || p.startsWith('src/commands/'),
        /^(@oclif\/|chalk$)/,
      ),
    ).toEqual([])
  })
  it('readers, renderers and analyses do not import commands or the CLI layer', () => {
    const core = files.filter((f) => /^src\/(readers|render|analyze|core|model)\//.test(f.path))
    const bad = core
      .filter((f) => importsOf(f.text).some((i) => /\/(commands|cli)\//.test(i)))
      .map((f) => f.path)
    expect(bad).toEqual([])
  })
  it('renderers do not import readers (what both need of kube-proxy is in src/kube-proxy)', () => {
    const bad = files
      .filter(
        (f) =>
          f.path.startsWith('src/render/') &&
          importsOf(f.text).some((i) => /(^|\/)readers\//.test(i)),
      )
      .map((f) => f.path)
    expect(bad).toEqual([])
  })
  it('src/kube-proxy imports only the model, the address module and node built-ins', () => {
    const bad = files
      .filter(
        (f) =>
          f.path.startsWith('src/kube-proxy/') &&
          importsOf(f.text).some(
            (i) => !/^(node:|\.\/|\.\.\/model\/|\.\.\/core\/address\.js$)/.test(i),
          ),
      )
      .map((f) => f.path)
    expect(bad).toEqual([])
  })
  it("kube-proxy's chain and set names are spelled only in src/kube-proxy (comments and messages aside)", () => {
    // A string that is a KUBE-* name or prefix, or starts a name built from one: written twice,
    // the spellings drift.
    const literal = /(['"`])KUBE-[A-Z0-9-]*(\1|\$\{)/
    const bad = files
      .filter((f) => !f.path.startsWith('src/kube-proxy/'))
      .flatMap((f) =>
        f.text
          .split('\n')
          .map((line, i) => ({line, at: `${f.path}:${i + 1}`}))
          .filter(({line}) => !/^\s*(\/\/|\*|\/\*)/.test(line) && literal.test(line))
          .map(({at}) => at),
      )
    expect(bad).toEqual([])
  })
  it('nothing in src writes with console.*', () => {
    expect(
      files.filter((f) => /\bconsole\.(log|error|warn|info)\(/.test(f.text)).map((f) => f.path),
    ).toEqual([])
  })
})
