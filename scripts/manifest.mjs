// Writes oclif.manifest.json from the built commands, as `oclif manifest` does, without
// pulling the whole oclif packaging tool into devDependencies. With the manifest present,
// oclif reads command metadata from JSON instead of importing every command at start-up.
import {rmSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Plugin} from '@oclif/core/config'

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
