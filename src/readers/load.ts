/**
 * Turns `-f` arguments into SourceTexts: files, `-` (stdin) and bundle folders.
 * Problems reading them are InputErrors (exit 3), never stack traces.
 */
import {isAscii} from 'node:buffer'
import {readFileSync} from 'node:fs'
import {readFile, readdir, stat} from 'node:fs/promises'
import {join} from 'node:path'
import {isBlank} from '../core/text.js'
import {InputError} from '../errors.js'
import {BUNDLE_MANIFEST, type BundleFacts, type BundleManifest} from './bundle.js'
import type {SourceText} from './types.js'

export interface LoadedInputs {
  sources: SourceText[]
  /** Facts from bundles (kernel, sysctls); merged into the node info by readState. */
  facts: BundleFacts | null
}

/**
 * Bytes -> text. Dumps are almost always plain ASCII, and a 33 MB one decodes as Latin-1 (one
 * byte per character, the same string) in a fraction of the time UTF-8 decoding takes.
 */
function decodeText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
}

/**
 * One synchronous read: the promise API reads a large file in 512 KiB pieces, each a round
 * trip through the thread pool, and kp has nothing else to do meanwhile.
 */
function readText(path: string): string {
  return decodeText(readFileSync(path))
}

let stdinText: Promise<string> | null = null

/** Stdin can be read once per process; a command that loads its inputs twice (explain) gets the same text again. */
function readStdin(): Promise<string> {
  stdinText ??= (async () => {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    return decodeText(Buffer.concat(chunks))
  })()
  return stdinText
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException
  if (e.code === 'ENOENT') return 'no such file or directory'
  if (e.code === 'EACCES') return 'permission denied'
  if (e.code === 'EISDIR') return 'is a directory'
  return e.message ?? String(err)
}

async function loadBundle(dir: string): Promise<LoadedInputs> {
  const manifestPath = join(dir, BUNDLE_MANIFEST)
  let manifest: BundleManifest
  try {
    manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as BundleManifest
  } catch (error) {
    const entries = await readdir(dir).catch(() => [])
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      // A folder without a manifest: read every regular file and let sniffing decide.
      const sources: SourceText[] = []
      for (const name of entries.sort()) {
        const p = join(dir, name)
        if ((await stat(p)).isFile()) sources.push({path: p, text: readText(p)})
      }
      if (sources.length === 0) throw new InputError(`${dir}:1: folder holds no files to read`, 'INPUT_EMPTY_FOLDER')
      return {sources, facts: null}
    }
    throw new InputError(`${manifestPath}:1: not a kp bundle manifest: ${describe(error)}`, 'INPUT_BAD_BUNDLE')
  }
  if (manifest?.kind !== 'KpBundle' || !Array.isArray(manifest.files)) {
    throw new InputError(`${manifestPath}:1: not a kp bundle manifest (kind is not KpBundle)`, 'INPUT_BAD_BUNDLE')
  }
  const sources: SourceText[] = []
  for (const f of manifest.files) {
    // Only the active mode's outputs are read: a bundle also keeps leftovers of other modes,
    // failed commands and views for people (see BundleFile.read).
    if (f.format === null || f.path === null || f.exitCode !== 0 || f.read === false) continue
    if (typeof f.path !== 'string' || f.path.startsWith('/') || f.path.split(/[\\/]/).includes('..')) {
      throw new InputError(`${manifestPath}:1: bundle file path ${JSON.stringify(f.path)} points outside the bundle`, 'INPUT_BAD_BUNDLE')
    }
    const p = join(dir, f.path)
    try {
      const text = readText(p)
      // An output that was empty on the node (no ipsets, say) says nothing, as in live reading.
      if (isBlank(text)) continue
      sources.push({path: p, text, format: f.format, tool: f.tool})
    } catch (error) {
      throw new InputError(`${p}:1: cannot read bundle file: ${describe(error)}`, 'INPUT_UNREADABLE')
    }
  }
  if (sources.length === 0) {
    const node = manifest.facts?.node ? ` on ${manifest.facts.node}` : ''
    throw new InputError(`${manifestPath}:1: the bundle holds no kube-proxy rules to read (kp collect found none${node})`, 'INPUT_EMPTY_BUNDLE')
  }
  return {sources, facts: manifest.facts ?? null}
}

/** Reads every `-f` argument. A folder is a bundle; `-` is stdin (at most once). */
export async function loadInputs(paths: string[]): Promise<LoadedInputs> {
  const out: LoadedInputs = {sources: [], facts: null}
  let stdinUsed = false
  for (const p of paths) {
    if (p === '-') {
      if (stdinUsed) throw new InputError('-:1: stdin (-) given more than once', 'INPUT_STDIN_TWICE')
      stdinUsed = true
      out.sources.push({path: '-', text: await readStdin()})
      continue
    }
    let isDir: boolean
    try {
      isDir = (await stat(p)).isDirectory()
    } catch (error) {
      throw new InputError(`${p}:1: cannot read: ${describe(error)}`, 'INPUT_UNREADABLE')
    }
    if (isDir) {
      const b = await loadBundle(p)
      out.sources.push(...b.sources)
      out.facts ??= b.facts
      continue
    }
    try {
      out.sources.push({path: p, text: readText(p)})
    } catch (error) {
      throw new InputError(`${p}:1: cannot read: ${describe(error)}`, 'INPUT_UNREADABLE')
    }
  }
  return out
}
