/**
 * Usage errors exit 2 in kp's error shape (README, "Exit codes"): one line on stderr, and under
 * --json one `{"error": …}` document (oclif alone exits 1 there with ~45 KB of its parser state).
 * Also the YAML alias bomb: bad input, exit 3, not an internal error.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {oneLine} from '../../src/cli/usage-error.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const RULES = 'fixtures/iptables/upstream-overall/input.rules'
const tmp = mkdtempSync(join(tmpdir(), 'kp-usage-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/** stderr as lines, and the error line itself: `kp: ...`, no stack frame anywhere. */
function lines(stderr: string): string[] {
  expect(stderr).not.toMatch(/^\s+at /m)
  return stderr.trimEnd().split('\n')
}

describe('usage errors (exit 2)', () => {
  it.each([
    [['list', '--nosuch'], 'kp: Nonexistent flag: --nosuch'],
    [['list', '-v'], 'kp: Nonexistent flag: -v'],
    [['list', '--format', 'bogus'], 'kp: Expected --format=bogus to be one of: '],
    [['list', '--timeout', 'abc'], 'kp: Parsing --timeout: Expected an integer'],
    [['explain'], 'kp: Missing 1 required arg: service'],
    [['explain', 'a', 'b'], 'kp: Unexpected argument: b'],
    [['migrate'], 'kp: Missing required flag to'],
    [['nosuch'], 'kp: unknown command "nosuch"'],
  ])('kp %j: one line and hints on stderr, nothing on stdout', async (args, first) => {
    const r = await runKpInProcess([...args, '-f', RULES])
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    const [line, ...rest] = lines(r.stderr)
    expect(line!.startsWith(first)).toBe(true)
    expect(line).not.toContain('\n')
    expect(rest.every((l) => l.startsWith('  hint: '))).toBe(true)
  })

  it.each([
    [['list', '--json', '--nosuch']],
    [['list', '--json', '--format', 'bogus']],
    [['explain', '--json']],
    [['lsit', '--json']],
  ])('kp %j: exit 2 and one {"error"} document on stdout', async (args) => {
    const r = await runKpInProcess([...args, '-f', RULES])
    expect(r.exitCode).toBe(2)
    const doc = JSON.parse(r.stdout)
    expect(Object.keys(doc)).toEqual(['error'])
    expect(doc.error).toMatchObject({code: 'USAGE_INVALID', exitCode: 2})
    expect(r.stdout.length).toBeLessThan(1000)
  })

  it('-v after a command says what -v is; an unknown command names the closest', async () => {
    const v = await runKpInProcess(['list', '-v'])
    expect(v.stderr).toContain('-v is the version flag and works only alone')
    const typo = await runKpInProcess(['explian', 'x'])
    expect(typo.stderr).toContain('hint: did you mean: explain?')
  })

  it('oclif messages of several lines become one', () => {
    expect(
      oneLine('Missing 1 required arg:\nservice  ns/name[:port]\nSee more help with --help'),
    ).toBe('Missing 1 required arg: service')
    expect(oneLine('Parsing --timeout \n\tExpected an integer but received: x')).toBe(
      'Parsing --timeout: Expected an integer but received: x',
    )
    expect(
      oneLine(
        'The following error occurred:\n  Missing required flag to\nSee more help with --help',
      ),
    ).toBe('Missing required flag to')
  })
})

describe('a YAML alias bomb', () => {
  it('is input error 3 with a positioned message, not an internal error', async () => {
    // 9 lines; expanded, 10^5 strings: the yaml library's maxAliasCount stops it.
    const levels = ['a', 'b', 'c', 'd', 'e']
    const bomb = [
      'apiVersion: v1',
      'kind: Service',
      'metadata: {name: bomb, namespace: default}',
      `spec: {x: &a [x, x, x, x, x, x, x, x, x, x]}`,
      ...levels
        .slice(1)
        .map((l, i) => `${l}: &${l} [${Array(10).fill(`*${levels[i]}`).join(', ')}]`),
    ]
    expect(bomb).toHaveLength(8)
    bomb.push(`f: [${Array(10).fill('*e').join(', ')}]`)
    const file = join(tmp, 'bomb.yaml')
    writeFileSync(file, bomb.join('\n'))
    const r = await runKpInProcess(['list', '-f', file])
    expect(r.exitCode).toBe(3)
    expect(lines(r.stderr)[0]).toMatch(new RegExp(`^kp: ${file}:\\d+: .*alias`))
  })
})
