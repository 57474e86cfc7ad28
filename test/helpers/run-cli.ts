/**
 * Runs the kp CLI as a real process and returns what it printed and its exit code.
 * By default it runs the TypeScript source through bin/dev.js (no build needed); set
 * KP_TEST_BIN=built to exercise the built bin/run.js instead, or KP_TEST_BIN=/path/to/bin/run.js
 * for a build in another folder (still run from this checkout, where the fixtures are).
 */
import {spawn, spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface CliResult {
  stdout: string
  stderr: string
  exitCode: number
}

/** The argv prefix that starts kp: usable inside `ip netns exec NS ...` too. */
export function kpCommand(): string[] {
  const bin = process.env.KP_TEST_BIN
  if (bin === 'built') return [process.execPath, `${ROOT}bin/run.js`]
  if (bin?.endsWith('.js')) return [process.execPath, bin]
  return [process.execPath, '--import', 'tsx', '--no-warnings', `${ROOT}bin/dev.js`]
}

export interface RunOptions {
  input?: string
  env?: Record<string, string>
  prefix?: string[]
  /** Kills a kp that does not end by itself after this many ms; its exitCode is then -1. */
  timeout?: number
}

export function runKp(args: string[], opts: RunOptions = {}): CliResult {
  const [cmd, ...rest] = [...(opts.prefix ?? []), ...kpCommand(), ...args]
  const r = spawnSync(cmd!, rest, {
    cwd: ROOT,
    input: opts.input ?? '',
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    env: {...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...opts.env},
    timeout: opts.timeout,
  })
  return {stdout: r.stdout ?? '', stderr: r.stderr ?? '', exitCode: r.status ?? -1}
}

/**
 * runKp without blocking the test worker: several runs can go at once, and a file of many runs
 * does not starve vitest's own messages (its RPC times out after 60 s of a blocked event loop).
 */
export function runKpAsync(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  const [cmd, ...rest] = [...(opts.prefix ?? []), ...kpCommand(), ...args]
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, rest, {
      cwd: ROOT,
      env: {...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...opts.env},
      timeout: opts.timeout,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({stdout, stderr, exitCode: code ?? -1}))
    child.stdin.end(opts.input ?? '')
  })
}
