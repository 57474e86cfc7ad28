#!/usr/bin/env -S node --import tsx --no-warnings
// Runs the TypeScript commands through tsx, ignoring the manifest. Caveat: while a build output
// folder exists, oclif still loads the compiled commands from it (its tsx registration fails
// here), so remove it (or rebuild) before trusting a development run. npm test always rebuilds.
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {execute} from '@oclif/core'

const root = fileURLToPath(new URL('..', import.meta.url))
const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
pjson.oclif.commands = './src/commands'
pjson.oclif.hooks = {command_not_found: './src/cli/hooks/command-not-found.ts'}
await execute({
  development: true,
  dir: import.meta.url,
  loadOptions: {root, pjson, ignoreManifest: true},
})
