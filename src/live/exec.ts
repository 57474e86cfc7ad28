/**
 * The one place kp runs programs. Every command is a read-only dump or version query, run
 * directly (never through a shell) with a timeout. A run never throws: its failure is
 * classified into one of the LIVE_* shapes below, and callers decide whether that failure
 * is fatal (`kp list` live: EnvironmentError, exit 4) or only recorded (`kp collect`).
 */
import {spawn} from 'node:child_process'
import {accessSync, constants as fsConstants} from 'node:fs'
import {join} from 'node:path'
import {EnvironmentError} from '../errors.js'
import {DEFAULT_TIMEOUT_SECONDS} from './timeout.js'
import type {DiagnosticCode} from '../catalog/diagnostics.js'

export type FailureCode = Extract<
  DiagnosticCode,
  'LIVE_MISSING_PROGRAM' | 'LIVE_NEEDS_ROOT' | 'LIVE_TIMEOUT' | 'LIVE_COMMAND_FAILED'
>

export interface CommandFailure {
  code: FailureCode
  message: string
  /** Advice for this failure in particular, shown before the code's general hints. */
  hint?: string
}

export interface CommandResult {
  argv: string[]
  /** The argv as one line, the way it is shown to people and in `live:<command line>` source paths. */
  commandLine: string
  stdout: string
  stderr: string
  /** null when the program could not start or was killed. */
  exitCode: number | null
  /** null when the command ran and exited 0. */
  failure: CommandFailure | null
}

export interface RunOptions {
  /** Milliseconds before the program is killed. */
  timeoutMs?: number
  /** Stops the program (Ctrl-C of a fleet collect). */
  signal?: AbortSignal
  /**
   * Variables added to the program's environment (kubectl needs HOME, KUBECONFIG). Dump
   * programs run with PATH and LC_ALL only.
   */
  env?: NodeJS.ProcessEnv
}

const DEFAULT_TIMEOUT_MS = DEFAULT_TIMEOUT_SECONDS * 1000

// A large node's iptables-save is tens of megabytes; leave room for much larger ones.
const MAX_OUTPUT_BYTES = 1024 * 1024 * 1024

// The dump programs live in sbin, which is missing from many users' PATH (sudo keeps it, `su`
// and plain shells often do not). Appending these never shadows a program the user chose.
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin']

function searchPath(): string {
  const dirs = (process.env.PATH ?? '').split(':').filter(Boolean)
  for (const d of SBIN_DIRS) if (!dirs.includes(d)) dirs.push(d)
  return dirs.join(':')
}

// What iptables-save, ip6tables-save, nft, ipset and the legacy tools print when they lack
// CAP_NET_ADMIN (checked as uid 65534 with iptables 1.8.9, nftables 1.0.6, ipset 7.17):
//   "Could not fetch rule set generation id: Permission denied (you must be root)"
//   "Operation not permitted (you must be root)", "Kernel error received: Operation not permitted"
//   "Failed to list table names in /proc/net/ip_tables_names: Permission denied"
export const NEEDS_ROOT = /permission denied|operation not permitted|you must be root/i

export function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`
}

export function commandLineOf(argv: readonly string[]): string {
  return argv.map(quoteArg).join(' ')
}

function firstLine(text: string): string {
  return text.trim().split('\n', 1)[0] ?? ''
}

/** How one run ended, before it is classified. */
interface RawRun {
  stdout: string
  stderr: string
  exitCode: number | null
  signal: NodeJS.Signals | null
  /** The spawn error's code (ENOENT, EACCES, ...), when the program did not start. */
  spawnError: string | null
  timedOut: boolean
  overflowed: boolean
}

/**
 * Whether `file` is an executable on the search path. A spawn ENOENT does not by itself mean
 * "not installed": the program may be there and something else it needs at start is not.
 */
function foundOnPath(file: string, path: string): boolean {
  const candidates = file.includes('/') ? [file] : path.split(':').map((d) => join(d, file))
  for (const c of candidates) {
    try {
      accessSync(c, fsConstants.X_OK)
      return true
    } catch {
      // not here; try the next folder
    }
  }
  return false
}

/** Stops the program and everything it started (its process group). */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // the group is gone already
  }
}

/**
 * Runs the program in its own process group with a wall-clock timer. At the deadline the whole
 * group is killed and the run ends then, even if a child it started still holds the output
 * pipes open (waiting for the pipes to close is what made `--timeout 2` take 31 s).
 */
function spawnRun(
  file: string,
  args: string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
) {
  return new Promise<RawRun>((resolve) => {
    const out: Buffer[] = []
    const err: Buffer[] = []
    let bytes = 0
    let settled = false
    const raw: RawRun = {
      stdout: '',
      stderr: '',
      exitCode: null,
      signal: null,
      spawnError: null,
      timedOut: false,
      overflowed: false,
    }
    // stdin is a pipe closed at once, not 'ignore': 'ignore' opens /dev/null in the child, and
    // without /dev/null (a minimal container) every program would look "not installed".
    const child = spawn(file, args, {detached: true, stdio: ['pipe', 'pipe', 'pipe'], env})
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', abort)
      raw.stdout = Buffer.concat(out).toString('utf8')
      raw.stderr = Buffer.concat(err).toString('utf8')
      child.stdout?.destroy()
      child.stderr?.destroy()
      resolve(raw)
    }
    const timer = setTimeout(() => {
      raw.timedOut = true
      killGroup(child.pid)
      finish()
    }, timeoutMs)
    const abort = () => {
      raw.signal = 'SIGTERM'
      killGroup(child.pid)
      finish()
    }
    if (signal?.aborted) abort()
    signal?.addEventListener('abort', abort, {once: true})
    child.stdin?.on('error', () => undefined)
    child.stdin?.end()
    const take = (into: Buffer[]) => (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > MAX_OUTPUT_BYTES) {
        raw.overflowed = true
        killGroup(child.pid)
        finish()
        return
      }
      into.push(chunk)
    }
    child.stdout?.on('data', take(out))
    child.stderr?.on('data', take(err))
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (settled) return
      raw.spawnError = e.code ?? 'EUNKNOWN'
      finish()
    })
    child.on('close', (code, signal) => {
      if (settled) return
      raw.exitCode = code
      raw.signal = signal
      finish()
    })
  })
}

/** Runs one program with its arguments. Never throws; see CommandResult.failure. */
export async function runCommand(
  argv: readonly string[],
  opts: RunOptions = {},
): Promise<CommandResult> {
  const [file, ...args] = argv
  const commandLine = commandLineOf(argv)
  if (file === undefined) throw new Error('runCommand: empty argv')
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const path = searchPath()
  // LC_ALL=C keeps error messages in English, which the classification below reads.
  const r = await spawnRun(
    file,
    args,
    timeoutMs,
    {...opts.env, PATH: path, LC_ALL: 'C'},
    opts.signal,
  )
  const result: CommandResult = {
    argv: [...argv],
    commandLine,
    stdout: r.stdout,
    stderr: r.stderr,
    exitCode: r.timedOut || r.overflowed ? null : r.exitCode,
    failure: classify(file, commandLine, timeoutMs, path, r),
  }
  return result
}

function classify(
  file: string,
  commandLine: string,
  timeoutMs: number,
  path: string,
  r: RawRun,
): CommandFailure | null {
  if (r.spawnError === 'ENOENT' && !foundOnPath(file, path))
    return {code: 'LIVE_MISSING_PROGRAM', message: `${file} is not installed (not found in PATH)`}
  if (r.spawnError === 'EACCES')
    return {code: 'LIVE_NEEDS_ROOT', message: `${file} cannot be executed: permission denied`}
  if (r.spawnError !== null)
    return {code: 'LIVE_COMMAND_FAILED', message: `${file} could not be started (${r.spawnError})`}
  if (r.timedOut)
    return {
      code: 'LIVE_TIMEOUT',
      message: `${commandLine} did not finish within ${timeoutMs / 1000} s and was stopped`,
    }
  if (r.overflowed)
    return {
      code: 'LIVE_COMMAND_FAILED',
      message: `${commandLine} printed more than ${MAX_OUTPUT_BYTES} bytes`,
    }
  if (r.exitCode === 0) return null
  if (NEEDS_ROOT.test(r.stderr))
    return {code: 'LIVE_NEEDS_ROOT', message: `${commandLine} needs root: ${firstLine(r.stderr)}`}
  if (r.signal === 'SIGSEGV' && file.endsWith('-save')) {
    // iptables-nft-save 1.8.9 runs out of the default stack on a node with ~100,000 chains, and
    // finishes with an unlimited one.
    return {
      code: 'LIVE_COMMAND_FAILED',
      message: `${commandLine} crashed (SIGSEGV)`,
      hint: `${file} can run out of stack on very large rulesets: run \`ulimit -s unlimited\` in the shell that runs kp, then try again`,
    }
  }
  if (r.signal)
    return {code: 'LIVE_COMMAND_FAILED', message: `${commandLine} was killed by ${r.signal}`}
  const why = firstLine(r.stderr)
  return {
    code: 'LIVE_COMMAND_FAILED',
    message: `${commandLine} exited with status ${r.exitCode ?? '?'}${why ? `: ${why}` : ''}`,
  }
}

const HINTS: Record<FailureCode, string[]> = {
  LIVE_MISSING_PROGRAM: [
    'install it (Debian: iptables, nftables, ipset, ipvsadm, iproute2), or read a saved dump with -f FILE',
  ],
  LIVE_NEEDS_ROOT: ['run kp as root (for example with sudo), or read a saved dump with -f FILE'],
  LIVE_TIMEOUT: [
    'the node may be under heavy load, or its rules very many: give each command more time with --timeout SECONDS, or save the dumps once with `kp collect --out DIR --timeout SECONDS` and read them with -f DIR',
  ],
  LIVE_COMMAND_FAILED: ['run the command by hand to see its full error output'],
}

/** The exit-4 error for a failed run, carrying the command line and its stderr. */
export function environmentError(r: CommandResult): EnvironmentError {
  const failure = r.failure ?? {
    code: 'LIVE_COMMAND_FAILED' as const,
    message: `${r.commandLine} failed`,
  }
  const hints =
    failure.hint !== undefined ? [failure.hint, ...HINTS[failure.code]] : HINTS[failure.code]
  return new EnvironmentError(
    failure.message,
    failure.code,
    r.commandLine,
    r.stderr.trim() || null,
    hints,
  )
}

/** Runs a command and throws EnvironmentError (exit 4) when it fails. */
export async function runChecked(
  argv: readonly string[],
  opts: RunOptions = {},
): Promise<CommandResult> {
  const r = await runCommand(argv, opts)
  if (r.failure) throw environmentError(r)
  return r
}
