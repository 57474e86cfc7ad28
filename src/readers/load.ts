/**
 * Turns `-f` arguments into SourceTexts: files, `-` (stdin) and bundle folders.
 * Problems reading them are InputErrors (exit 3), never stack traces.
 */
import {pushAll} from '../core/arrays.js'
import {readFileSync, statSync} from 'node:fs'
import {readFile, readdir, stat} from 'node:fs/promises'
import {join} from 'node:path'
import {diag} from '../core/state.js'
import {decodeText, withoutByteOrderMark} from '../core/text.js'
import {InputError} from '../errors.js'
import type {Diagnostic} from '../model/types.js'
import {
  describeReadError,
  fileBytes,
  isBlankSource,
  memoryBytes,
  nulInHead,
  readSpecialFile,
  UnreadableFile,
  type ByteSource,
} from './bytes.js'
import {BUNDLE_MANIFEST, bundleFactsOf, type BundleFacts, type BundleManifest} from './bundle.js'
import type {FormatId, SourceText} from './types.js'

export interface LoadedInputs {
  sources: SourceText[]
  /** Facts from bundles (kernel, sysctls); merged into the node info by readState. */
  facts: BundleFacts | null
  /** What `kp collect` warned about when it made a bundle, as warnings at the manifest's lines. */
  diagnostics: Diagnostic[]
  /** A bundle's cluster objects (`kp collect --node NAME` saves them): read as `--cluster` is. */
  cluster: SourceText[]
}

/**
 * A file (or stdin): its bytes are decoded to text only when something asks for the text.
 * `kp explain NAME` picks its few lines from the bytes in pieces (./iptables/focus.ts), so a
 * large dump is then never read into memory whole, let alone decoded.
 */
class ReadSource implements SourceText {
  private decoded: string | null = null

  constructor(
    readonly path: string,
    readonly bytes: ByteSource,
    private readonly readAll: () => Buffer,
    readonly format?: FormatId,
    readonly tool?: string | null,
  ) {}

  get text(): string {
    this.decoded ??= withoutByteOrderMark(decodeText(this.readAll()))
    return this.decoded
  }
}

/**
 * A file, read when its text or bytes are first wanted. A pipe or other special file
 * (`-f <(iptables-save)`) can be read only once, from the start: it is read whole here.
 */
function fileSource(path: string, format?: FormatId, tool?: string | null): ReadSource {
  if (!statSync(path).isFile()) {
    const bytes = readSpecialFile(path)
    return new ReadSource(path, memoryBytes(bytes), () => bytes, format, tool)
  }
  // One synchronous read for the text: the promise API reads in small round trips through the thread pool.
  return new ReadSource(
    path,
    fileBytes(path),
    () => {
      try {
        return readFileSync(path)
      } catch (error) {
        throw new UnreadableFile(path, describeReadError(error))
      }
    },
    format,
    tool,
  )
}

let stdinBytes: Promise<Buffer> | null = null

/**
 * Stdin can be read once per process; a command that loads its inputs twice (explain) gets the
 * same bytes again. As for a pipe given with -f (readSpecialFile), reading stops once the first
 * SNIFF_BYTES hold a NUL byte: `kp list - < /dev/urandom` is refused as binary data at once.
 */
function readStdin(): Promise<Buffer> {
  stdinBytes ??= (async () => {
    const chunks: Buffer[] = []
    let total = 0
    for await (const chunk of process.stdin) {
      const bytes = chunk as Buffer
      chunks.push(bytes)
      const binary = nulInHead(bytes, total)
      total += bytes.length
      if (binary) break
    }
    return Buffer.concat(chunks, total)
  })()
  return stdinBytes
}

async function loadBundle(dir: string): Promise<LoadedInputs> {
  const manifestPath = join(dir, BUNDLE_MANIFEST)
  let manifest: BundleManifest
  let manifestText = ''
  try {
    manifestText = await readFile(manifestPath, 'utf8')
    manifest = JSON.parse(manifestText) as BundleManifest
  } catch (error) {
    const entries = await readdir(dir).catch(() => [])
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      // A folder without a manifest: read every regular file and let sniffing decide.
      const sources: SourceText[] = []
      for (const name of entries.sort()) {
        const p = join(dir, name)
        if ((await stat(p)).isFile()) sources.push(fileSource(p))
      }
      if (sources.length === 0)
        throw new InputError(`${dir}:1: folder holds no files to read`, 'INPUT_EMPTY_FOLDER')
      return {sources, facts: null, diagnostics: [], cluster: []}
    }
    throw new InputError(
      `${manifestPath}:1: not a kp bundle manifest: ${describeReadError(error)}`,
      'INPUT_BAD_BUNDLE',
    )
  }
  if (manifest?.kind !== 'KpBundle' || !Array.isArray(manifest.files)) {
    throw new InputError(
      `${manifestPath}:1: not a kp bundle manifest (kind is not KpBundle)`,
      'INPUT_BAD_BUNDLE',
    )
  }
  const sources: SourceText[] = []
  const cluster: SourceText[] = []
  for (const f of manifest.files) {
    if (typeof f !== 'object' || f === null) {
      throw new InputError(
        `${manifestPath}:1: not a kp bundle manifest (an entry of "files" is not an object)`,
        'INPUT_BAD_BUNDLE',
      )
    }
    // Only the active mode's outputs are read: a bundle also keeps leftovers of other modes,
    // failed commands and views for people (see BundleFile.read).
    if (f.format === null || f.path === null || f.exitCode !== 0 || f.read === false) continue
    if (
      typeof f.path !== 'string' ||
      f.path.startsWith('/') ||
      f.path.split(/[\\/]/).includes('..')
    ) {
      throw new InputError(
        `${manifestPath}:1: bundle file path ${JSON.stringify(f.path)} points outside the bundle`,
        'INPUT_BAD_BUNDLE',
      )
    }
    const p = join(dir, f.path)
    try {
      const src = fileSource(p, f.format, f.tool)
      // An output that was empty on the node (no ipsets, say) says nothing, as in live reading.
      if (isBlankSource(src.bytes)) continue
      ;(f.format === 'kube' ? cluster : sources).push(src)
    } catch (error) {
      const why = error instanceof UnreadableFile ? error.reason : describeReadError(error)
      throw new InputError(`${p}:1: cannot read bundle file: ${why}`, 'INPUT_UNREADABLE')
    }
  }
  const facts = bundleFactsOf(manifest.facts)
  if (sources.length === 0) {
    const node = facts?.node ? ` on ${facts.node}` : ''
    throw new InputError(
      `${manifestPath}:1: the bundle holds no kube-proxy rules to read (kp collect found none${node})`,
      'INPUT_EMPTY_BUNDLE',
    )
  }
  return {
    sources,
    facts,
    diagnostics: collectWarnings(manifest, manifestText, manifestPath),
    cluster,
  }
}

/**
 * The manifest's warnings (rules in both iptables backends, leftovers of another mode): the
 * node showed them to `kp collect` only, so whoever reads the bundle later must see them too.
 * Each is placed at its own line of the manifest when kp wrote it, else at line 1.
 */
function collectWarnings(manifest: BundleManifest, text: string, path: string): Diagnostic[] {
  if (!Array.isArray(manifest.warnings)) return []
  const node = bundleFactsOf(manifest.facts)?.node
  const on = node ? ` on ${node}` : ''
  let from = Math.max(0, text.indexOf('"warnings"'))
  const out: Diagnostic[] = []
  for (const w of manifest.warnings) {
    if (typeof w !== 'string') continue
    const at = text.indexOf(JSON.stringify(w), from)
    let line = 1
    if (at >= 0) {
      for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++
      from = at + 1
    }
    out.push(diag('warning', 'INPUT_BUNDLE_WARNING', `kp collect${on} warned: ${w}`, {path, line}))
  }
  return out
}

/** Reads every `-f` argument. A folder is a bundle; `-` is stdin (at most once). */
export async function loadInputs(paths: string[]): Promise<LoadedInputs> {
  const out: LoadedInputs = {sources: [], facts: null, diagnostics: [], cluster: []}
  let stdinUsed = false
  for (const p of paths) {
    if (p === '-') {
      if (stdinUsed)
        throw new InputError('-:1: stdin (-) given more than once', 'INPUT_STDIN_TWICE')
      stdinUsed = true
      const bytes = await readStdin()
      out.sources.push(new ReadSource('-', memoryBytes(bytes), () => bytes))
      continue
    }
    let isDir: boolean
    try {
      isDir = (await stat(p)).isDirectory()
    } catch (error) {
      throw new InputError(`${p}:1: cannot read: ${describeReadError(error)}`, 'INPUT_UNREADABLE')
    }
    if (isDir) {
      const b = await loadBundle(p)
      pushAll(out.sources, b.sources)
      pushAll(out.diagnostics, b.diagnostics)
      pushAll(out.cluster, b.cluster)
      out.facts ??= b.facts
      continue
    }
    try {
      out.sources.push(fileSource(p))
    } catch (error) {
      throw new InputError(`${p}:1: cannot read: ${describeReadError(error)}`, 'INPUT_UNREADABLE')
    }
  }
  return out
}
