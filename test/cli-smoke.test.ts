import {describe, expect, it} from 'vitest'
import {runKp} from './helpers/run-cli.js'

describe('kp entry point', () => {
  it('prints its version', () => {
    const r = runKp(['--version'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/^kp\/\d+\.\d+\.\d+ /)
  })
  it('exits 2 on an unknown flag', () => {
    expect(runKp(['list', '--no-such-flag']).exitCode).toBe(2)
  })
  it('exits 3 with path:line on a missing file', () => {
    const r = runKp(['list', '-f', 'does/not/exist'])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('does/not/exist:1: cannot read')
  })
})
