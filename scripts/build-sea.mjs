// `npm run build:sea`: kp as one executable that needs no Node.js on the machine (docs/sea.md).
// The sources are bundled into one CommonJS file (src/cli/sea/main.ts and all it imports), made
// into a Node single-executable blob with its V8 code cache, and injected into a copy of this
// node binary. The npm build (bin/run.js, dist/, the oclif manifest) is not touched.
import {execFileSync} from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {build} from 'esbuild'
import {inject} from 'postject'
import {commitOf} from './git-commit.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const out = `${root}dist-sea/`
/** The name kp's README and CI use: kp-linux-x64, kp-linux-arm64 (the platform it was built on). */
export const SEA_NAME = `kp-${process.platform}-${process.arch}`
// Node looks for this fuse in its binary to know a blob was injected (Node's SEA docs).
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

const started = performance.now()
const lap = (label, since) => `${label} ${((performance.now() - since) / 1000).toFixed(1)} s`
rmSync(out, {recursive: true, force: true})
mkdirSync(out, {recursive: true})

let t = performance.now()
await build({
  entryPoints: [`${root}src/cli/sea/main.ts`],
  outfile: `${out}kp.cjs`,
  bundle: true,
  platform: 'node',
  // A single executable runs its main script as CommonJS: no import(), no top-level await.
  format: 'cjs',
  target: 'node20',
  // oclif and kp tell commands and errors apart by their class names.
  keepNames: true,
  // oclif's optional loaders for TypeScript and Yarn PnP, never used by a bundled kp.
  external: ['typescript', 'ts-node', 'pnpapi'],
  define: {KP_SEA_BUILD: JSON.stringify({pjson: seaPjson(), commit: commitOf(root)})},
  plugins: [requireInBundle()],
  // Any other import.meta left in the sources would be undefined in the bundle: fail the build.
  logOverride: {'empty-import-meta': 'error'},
  logLevel: 'warning',
  legalComments: 'none',
})
const bundled = lap('bundle', t)

t = performance.now()
writeFileSync(
  `${out}sea-config.json`,
  JSON.stringify({
    main: `${out}kp.cjs`,
    output: `${out}kp.blob`,
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
  }),
)
quietly(process.execPath, ['--experimental-sea-config', `${out}sea-config.json`])
const blobbed = lap('blob', t)

t = performance.now()
const exe = `${out}${SEA_NAME}`
copyFileSync(process.execPath, exe)
chmodSync(exe, 0o755)
// node's symbols are a tenth of its size and nothing at run time reads them.
try {
  quietly('strip', [exe])
} catch (error) {
  if (error.code !== 'ENOENT') throw error
  process.stderr.write('build:sea: no strip (binutils): the executable keeps its symbols\n')
}
// postject's ELF library warns once per note section of a stripped binary that it cannot find the
// section's name; the names are not needed to add a section, and node runs the result as usual.
const warn = console.warn
console.warn = (...args) => {
  if (!/Can't find string offset for section name/.test(String(args[0]))) warn(...args)
}
await inject(exe, 'NODE_SEA_BLOB', readFileSync(`${out}kp.blob`), {sentinelFuse: FUSE})
console.warn = warn
const injected = lap('inject', t)

const mib = (file) => `${(statSync(file).size / 2 ** 20).toFixed(0)} MiB`
process.stdout.write(
  `wrote dist-sea/${SEA_NAME} (${mib(exe)}; bundle ${mib(`${out}kp.cjs`)}) in ` +
    `${lap('', started).trim()}: ${bundled}, ${blobbed}, ${injected}\n`,
)

/** Runs a program, showing what it printed only when it fails. */
function quietly(program, args) {
  try {
    execFileSync(program, args, {stdio: ['ignore', 'pipe', 'pipe']})
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}`)
    throw error
  }
}

/** package.json as oclif reads it, with the commands and hooks the bundle carries in memory. */
function seaPjson() {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'))
  const {name, version, description, license} = pkg
  const commands = {
    strategy: 'explicit',
    target: './src/cli/sea/commands',
    identifier: 'SEA_COMMANDS',
  }
  return {name, version, description, license, oclif: {...pkg.oclif, commands, hooks: {}}}
}

/**
 * `createRequire(import.meta.url)(name)` loads a CommonJS package from an ES module
 * (src/core/address.ts); in a CommonJS bundle it is plain `require(name)`, which esbuild bundles.
 */
function requireInBundle() {
  return {
    name: 'require-in-bundle',
    setup(b) {
      b.onLoad({filter: /[/\\]src[/\\].*\.ts$/}, (args) => ({
        contents: readFileSync(args.path, 'utf8').replaceAll(
          'createRequire(import.meta.url)',
          'require',
        ),
        loader: 'ts',
      }))
    },
  }
}
