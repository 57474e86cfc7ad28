#!/usr/bin/env node
// `kp --version` is answered before oclif loads: it is the start-up path scripts hit most.
const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  const {readFileSync} = await import('node:fs')
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`kp/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  const {execute} = await import('@oclif/core')
  await execute({dir: import.meta.url})
}
