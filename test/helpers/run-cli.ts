/**
 * Runs the kp CLI as a real process and returns what it printed and its exit code.
 * By default it runs the TypeScript source through bin/dev.js (no build needed); set
 * KP_TEST_BIN=built to exercise the built bin/run.js instead.
 */
import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface CliResult {
  stdout: string
  stderr: string
  exitCode: number
}

/** The argv prefix that starts kp: usable inside `ip netns exec NS ...` too. */
export function kpCommand(): string[] {
  if (process.env.KP_TEST_BIN === 'built') return [process.execPath, `${ROOT}bin/run.js`]
  return [process.execPath, '--import', 'tsx', '--no-warnings', `${ROOT}bin/dev.js`]
}

export function runKp(args: string[], opts: {input?: string; env?: Record<string, string>; prefix?: string[]} = {}): CliResult {
  const [cmd, ...rest] = [...(opts.prefix ?? []), ...kpCommand(), ...args]
  const r = spawnSync(cmd!, rest, {
    cwd: ROOT,
    input: opts.input ?? '',
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    env: {...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...opts.env},
  })
  return {stdout: r.stdout ?? '', stderr: r.stderr ?? '', exitCode: r.status ?? -1}
}
