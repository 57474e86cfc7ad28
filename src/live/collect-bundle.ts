/**
 * `kp collect --out DIR`: save every read-only output kp would read on this node (and the
 * leftovers it would not) with a manifest, so `kp ... -f DIR` answers the same anywhere.
 * Missing programs and failed commands are recorded in the manifest, not fatal; only a bundle
 * with no ruleset at all, or one where nft is missing and no other mode's rules were found, is an
 * error (exit 4).
 */
import {readdir, stat, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {makeDirectory} from '../core/directory.js'
import {EnvironmentError, UsageError} from '../errors.js'
import type {Mode} from '../model/types.js'
import {
  BUNDLE_CLUSTER,
  BUNDLE_MANIFEST,
  type BundleFile,
  type BundleManifest,
  type BundleReach,
} from '../readers/bundle.js'
import {missingNftError} from './collect-live.js'
import {environmentError} from './exec.js'
import type {ProbeRunner} from './probe.js'
import {type Capture, snapshotNode} from './snapshot.js'

export interface CollectOptions {
  outDir: string
  /** Write into a folder that already holds files. */
  force?: boolean
  mode?: Mode
  timeoutMs?: number
  /** "kp/0.1.0", recorded in the manifest. */
  createdBy: string
  /** Root for /proc and /sys (tests). */
  root?: string
  /** Where the probes run (default: this host); a pod for `kp collect --node NAME`. */
  runner?: ProbeRunner
  /** Recorded in the manifest when the node was reached through a cluster. */
  reachedThrough?: BundleReach
  /**
   * The cluster's Services and EndpointSlices (`kp collect --node NAME`): saved as cluster.json,
   * so the bundle answers from the node's point of view as `--node NAME` did.
   */
  cluster?: {text: string; command: string[]}
}

/** Refuses an unusable or non-empty --out before any command runs. */
async function checkOutDir(outDir: string, force: boolean): Promise<void> {
  let entries: string[] | null = null
  try {
    const s = await stat(outDir)
    if (!s.isDirectory())
      throw new UsageError(`--out ${outDir}: exists and is not a folder`, 'USAGE_OUT_NOT_DIR')
    entries = await readdir(outDir)
  } catch (error) {
    if (error instanceof UsageError) throw error
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new UsageError(
        `--out ${outDir}: cannot use it: ${(error as Error).message}`,
        'USAGE_OUT_UNUSABLE',
      )
    }
  }
  if (entries && entries.length > 0 && !force) {
    throw new UsageError(`--out ${outDir}: folder is not empty`, 'USAGE_OUT_NOT_EMPTY', [
      'choose a new folder, or pass --force to write into this one',
    ])
  }
}

function bundleFile(c: Capture): BundleFile {
  const r = c.result
  // A table that is not there (c.absent) is no output: the manifest says so, no file is written.
  const saved = r !== null && r.failure?.code !== 'LIVE_MISSING_PROGRAM' && c.absent === null
  return {
    path: saved ? c.file : null,
    format: c.format,
    command: c.argv,
    tool: c.tool,
    exitCode: r?.exitCode ?? null,
    stderr: r?.stderr.trim() ?? '',
    error:
      c.absent !== null
        ? c.absent
        : (r?.failure?.message ?? (c.skipped ? `not run: ${c.skipped}` : null)),
    read: c.read && saved && r.failure === null,
  }
}

export async function collectBundle(opts: CollectOptions): Promise<BundleManifest> {
  await checkOutDir(opts.outDir, Boolean(opts.force))
  const snap = await snapshotNode({
    mode: opts.mode,
    timeoutMs: opts.timeoutMs,
    everything: true,
    root: opts.root,
    runner: opts.runner,
  })

  const rulesets = snap.captures.filter(
    (c) => c.format !== null && c.result !== null && c.absent === null,
  )
  if (!rulesets.some((c) => c.result!.failure === null)) {
    // Nothing to save: say why with the most telling failure (no root beats a missing program).
    const failed = rulesets.map((c) => c.result!).filter((r) => r.failure !== null)
    const worst =
      failed.find((r) => r.failure!.code === 'LIVE_NEEDS_ROOT') ??
      failed.find((r) => r.failure!.code !== 'LIVE_MISSING_PROGRAM') ??
      failed[0]
    if (worst) throw environmentError(worst)
  }

  // A bundle that cannot show the rules because nft is missing would read as "no kube-proxy here".
  const missingNft = missingNftError(snap, opts.mode)
  if (missingNft) throw missingNft

  await writeOutput(opts.outDir, () => makeDirectory(opts.outDir))
  const files: BundleFile[] = []
  for (const c of snap.captures) {
    const f = bundleFile(c)
    if (f.path !== null)
      await writeOutput(join(opts.outDir, f.path), (path) => writeFile(path, c.result!.stdout))
    files.push(f)
  }
  if (opts.cluster) {
    const path = BUNDLE_CLUSTER
    await writeOutput(join(opts.outDir, path), (out) => writeFile(out, opts.cluster!.text))
    files.push({
      path,
      format: 'kube',
      command: opts.cluster.command,
      tool: 'kubectl',
      exitCode: 0,
      stderr: '',
      error: null,
      read: true,
    })
  }
  const warnings = [...snap.detection.warnings]
  if (snap.detection.mode === null)
    warnings.push(
      `no ${opts.mode ? `${opts.mode}-mode ` : ''}kube-proxy rules found: ${snap.detection.looked.join('; ')}`,
    )
  const manifest: BundleManifest = {
    kind: 'KpBundle',
    schemaVersion: 1,
    createdBy: opts.createdBy,
    createdAt: new Date().toISOString(),
    mode: snap.detection.mode,
    warnings,
    files,
    facts: snap.facts,
    ...(opts.reachedThrough ? {reachedThrough: opts.reachedThrough} : {}),
  }
  await writeOutput(join(opts.outDir, BUNDLE_MANIFEST), (path) =>
    writeFile(path, `${JSON.stringify(manifest, null, 2)}\n`),
  )
  return manifest
}

/** Runs one write of the bundle; a refusal (no space, read-only, not a folder) is exit 4, as for kp migrate --out, not an internal error. */
async function writeOutput(path: string, write: (path: string) => Promise<void>): Promise<void> {
  try {
    await write(path)
  } catch (error) {
    throw new EnvironmentError(
      `cannot write ${path}: ${(error as Error).message}`,
      'OUTPUT_UNWRITABLE',
    )
  }
}
