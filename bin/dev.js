#!/usr/bin/env -S node --import tsx --no-warnings
// Runs the TypeScript commands through tsx, ignoring the build output and the manifest, so a
// development run never shows a stale build. the development mode of oclif cannot register tsx
// here and would fall back to the build output.
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {execute} from '@oclif/core'

const root = fileURLToPath(new URL('..', import.meta.url))
const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
pjson.oclif.commands = './src/commands'
await execute({development: true, dir: import.meta.url, loadOptions: {root, pjson, ignoreManifest: true}})
