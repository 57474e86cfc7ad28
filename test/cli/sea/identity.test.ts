import {afterEach, describe, expect, it} from 'vitest'
import {
  commandName,
  inUserWords,
  isVersionOnly,
  setCommandName,
  versionLine,
} from '../../../src/cli/sea/identity.js'

describe('versionLine', () => {
  const platform = `${process.platform}-${process.arch} node-${process.version}`
  it('names the npm build', () => {
    expect(versionLine({version: '1.2.3', build: 'npm'})).toBe(`kp/1.2.3 ${platform} (npm)`)
  })
  it('names the single executable and its commit', () => {
    expect(versionLine({version: '1.2.3', build: 'sea', commit: 'abc1234-dirty'})).toBe(
      `kp/1.2.3 ${platform} (sea, commit abc1234-dirty)`,
    )
  })
})

describe('commandName', () => {
  it('is kp under its own name', () => {
    expect(commandName('/usr/local/bin/kp')).toBe('kp')
    expect(commandName('./kp-linux-x64')).toBe('kp')
  })
  it('is `kubectl kp` when kubectl runs it as the plugin kubectl-kp', () => {
    expect(commandName('/home/me/bin/kubectl-kp')).toBe('kubectl kp')
  })
  it("reads a plugin's name as kubectl does: `-` a space, `_` a dash", () => {
    expect(commandName('/bin/kubectl-proxy-kp')).toBe('kubectl proxy kp')
    expect(commandName('/bin/kubectl-kube_proxy')).toBe('kubectl kube-proxy')
  })
})

describe('isVersionOnly', () => {
  it('is --version or -v alone', () => {
    expect(isVersionOnly(['--version'])).toBe(true)
    expect(isVersionOnly(['-v'])).toBe(true)
    expect(isVersionOnly(['list', '-v'])).toBe(false)
    expect(isVersionOnly(['--version', '--json'])).toBe(false)
    expect(isVersionOnly([])).toBe(false)
  })
})

describe('inUserWords', () => {
  afterEach(() => setCommandName('kp'))
  it('leaves hints as they are under the name kp', () => {
    expect(inUserWords('`kp list --help` lists the flags')).toBe('`kp list --help` lists the flags')
  })
  it('names the command to paste as `kubectl kp` when run as the plugin', () => {
    setCommandName('kubectl kp')
    expect(inUserWords('`kp list --help` lists the flags; `kp -v`')).toBe(
      '`kubectl kp list --help` lists the flags; `kubectl kp -v`',
    )
    // Only a command in backquotes: prose and chain names stay.
    expect(inUserWords('kp reads KUBE-SVC-kp ')).toBe('kp reads KUBE-SVC-kp ')
  })
})
