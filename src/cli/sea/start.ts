/**
 * oclif inside the single executable, loaded by src/cli/sea/main.ts for anything but
 * `--version`. oclif normally reads package.json, the manifest, the commands and the hooks as
 * files beside bin/run.js; a single executable has no files, so here they all come from memory.
 */
import {Config, Plugin} from '@oclif/core/config'
import * as Errors from '@oclif/core/errors'
import {execute} from '@oclif/core/execute'
import type {PJSON} from '@oclif/core/interfaces'
import commandNotFound from '../hooks/command-not-found.js'
import {SEA_COMMANDS} from './commands.js'
import {completeWords, completionCommands} from '../completion.js'
import {commandName, completionRequest, setCommandName} from './identity.js'

/**
 * Runs kp's command line `argv` with oclif; `pjson` comes from the build. It rejects only when
 * oclif cannot start (src/cli/sea/main.ts then exits 70): a command's errors are reported by
 * oclif and kp with their own exit codes.
 */
export async function start(argv: string[], pjson: PJSON): Promise<void> {
  const config = await loadConfig(pjson)
  const words = completionRequest(process.argv0, argv)
  if (words) {
    process.stdout.write(completeWords(completionCommands(config.commands as never), words))
    return
  }
  await execute({args: argv, loadOptions: config})
  // As bin/run.js: exit once the output is out instead of waiting for V8's background work.
  await Promise.all([process.stdout, process.stderr].map(written))
  process.exit()
}

/** oclif's configuration, from memory: the root plugin with its bundled commands and hook. */
async function loadConfig(build: PJSON): Promise<Config> {
  // Help, examples and hints name the command as its user typed it: `kubectl kp` as a plugin.
  const bin = commandName(process.argv0)
  setCommandName(bin)
  const pjson: PJSON = {...build, oclif: {...build.oclif, bin, hooks: {}}}
  const root = process.execPath
  const plugin = new Plugin({root, pjson, isRoot: true, ignoreManifest: true})
  // Read by oclif's explicit command strategy in place of importing its target file.
  Object.assign(plugin, {commandCache: SEA_COMMANDS})
  await plugin.load()
  runOwnHooks(plugin)
  return Config.load({root, pjson, plugins: new Map([[pjson.name, plugin]])})
}

/**
 * oclif loads hooks from files named in package.json; kp's one hook (an unknown command is a
 * usage error, exit 2) is bundled instead, and run where oclif would run it.
 */
function runOwnHooks(plugin: Plugin): void {
  const runHook = Config.prototype.runHook
  Config.prototype.runHook = async function (this: Config, event, opts, timeout, capture) {
    if (event !== 'command_not_found') return runHook.call(this, event, opts, timeout, capture)
    const context = {
      config: this,
      debug: () => {},
      error: Errors.error,
      exit: Errors.exit,
      log: (message?: string) => process.stdout.write(`${message ?? ''}\n`),
      warn: Errors.warn,
    }
    const hookOpts = {...(opts as {id: string; argv?: string[]}), config: this, context}
    const result = await commandNotFound.call(context, hookOpts)
    return {failures: [], successes: [{plugin, result}]} as never
  } as typeof runHook
}

/** Resolves once everything written to `stream` so far is out (a pipe takes large writes in parts). */
function written(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.writableLength === 0) return Promise.resolve()
  return new Promise((resolve) => stream.write('', () => resolve()))
}
