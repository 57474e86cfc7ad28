#!/usr/bin/env node
// `kp --version` is answered before oclif loads: it is the start-up path scripts hit most.
const argv = process.argv.slice(2)
// Linked as kubectl_complete-kp, kubectl asks it to complete `kubectl kp …` (docs/sea.md).
const completing = /(^|\/)kubectl_complete-[^/]*$/.test(process.argv[1] ?? '')
if (!completing && argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const {readFileSync} = await import('node:fs')
  const read = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'))
  const pkg = read('../package.json')
  // The commit `npm run build` was made from (scripts/manifest.mjs); none before a build.
  let commit
  try {
    commit = read('../dist/build.json').commit
  } catch {
    commit = undefined
  }
  // As src/cli/sea/identity.ts versionLine, which the single executable prints too.
  const build = commit ? `npm, commit ${commit}` : 'npm'
  process.stdout.write(
    `kp/${pkg.version} ${process.platform}-${process.arch} node-${process.version} (${build})\n`,
  )
} else if (completing || argv[0] === '__complete') {
  // Answered from the commands' flags (src/cli/completion.ts completeWords), outside oclif's
  // command dispatch, which would read a -h among the words as a help request.
  const {Config} = await import('@oclif/core/config')
  const {completeWords, completionCommands} = await import('../dist/cli/completion.js')
  const config = await Config.load(import.meta.url)
  const words = completing ? argv : argv.slice(1)
  process.stdout.write(completeWords(completionCommands(config.commands), words))
} else {
  // The execute entry alone, not the package index: the index loads all of oclif (help, ux,
  // semver, ...) before any command runs, about 40 ms more of every run (docs/benchmarks.md).
  const {execute} = await import('@oclif/core/execute')
  // Run by kubectl as the plugin kubectl-kp (a link to this file): help and hints say `kubectl kp`.
  const asPlugin = /(^|\/)kubectl-[^/]*$/.test(process.argv[1] ?? '')
  await execute(asPlugin ? {args: argv, loadOptions: await pluginConfig()} : {dir: import.meta.url})
  // Exit once the output is out. Left to end by itself, node waits for V8's background work on
  // the heap (sweeping, compiling) first: ~60 ms after a 10,000-service read (docs/benchmarks.md).
  // Errors and `this.exit(n)` never get here: oclif exits with their code itself.
  await Promise.all([process.stdout, process.stderr].map(written))
  process.exit()
}

/** Resolves once everything written to `stream` so far is out (a pipe takes large writes in parts). */
function written(stream) {
  if (stream.writableLength === 0) return Promise.resolve()
  return new Promise((resolve) => stream.write('', () => resolve()))
}

/** oclif's configuration under the name kubectl gives the plugin (src/cli/sea/identity.ts). */
async function pluginConfig() {
  const {Config} = await import('@oclif/core/config')
  const {commandName, setCommandName} = await import('../dist/cli/sea/identity.js')
  const bin = commandName(process.argv[1])
  setCommandName(bin)
  const config = await Config.load(import.meta.url)
  // execute() loads the configuration again from its root plugin, whose package.json this is.
  config.pjson.oclif.bin = bin
  return config
}
