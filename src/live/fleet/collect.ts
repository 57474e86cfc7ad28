/**
 * `kp collect --all-nodes --out DIR`: one bundle per node under DIR/nodes/NAME and the index
 * DIR/fleet.json (src/readers/fleet.ts). Each bundle is written into a hidden folder and renamed
 * when whole, so a node that fails, times out or is stopped (Ctrl-C) leaves no partial files.
 */
import {rmSync, writeFileSync} from 'node:fs'
import {readdir, rename, rm, stat, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {makeDirectory} from '../../core/directory.js'
import {EnvironmentError, UsageError} from '../../errors.js'
import {FLEET_INDEX, type FleetIndex, type FleetNodeEntry} from '../../readers/fleet.js'
import {type FleetEvent, type NodeOutcome, runFleet} from './runner.js'

/** One node to collect: `collect` writes its bundle into `dir` (a folder that does not exist yet). */
export interface NodeCollector {
  name: string
  collect(dir: string, signal: AbortSignal): Promise<void>
}

export interface FleetCollectOptions {
  outDir: string
  force?: boolean
  parallel: number
  nodeTimeoutMs: number
  signal?: AbortSignal
  onEvent?: (e: FleetEvent) => void
  createdBy: string
  selector: string | null
}

export interface FleetCollectResult {
  index: FleetIndex
  outcomes: NodeOutcome<void>[]
  interrupted: boolean
}

/** A node name as a folder name: kubelet's names are DNS subdomains, but the index is input too. */
function folderOf(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_')
}

async function checkOutDir(outDir: string, force: boolean): Promise<void> {
  try {
    if (!(await stat(outDir)).isDirectory())
      throw new UsageError(`--out ${outDir}: exists and is not a folder`, 'USAGE_OUT_NOT_DIR')
    if ((await readdir(outDir)).length > 0 && !force)
      throw new UsageError(`--out ${outDir}: folder is not empty`, 'USAGE_OUT_NOT_EMPTY', [
        'choose a new folder, or pass --force to write into this one',
      ])
  } catch (error) {
    if (error instanceof UsageError) throw error
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UsageError(
        `--out ${outDir}: cannot use it: ${(error as Error).message}`,
        'USAGE_OUT_UNUSABLE',
      )
  }
}

export async function collectFleet(
  collectors: NodeCollector[],
  opts: FleetCollectOptions,
): Promise<FleetCollectResult> {
  await checkOutDir(opts.outDir, Boolean(opts.force))
  const nodesDir = join(opts.outDir, 'nodes')
  try {
    await makeDirectory(nodesDir)
  } catch (error) {
    throw new EnvironmentError(
      `cannot write ${nodesDir}: ${(error as Error).message}`,
      'OUTPUT_UNWRITABLE',
    )
  }
  const sorted = [...collectors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  // Should the process end before the run does (another Ctrl-C handler, such as the collector
  // pods' deleting them and exiting), the half-written folders go and the index says so.
  const partials = new Set<string>()
  const saved = new Set<string>()
  const onExit = () => {
    for (const p of partials) rmSync(p, {recursive: true, force: true})
    const nodes = sorted.map((c) =>
      saved.has(c.name)
        ? {name: c.name, dir: `nodes/${folderOf(c.name)}`, error: null, code: null}
        : {name: c.name, dir: null, error: 'stopped (interrupted)', code: 'LIVE_INTERRUPTED'},
    )
    const index = indexOf(opts, true, nodes)
    writeFileSync(join(opts.outDir, FLEET_INDEX), `${JSON.stringify(index, null, 2)}\n`)
  }
  process.on('exit', onExit)
  let run
  try {
    run = await runFleet(
      sorted,
      async (c, signal) => {
        const final = join(nodesDir, folderOf(c.name))
        const partial = join(nodesDir, `.${folderOf(c.name)}.partial`)
        partials.add(partial)
        await rm(partial, {recursive: true, force: true})
        try {
          await c.collect(partial, signal)
          if (signal.aborted) throw signal.reason
          await rm(final, {recursive: true, force: true})
          await rename(partial, final)
          saved.add(c.name)
        } finally {
          await rm(partial, {recursive: true, force: true})
          partials.delete(partial)
        }
      },
      {
        parallel: opts.parallel,
        timeoutMs: opts.nodeTimeoutMs,
        signal: opts.signal,
        onEvent: opts.onEvent,
      },
    )
  } finally {
    process.off('exit', onExit)
  }
  const byName = new Map(run.outcomes.map((o) => [o.node, o]))
  const nodes: FleetNodeEntry[] = sorted.map((c) => {
    const o = byName.get(c.name)
    // What is on disk decides: Ctrl-C during the move into place marks the node interrupted,
    // yet its bundle is whole and kept (runFleet waits for the stopped work to settle).
    if (o?.ok || saved.has(c.name))
      return {name: c.name, dir: `nodes/${folderOf(c.name)}`, error: null, code: null}
    if (o) return {name: c.name, dir: null, error: o.error, code: o.code}
    return {
      name: c.name,
      dir: null,
      error: 'not started: the run was stopped',
      code: 'LIVE_INTERRUPTED',
    }
  })
  const index = indexOf(opts, run.interrupted, nodes)
  await writeFile(join(opts.outDir, FLEET_INDEX), `${JSON.stringify(index, null, 2)}\n`)
  return {index, outcomes: run.outcomes, interrupted: run.interrupted}
}

function indexOf(
  opts: FleetCollectOptions,
  interrupted: boolean,
  nodes: FleetNodeEntry[],
): FleetIndex {
  return {
    kind: 'KpFleet',
    schemaVersion: 1,
    createdBy: opts.createdBy,
    createdAt: new Date().toISOString(),
    selector: opts.selector,
    interrupted,
    nodes,
  }
}
