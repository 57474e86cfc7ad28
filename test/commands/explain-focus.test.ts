/**
 * `kp explain NAME` reads an iptables dump focused on that name (src/readers/iptables/focus.ts).
 * Its answer must be the one a full read gives: the expectation is explainService over the
 * full in-process read of the same file, not a stored copy.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {explainService} from '../../src/analyze/explain.js'
import {parseServiceQuery, type ServiceQuery} from '../../src/analyze/explain-query.js'
import {readState} from '../../src/readers/read-state.js'
import {ROOT, runKp} from '../helpers/run-cli.js'

async function fullReadAnswer(path: string, service: string): Promise<unknown> {
  const state = await readState({sources: [{path, text: readFileSync(join(ROOT, path), 'utf8')}]})
  return JSON.parse(JSON.stringify(explainService(state, parseServiceQuery(service) as ServiceQuery)))
}

describe('kp explain NAME reads only that service, and answers as a full read does', () => {
  it.each([
    ['fixtures/iptables/upstream-overall/input.rules', 'ns5/svc5'],
    ['fixtures/iptables/handmade-node-with-cni/input.rules', 'team/api'],
  ])('%s %s', async (path, service) => {
    const r = runKp(['explain', service, '-f', path, '--json', '--verbose'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(await fullReadAnswer(path, service))
    expect(r.stderr).toContain('focused read')
  })

  it('an unknown name still gets the closest names of the whole dump', () => {
    const r = runKp(['explain', 'ns5/svc55', '-f', 'fixtures/iptables/upstream-overall/input.rules'])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('closest: ')
    expect(r.stderr).toMatch(/ns5\/svc5\b/)
  })

  it('says each warning once, though an unknown name makes it read the dump twice', () => {
    // The dump without its last COMMIT: the reader warns that it was cut off (IPT_TRUNCATED).
    const text = readFileSync(join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'), 'utf8').replace(/COMMIT\n?$/, '')
    const r = runKp(['explain', 'ns9/nothing', '-f', '-'], {input: text})
    expect(r.exitCode).toBe(3)
    const warnings = r.stderr.split('\n').filter((l) => l.includes('IPT_TRUNCATED'))
    expect(warnings).toHaveLength(1)
    // The second, full read gets stdin's text again (it used to find stdin empty).
    expect(r.stderr).not.toContain('empty input')
    expect(r.stderr).toContain('no service port matches "ns9/nothing"')
  })
})
