/**
 * Runs a kp command through oclif inside the test process and returns what runKp would: what it
 * printed and its exit code. A spawned kp costs a node start-up and a module load (more through
 * tsx); this costs the command alone. The commands are the TypeScript source, loaded by vitest
 * (so a test sees the code it imports), handed to an oclif Config of this package: parsing, help,
 * hooks and error handling are oclif's, as in bin/run.js.
 *
 * What a process gives every run for free is set up and put back here: stdout/stderr (captured),
 * stdin, argv, env, process.exitCode. What only a real process shows (signals, pipes that block or
 * close, exit on EPIPE, the bin's own --version fast path, worker threads that outlive the command)
 * stays with runKp.
 */
import {createRequire} from 'node:module'
import {readFileSync, readdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {Readable} from 'node:stream'
import {format} from 'node:util'
import {vi} from 'vitest'
import type {Command} from '@oclif/core/command'
import {Config} from '@oclif/core/config'
import {Exit, handle} from '@oclif/core/handle'
import {error, exit} from '@oclif/core/errors'
import {run} from '@oclif/core/run'
import {ROOT, type CliResult, type RunOptions} from './run-cli.js'

export type {CliResult}

const require = createRequire(import.meta.url)
// oclif's manifest entry for a command class (what `oclif manifest` writes), not exported by name.
const {cacheCommand} = require(
  join(dirname(require.resolve('@oclif/core/package.json')), 'lib/util/cache-command.js'),
) as {
  cacheCommand: (cmd: unknown, plugin: unknown, respectNoCacheDefault?: boolean) => Promise<any>
}

let configPromise: Promise<Config> | null = null

/** An oclif Config of this package whose commands are the source classes, loaded through vitest. */
async function loadConfig(): Promise<Config> {
  const pjson = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'))
  // No commands folder for oclif to find: the classes are given below, as vitest loaded them.
  delete pjson.oclif.commands
  delete pjson.oclif.hooks
  const config = await Config.load({root: ROOT, pjson, ignoreManifest: true})
  const plugin = (config as any).rootPlugin
  const ids = readdirSync(`${ROOT}src/commands`)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
  plugin.commands = await Promise.all(
    ids.map(async (id) => {
      const mod = await import(/* @vite-ignore */ `${ROOT}src/commands/${id}.ts`)
      const cls = mod.default as typeof Command & {id: string; plugin: unknown}
      cls.id = id
      cls.plugin = plugin
      const cached = await cacheCommand(cls, plugin, false)
      return {
        ...cached,
        id,
        load: async () => cls,
        pluginAlias: plugin.alias,
        pluginType: plugin.type,
      }
    }),
  )
  const internal = config as any
  internal.loadCommands(plugin)
  internal.loadTopics(plugin)
  return config
}

/**
 * The command_not_found hook is the TypeScript source too, loaded through vitest; oclif would
 * import the built file named in package.json. On the prototype: oclif's run() makes a new Config
 * from the one given. A hook that ends the run throws, as under oclif.
 */
const notFound = (await import(`${ROOT}src/cli/hooks/command-not-found.ts`)).default
const runHook = Config.prototype.runHook
Config.prototype.runHook = async function (this: Config, event: any, opts: any, ...rest: any[]) {
  if (event !== 'command_not_found') return (runHook as any).call(this, event, opts, ...rest)
  const context = {exit: (code = 0) => exit(code), error: (m: string) => error(m)}
  await notFound.call(context, {...opts, config: this, context})
  return {successes: [], failures: []}
} as typeof runHook

/** Serialises runs: each one owns the process-wide streams, argv and env while it goes. */
let queue: Promise<unknown> = Promise.resolve()

/**
 * kp `args` in this process. Same options and result as runKp (`prefix` and `timeout` are for
 * processes and are refused here).
 */
export function runKpInProcess(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  if (opts.prefix || opts.timeout !== undefined)
    throw new Error('runKpInProcess: prefix and timeout need a process; use runKp')
  const next = queue.then(() => runOne(args, opts))
  queue = next.catch(() => undefined)
  return next
}

async function runOne(args: string[], opts: RunOptions): Promise<CliResult> {
  // runKp runs kp in the project folder; the tests' paths are relative to it.
  if (process.cwd() !== ROOT.replace(/\/$/, '')) process.chdir(ROOT)
  configPromise ??= loadConfig()
  const config = await configPromise

  let stdout = ''
  let stderr = ''
  const text = (chunk: unknown): string =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')
  const capture =
    (add: (s: string) => void) =>
    (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
      // Decoded now: kp reuses the buffer it wrote once the stream holds nothing back.
      add(text(chunk))
      const done = typeof encoding === 'function' ? encoding : callback
      if (typeof done === 'function') process.nextTick(done as () => void)
      return true
    }
  const toOut = (s: string): void => void (stdout += s)
  const toErr = (s: string): void => void (stderr += s)

  const saved = {
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
    log: console.log,
    info: console.info,
    warn: console.warn,
    error: console.error,
    stdin: Object.getOwnPropertyDescriptor(process, 'stdin'),
    argv: process.argv,
    exitCode: process.exitCode,
    exit: Exit.exit,
  }
  const env: Record<string, string> = {NO_COLOR: '1', FORCE_COLOR: '0', ...opts.env}
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]))

  let exitCode: number | undefined
  process.stdout.write = capture(toOut) as typeof process.stdout.write
  process.stderr.write = capture(toErr) as typeof process.stderr.write
  console.log = console.info = (...a: unknown[]) => toOut(`${format(...a)}\n`)
  console.warn = console.error = (...a: unknown[]) => toErr(`${format(...a)}\n`)
  // A spawned kp's stdin is the given text, or empty (runKp ends it at once).
  Object.defineProperty(process, 'stdin', {
    configurable: true,
    enumerable: true,
    value: Readable.from([Buffer.from(opts.input ?? '')]),
  })
  process.argv = [process.execPath, `${ROOT}bin/run.js`, ...args]
  process.exitCode = undefined
  Object.assign(process.env, env)
  // oclif ends the process with an error's exit code; here the code is the result.
  Exit.exit = ((code = 0) => void (exitCode ??= code)) as typeof Exit.exit
  try {
    await run(args, config)
  } catch (error) {
    await handle(error as Error)
  } finally {
    exitCode ??= Number(process.exitCode ?? 0)
    process.stdout.write = saved.stdoutWrite
    process.stderr.write = saved.stderrWrite
    Object.assign(console, {
      log: saved.log,
      info: saved.info,
      warn: saved.warn,
      error: saved.error,
    })
    if (saved.stdin) Object.defineProperty(process, 'stdin', saved.stdin)
    process.argv = saved.argv
    process.exitCode = saved.exitCode
    Exit.exit = saved.exit
    for (const [k, v] of Object.entries(savedEnv)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
  // Stdin is read once per process and kept (src/readers/load.ts): a run that may have read it
  // leaves its bytes behind, so the next run gets fresh modules, as a new process would.
  if (args.includes('-')) {
    vi.resetModules()
    configPromise = null
  }
  return {stdout, stderr, exitCode}
}
