#!/usr/bin/env node
// `kp --version` is answered before oclif loads: it is the start-up path scripts hit most.
const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const {readFileSync} = await import('node:fs')
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`kp/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  // The execute entry alone, not the package index: the index loads all of oclif (help, ux,
  // semver, ...) before any command runs, about 40 ms more of every run (docs/benchmarks.md).
  const {execute} = await import('@oclif/core/execute')
  await execute({dir: import.meta.url})
}
