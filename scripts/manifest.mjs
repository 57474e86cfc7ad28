// Writes oclif.manifest.json from the built commands, as `oclif manifest` does, without
// pulling the whole oclif packaging tool into devDependencies. With the manifest present,
// oclif reads command metadata from JSON instead of importing every command at start-up.
// Also dist/build.json: the commit built from, which `kp --version` names (bin/run.js).
import {rmSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Plugin} from '@oclif/core/config'
import {commitOf} from './git-commit.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const target = new URL('../oclif.manifest.json', import.meta.url)
rmSync(target, {force: true})
const plugin = new Plugin({
  root,
  type: 'core',
  ignoreManifest: true,
  errorOnManifestCreate: true,
  isRoot: true,
})
await plugin.load()
writeFileSync(target, JSON.stringify(plugin.manifest, null, 2) + '\n')
process.stdout.write(
  `wrote oclif.manifest.json (${Object.keys(plugin.manifest.commands).length} commands)\n`,
)
writeFileSync(
  new URL('../dist/build.json', import.meta.url),
  JSON.stringify({commit: commitOf(root)}) + '\n',
)
