/**
 * The real entry point as a process (bin/run.js under `npm test`, KP_TEST_BIN=built): the few
 * runs that check what only a process shows (the bin's own --version path, oclif's help, an exit
 * code, stdin), spawned without blocking the worker. Every other command test runs kp in the
 * test process (test/helpers/run-in-process.ts).
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {runKpAsync as runKp} from './helpers/run-cli.js'

const RULES = 'fixtures/iptables/upstream-overall/input.rules'

describe('kp entry point', () => {
  it('prints its version', async () => {
    const r = await runKp(['--version'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/^kp\/\d+\.\d+\.\d+ /)
  })
  it('prints the help, naming every command', async () => {
    const r = await runKp(['--help'])
    expect(r.exitCode).toBe(0)
    for (const command of ['collect', 'diff', 'explain', 'list', 'migrate'])
      expect(r.stdout).toMatch(new RegExp(`^\\s+${command}\\s`, 'm'))
  })
  it('exits 2 on an unknown flag', async () => {
    expect((await runKp(['list', '--no-such-flag'])).exitCode).toBe(2)
  })
  it('exits 3 with path:line on a missing file', async () => {
    const r = await runKp(['list', '-f', 'does/not/exist'])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('does/not/exist:1: cannot read')
  })
  it('lists a dump', async () => {
    const r = await runKp(['list', '-f', RULES])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/^ns5\/svc5:p80\/tcp\s/m)
  })
  it('explains a service', async () => {
    const r = await runKp(['explain', 'ns5/svc5', '--json', '-f', RULES])
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({kind: 'ExplainResult', mode: 'iptables'})
  })
  it('reads a dump on stdin', async () => {
    const r = await runKp(['list', '--json', '-f', '-'], {input: readFileSync(RULES, 'utf8')})
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout).services.length).toBeGreaterThan(0)
  })
})
