/**
 * Which kp is running, and under what name: `kp --version` names the build (the npm package or
 * the single executable and the commit it was built from), and `kubectl kp` is how kubectl runs
 * kp as a plugin (an executable named kubectl-kp on PATH).
 */
import {basename} from 'node:path'

export interface BuildIdentity {
  version: string
  /** `npm`: bin/run.js of the npm package; `sea`: the single executable (docs/sea.md). */
  build: 'npm' | 'sea'
  /** The commit the single executable was built from (`-dirty` when the work tree had changes). */
  commit?: string
}

/** `kp/0.1.0 linux-x64 node-v20.20.2 (sea, commit c369789)`: oclif's user agent, then the build. */
export function versionLine(id: BuildIdentity): string {
  const build = id.commit ? `${id.build}, commit ${id.commit}` : id.build
  return `kp/${id.version} ${process.platform}-${process.arch} node-${process.version} (${build})`
}

/** `kp --version` or `kp -v` alone: answered before oclif loads (it is the start-up scripts hit most). */
export function isVersionOnly(argv: readonly string[]): boolean {
  return argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')
}

/**
 * The command name to show in help and examples. kubectl runs a plugin with argv[0] set to the
 * plugin's path, so an executable named `kubectl-kp` is `kubectl kp` to its user (kubectl reads a
 * `-` in the name as a space and `_` as a dash).
 */
export function commandName(argv0: string): string {
  const name = basename(argv0)
  if (!name.startsWith('kubectl-')) return 'kp'
  return `kubectl ${name.slice('kubectl-'.length).replaceAll('-', ' ').replaceAll('_', '-')}`
}

let shownName = 'kp'

/** Set once at start-up by an entry that knows its name (src/cli/sea/main.ts). */
export function setCommandName(name: string): void {
  shownName = name
}

/**
 * A hint in the user's words: "`kp list --help`" is "`kubectl kp list --help`" when kubectl runs
 * kp as its plugin, so the command a hint suggests is one the user can paste.
 */
export function inUserWords(hint: string): string {
  return shownName === 'kp' ? hint : hint.replaceAll('`kp ', `\`${shownName} `)
}

/**
 * The words to complete when kubectl asks for them, or null: kubectl runs an executable named
 * `kubectl_complete-kp` (for the plugin kubectl-kp) with the words typed after `kubectl kp`;
 * `kp __complete WORD...` is the same request under kp's own name (docs/sea.md).
 */
export function completionRequest(argv0: string, argv: readonly string[]): string[] | null {
  if (basename(argv0).startsWith('kubectl_complete-')) return [...argv]
  return argv[0] === '__complete' ? argv.slice(1) : null
}
