/**
 * The command wrapper's failure shapes, each produced by running a real program that fails
 * that way (no mocks): a missing program, a non-zero exit, a timeout, and no root.
 */
import {chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {EnvironmentError} from '../../src/errors.js'
import {commandLineOf, environmentError, runChecked, runCommand} from '../../src/live/exec.js'

const isRoot = process.getuid?.() === 0
const setprivWorks = isRoot && (await runCommand(['setpriv', '--version'])).failure === null
if (!setprivWorks)
  console.log('exec.test: skipping the no-root case: needs root and setpriv(1) to drop privileges')

/** 'running' while the process lives; a killed one is gone or a zombie nobody reaped yet. */
function runningState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
      ? 'zombie'
      : 'running'
  } catch {
    return 'gone'
  }
}

describe('runCommand', () => {
  it('returns stdout byte for byte (final newline kept) and exit 0 without a failure', async () => {
    const r = await runCommand(['printf', 'a b\\nc\\n'])
    expect(r).toMatchObject({
      stdout: 'a b\nc\n',
      exitCode: 0,
      failure: null,
      commandLine: "printf 'a b\\nc\\n'",
    })
  })

  it('classifies a program that does not exist as LIVE_MISSING_PROGRAM', async () => {
    const r = await runCommand(['kp-no-such-program-xyz', '--version'])
    expect(r.exitCode).toBeNull()
    expect(r.failure?.code).toBe('LIVE_MISSING_PROGRAM')
    expect(r.failure?.message).toContain('kp-no-such-program-xyz is not installed')
  })

  it('classifies a non-zero exit as LIVE_COMMAND_FAILED with the status and first stderr line', async () => {
    const f = await runCommand(['false'])
    expect(f.exitCode).toBe(1)
    expect(f.failure).toEqual({code: 'LIVE_COMMAND_FAILED', message: 'false exited with status 1'})
    const ls = await runCommand(['ls', '/kp-no-such-dir'])
    expect(ls.exitCode).toBe(2)
    expect(ls.failure?.message).toMatch(
      /^ls \/kp-no-such-dir exited with status 2: ls: cannot access/,
    )
  })

  it('says a dump program crashed (SIGSEGV) and how to give it more stack, and only for a -save program', async () => {
    // A real crash: the script sends itself SIGSEGV, as iptables-nft-save 1.8.9 dies on a
    // ruleset of 110,000 chains with the default 8 MB stack.
    const dir = mkdtempSync(join(tmpdir(), 'kp-exec-'))
    try {
      for (const name of ['crashing-save', 'crashing-tool']) {
        writeFileSync(join(dir, name), '#!/bin/sh\nkill -SEGV $$\n')
        chmodSync(join(dir, name), 0o755)
      }
      const save = await runCommand([join(dir, 'crashing-save')])
      expect(save.failure).toMatchObject({
        code: 'LIVE_COMMAND_FAILED',
        message: `${join(dir, 'crashing-save')} crashed (SIGSEGV)`,
      })
      expect(environmentError(save).hints[0]).toContain('`ulimit -s unlimited`')
      const other = await runCommand([join(dir, 'crashing-tool')])
      expect(other.failure).toEqual({
        code: 'LIVE_COMMAND_FAILED',
        message: `${join(dir, 'crashing-tool')} was killed by SIGSEGV`,
      })
      expect(environmentError(other).hints).toEqual([
        'run the command by hand to see its full error output',
      ])
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('stops a command at its timeout and says so (LIVE_TIMEOUT)', async () => {
    const started = Date.now()
    const r = await runCommand(['sleep', '10'], {timeoutMs: 200})
    expect(Date.now() - started).toBeLessThan(5000)
    expect(r.failure?.code).toBe('LIVE_TIMEOUT')
    expect(r.failure?.message).toBe('sleep 10 did not finish within 0.2 s and was stopped')
  })

  it.skipIf(!setprivWorks)('classifies iptables-save without root as LIVE_NEEDS_ROOT', async () => {
    // iptables 1.8.9 prints "Could not fetch rule set generation id: Permission denied (you must be root)".
    const r = await runCommand([
      'setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      'iptables-save',
    ])
    expect(r.failure?.code).toBe('LIVE_NEEDS_ROOT')
    expect(r.failure?.message).toMatch(/needs root: .*(Permission denied|not permitted)/)
  })

  it('stops on time a program whose child keeps the output pipe open, and kills that child too', async () => {
    // The shape of a tool that forks a helper: the helper inherits stdout, so the pipe stays
    // open after the tool itself is gone. Waiting for the pipe made `--timeout 2` take 31 s.
    const dir = mkdtempSync(join(tmpdir(), 'kp-exec-'))
    try {
      const pidFile = join(dir, 'child.pid')
      const started = Date.now()
      const r = await runCommand(['sh', '-c', `sleep 30 & echo $! > ${pidFile}; echo hi; exit 0`], {
        timeoutMs: 300,
      })
      expect(Date.now() - started).toBeLessThan(5000)
      expect(r.failure?.code).toBe('LIVE_TIMEOUT')
      expect(r.stdout).toBe('hi\n')
      const pid = Number(readFileSync(pidFile, 'utf8'))
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(runningState(pid)).not.toBe('running')
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('does not call a program that is there but cannot start "not installed"', async () => {
    // execve answers ENOENT for a missing interpreter too (or, with execa, for a missing /dev/null).
    const dir = mkdtempSync(join(tmpdir(), 'kp-exec-'))
    try {
      const tool = join(dir, 'tool')
      writeFileSync(tool, '#!/kp-no-such-interpreter\n')
      chmodSync(tool, 0o755)
      const r = await runCommand([tool])
      expect(r.failure).toEqual({
        code: 'LIVE_COMMAND_FAILED',
        message: `${tool} could not be started (ENOENT)`,
      })
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('finds programs in sbin even when PATH lacks it', async () => {
    const saved = process.env.PATH
    process.env.PATH = '/usr/bin:/bin'
    try {
      const r = await runCommand(['ip', '-V'])
      expect(r.failure).toBeNull()
      expect(r.stdout).toMatch(/^ip utility/)
    } finally {
      process.env.PATH = saved
    }
  })
})

describe('environment errors (exit 4)', () => {
  it('carry the command line, its stderr and a hint', async () => {
    const r = await runCommand(['ls', '/kp-no-such-dir'])
    const e = environmentError(r)
    expect(e).toBeInstanceOf(EnvironmentError)
    expect(e.exitCode).toBe(4)
    expect(e.code).toBe('LIVE_COMMAND_FAILED')
    expect(e.command).toBe('ls /kp-no-such-dir')
    expect(e.stderr).toContain('No such file or directory')
    expect(e.hints.length).toBeGreaterThan(0)
  })

  it('runChecked throws for a missing program and returns a good run', async () => {
    await expect(runChecked(['kp-no-such-program-xyz'])).rejects.toMatchObject({
      code: 'LIVE_MISSING_PROGRAM',
      exitCode: 4,
    })
    await expect(runChecked(['true'])).resolves.toMatchObject({exitCode: 0})
  })

  it('quotes arguments with spaces or shell characters in command lines', () => {
    expect(commandLineOf(['nft', '-j', 'list', 'table', 'ip', 'kube-proxy'])).toBe(
      'nft -j list table ip kube-proxy',
    )
    expect(commandLineOf(['echo', "it's here"])).toBe(`echo 'it'\\''s here'`)
  })
})
