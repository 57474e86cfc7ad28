/**
 * `kp explain NAME` reads an iptables dump focused on that name (src/readers/iptables/focus.ts).
 * Its answer must be the one a full read gives: the expectation is explainService over the
 * full in-process read of the same file, not a stored copy.
 */
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {explainService} from '../../src/analyze/explain.js'
import {parseServiceQuery, type ServiceQuery} from '../../src/analyze/explain-query.js'
import {readState} from '../../src/readers/read-state.js'
import {kpCommand, ROOT} from '../helpers/run-cli.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

async function fullReadAnswer(path: string, service: string): Promise<unknown> {
  const state = await readState({sources: [{path, text: readFileSync(join(ROOT, path), 'utf8')}]})
  return JSON.parse(
    JSON.stringify(explainService(state, parseServiceQuery(service) as ServiceQuery)),
  )
}

describe('kp explain NAME reads only that service, and answers as a full read does', () => {
  it.each([
    ['fixtures/iptables/upstream-overall/input.rules', 'ns5/svc5'],
    ['fixtures/iptables/handmade-node-with-cni/input.rules', 'team/api'],
  ])('%s %s', async (path, service) => {
    const r = await runKpInProcess(['explain', service, '-f', path, '--json', '--verbose'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(await fullReadAnswer(path, service))
    expect(r.stderr).toContain('focused read')
  })

  it('an unknown name still gets the closest names of the whole dump', async () => {
    const r = await runKpInProcess([
      'explain',
      'ns5/svc55',
      '-f',
      'fixtures/iptables/upstream-overall/input.rules',
    ])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('closest: ')
    expect(r.stderr).toMatch(/ns5\/svc5\b/)
  })

  it('says each warning once, though an unknown name makes it read the dump twice', async () => {
    // The dump without its last COMMIT: the reader warns that it was cut off (IPT_TRUNCATED).
    const text = readFileSync(
      join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'),
      'utf8',
    ).replace(/COMMIT\n?$/, '')
    const r = await runKpInProcess(['explain', 'ns9/nothing', '-f', '-'], {input: text})
    expect(r.exitCode).toBe(3)
    const warnings = r.stderr.split('\n').filter((l) => l.includes('IPT_TRUNCATED'))
    expect(warnings).toHaveLength(1)
    // The second, full read gets stdin's text again (it used to find stdin empty).
    expect(r.stderr).not.toContain('empty input')
    expect(r.stderr).toContain('no service port matches "ns9/nothing"')
  })

  it('reads a pipe (`-f <(iptables-save)`), which cannot be read at an offset, whole', async () => {
    const path = 'fixtures/iptables/upstream-overall/input.rules'
    const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`
    const command = [...kpCommand(), 'explain', 'ns5/svc5', '--json', '--verbose']
      .map(quote)
      .join(' ')
    const r = spawnSync('bash', ['-c', `${command} -f <(cat ${quote(path)})`], {
      cwd: ROOT,
      encoding: 'utf8',
      env: {...process.env, NO_COLOR: '1'},
    })
    expect(r.status, r.stderr).toBe(0)
    const answer = JSON.parse(r.stdout) as {matches: Array<{rules: Array<{path: string}>}>}
    for (const m of answer.matches) for (const rule of m.rules) rule.path = path
    expect(answer).toEqual(await fullReadAnswer(path, 'ns5/svc5'))
    expect(r.stderr).toContain('focused read')
  })

  it('a file that cannot be read is an input error, one line', async () => {
    const r = await runKpInProcess([
      'explain',
      'ns5/svc5',
      '-f',
      'fixtures/iptables/no-such-dump.rules',
    ])
    expect(r.exitCode).toBe(3)
    expect(r.stderr.trim()).toBe(
      'kp: fixtures/iptables/no-such-dump.rules:1: cannot read: no such file or directory',
    )
  })
})
