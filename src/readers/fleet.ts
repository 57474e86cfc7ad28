/**
 * A fleet: many nodes read as one question (`--fleet DIR`, `--all-nodes`, `-l SELECTOR`). Each
 * node is a NodeSource; what a source reads is one node's state, as `-f` reads one. The offline
 * source is a folder `kp collect --all-nodes --out DIR` wrote: one bundle per node and fleet.json.
 */
import {readFile} from 'node:fs/promises'
import {isAbsolute, join, relative} from 'node:path'
import {InputError} from '../errors.js'
import type {ProxyState} from '../model/types.js'
import type {BundleFacts} from './bundle.js'
import type {FileReadRequest} from './read-state.js'

export const FLEET_INDEX = 'fleet.json'

/** One node of a fleet folder: where its bundle is, or why there is none. */
export interface FleetNodeEntry {
  name: string
  /** The node's bundle folder, relative to the fleet folder; null when it was not collected. */
  dir: string | null
  /** Why the node was not collected (its error line); null when it was. */
  error: string | null
  /** The error's code (src/catalog/diagnostics.ts); null when it was collected. */
  code: string | null
}

/** fleet.json, the index `kp collect --all-nodes --out DIR` writes beside the node bundles. */
export interface FleetIndex {
  kind: 'KpFleet'
  schemaVersion: 1
  /** "kp/0.1.0". */
  createdBy: string
  /** When the collection ended (ISO 8601, UTC). */
  createdAt: string
  /** The label selector the nodes were picked by (`-l`); null for --all-nodes. */
  selector: string | null
  /** true when the run was stopped (Ctrl-C) before every node was collected. */
  interrupted: boolean
  nodes: FleetNodeEntry[]
}

/** What reading one node gives: its state and, from a bundle or the node, its facts. */
export interface NodeRead {
  state: ProxyState
  facts: BundleFacts | null
}

/** One node of a fleet, read on demand; `read` gives up when `signal` aborts. */
export interface NodeSource {
  name: string
  read(signal: AbortSignal): Promise<NodeRead>
}

/** A node that cannot be read: its error as collection recorded it (exit code and code kept). */
export class NodeUnavailable extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

const notFleet = (dir: string, why: string): InputError =>
  new InputError(`${dir}: not a kp fleet folder: ${why}`, 'INPUT_NOT_FLEET', [
    'kp collect --all-nodes --out DIR writes one; a single node bundle is read with -f DIR',
  ])

/** Reads and checks DIR/fleet.json; INPUT_NOT_FLEET when it is missing or not a fleet index. */
export async function readFleetIndex(dir: string): Promise<FleetIndex> {
  let text: string
  try {
    text = await readFile(join(dir, FLEET_INDEX), 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw notFleet(dir, code === 'ENOENT' ? `no ${FLEET_INDEX}` : (error as Error).message)
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw notFleet(dir, `${FLEET_INDEX}: ${(error as Error).message}`)
  }
  const index = raw as Partial<FleetIndex> | null
  if (index === null || typeof index !== 'object' || index.kind !== 'KpFleet')
    throw notFleet(dir, `${FLEET_INDEX} is not of kind KpFleet`)
  if (!Array.isArray(index.nodes)) throw notFleet(dir, `${FLEET_INDEX} has no nodes list`)
  const nodes: FleetNodeEntry[] = []
  for (const [i, n] of index.nodes.entries()) {
    const e = n as Partial<FleetNodeEntry> | null
    if (e === null || typeof e !== 'object' || typeof e.name !== 'string' || e.name === '')
      throw notFleet(dir, `${FLEET_INDEX}: node ${i + 1} has no name`)
    const sub = typeof e.dir === 'string' ? e.dir : null
    // A fleet index names folders inside the fleet: never one elsewhere on the machine.
    if (sub !== null && (isAbsolute(sub) || relative('.', join('.', sub)).startsWith('..')))
      throw notFleet(dir, `${FLEET_INDEX}: node ${e.name}: folder ${sub} is outside the fleet`)
    nodes.push({
      name: e.name,
      dir: sub,
      error: typeof e.error === 'string' ? e.error : sub === null ? 'not collected' : null,
      code: typeof e.code === 'string' ? e.code : null,
    })
  }
  if (nodes.length === 0) throw notFleet(dir, `${FLEET_INDEX} lists no nodes`)
  return {
    kind: 'KpFleet',
    schemaVersion: 1,
    createdBy: typeof index.createdBy === 'string' ? index.createdBy : '',
    createdAt: typeof index.createdAt === 'string' ? index.createdAt : '',
    selector: typeof index.selector === 'string' ? index.selector : null,
    interrupted: index.interrupted === true,
    nodes,
  }
}

/**
 * The nodes of a fleet folder as sources, each read as `-f DIR/NODE` with the request's options.
 * A node collection could not save is a source whose read fails with the recorded error.
 */
export function fleetDirSources(
  dir: string,
  index: FleetIndex,
  req: Omit<FileReadRequest, 'files'>,
): NodeSource[] {
  return index.nodes.map((n) => ({
    name: n.name,
    async read(): Promise<NodeRead> {
      if (n.dir === null)
        throw new NodeUnavailable(n.error ?? 'not collected', n.code ?? 'LIVE_FLEET_PARTIAL')
      const {readFiles} = await import('./read-state.js')
      const read = await readFiles({...req, files: [join(dir, n.dir)]})
      return {state: read.state, facts: read.facts}
    },
  }))
}
