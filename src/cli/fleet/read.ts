/**
 * Reads every node of a fleet input into states, with progress on stderr and Ctrl-C stopping
 * the run (exit 130), and says how the run ends: which nodes failed, which were read in part.
 */
import {completenessOf} from '../../core/completeness.js'
import {EXIT, type ExitName, KpError, formatDiagnostic} from '../../errors.js'
import type {FleetNode} from '../../analyze/fleet.js'
import type {NodeOutcome} from '../../live/fleet/runner.js'
import {type NodeRead, type NodeSource, NodeUnavailable} from '../../readers/fleet.js'
import type {FileReadRequest} from '../../readers/read-state.js'
import {escapeControl} from '../escape.js'
import {fleetProgress} from './progress.js'
import {shortError} from './short-error.js'
import {type FleetInput, clusterNodes} from './input.js'
import type {RemoteOptions} from '../../live/remote/index.js'

export interface FleetRunFlags {
  parallel: number
  /** Seconds one node may take. */
  nodeTimeout: number
  verbose?: boolean
}

/** The nodes of a fleet input, as sources read with the request's options. */
export async function fleetSources(
  input: FleetInput,
  req: Omit<FileReadRequest, 'files'>,
  remote: RemoteOptions,
): Promise<NodeSource[]> {
  if (input.kind === 'cluster') {
    const names = await clusterNodes(remote, input.selector)
    const {readRemoteNode} = await import('../../live/remote/index.js')
    // The Services and EndpointSlices are fetched once for the fleet, not once per node: every
    // node is then read against the same snapshot, and each node costs two kubectl calls less.
    const {clusterObjects} = await import('../../live/remote/cluster.js')
    const {kubectlOf} = await import('../../live/remote/kubectl.js')
    const objects = await clusterObjects(kubectlOf(remote), 'cluster')
    return names.map((name) => ({
      name,
      async read(signal: AbortSignal): Promise<NodeRead> {
        const r = await readRemoteNode({...remote, signal, mode: req.mode}, name, {
          servicesOnly: req.servicesOnly,
          refsPerPort: req.refsPerPort,
          cluster: [objects],
        })
        return {state: r.state, facts: r.collection.facts}
      },
    }))
  }
  const {readFleetIndex, fleetDirSources} = await import('../../readers/fleet.js')
  const index = await readFleetIndex(input.dir)
  return fleetDirSources(input.dir, index, req)
}

/**
 * Runs `work` over the nodes with at most `parallel` at once. SIGINT/SIGTERM stop it: running
 * nodes are told to stop (and given a moment to remove partial files), then the run ends with
 * LIVE_INTERRUPTED (exit 130) unless `onInterrupt` returns first.
 */
export async function runWithInterrupt<N extends {name: string}, T>(
  nodes: readonly N[],
  work: (node: N, signal: AbortSignal) => Promise<T>,
  flags: FleetRunFlags,
  verb: string,
): Promise<{outcomes: NodeOutcome<T>[]; interrupted: boolean}> {
  const {runFleet} = await import('../../live/fleet/runner.js')
  const controller = new AbortController()
  const stop = () => controller.abort()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  const progress = fleetProgress(process.stderr, verb)
  try {
    return await runFleet(nodes, work, {
      parallel: flags.parallel,
      timeoutMs: flags.nodeTimeout * 1000,
      signal: controller.signal,
      onEvent: progress.onEvent,
    })
  } finally {
    progress.end()
    process.removeListener('SIGINT', stop)
    process.removeListener('SIGTERM', stop)
  }
}

export function interruptedError(finished: number, total: number): KpError {
  return new KpError(
    `stopped after ${finished} of ${total} node(s); unfinished nodes were abandoned`,
    'LIVE_INTERRUPTED',
    'interrupted',
  )
}

export interface FleetAnswers<T> {
  nodes: FleetNode[]
  /** What `use` made of each node that could be read, in node order. */
  answers: Array<{node: string; value: T}>
}

/**
 * Reads every node and hands its state to `use` as soon as it is read, so that a large fleet is
 * never held whole unless `use` keeps it. A node that cannot be read (or of which nothing could
 * be read) is a failed FleetNode, not the end of the run.
 */
export async function readFleet<T>(
  sources: NodeSource[],
  flags: FleetRunFlags,
  use: (node: string, read: NodeRead) => T | Promise<T>,
): Promise<FleetAnswers<T>> {
  const sorted = [...sources].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const work = async (s: NodeSource, signal: AbortSignal) => {
    const read = await s.read(signal)
    const state = read.state
    const completeness = completenessOf(state)
    const firstError = state.diagnostics.find((d) => d.severity === 'error')
    if (completeness === 'unreadable' && firstError)
      throw new NodeUnavailable(formatDiagnostic(firstError), firstError.code)
    if (flags.verbose)
      for (const d of state.diagnostics)
        process.stderr.write(
          `kp: ${escapeControl(s.name)}: ${d.severity}: ${escapeControl(formatDiagnostic(d))} [${d.code}]\n`,
        )
    return {complete: completeness === 'complete', value: await use(s.name, read)}
  }
  const run = await runWithInterrupt(sorted, work, flags, 'reading')
  if (run.interrupted) throw interruptedError(run.outcomes.length, sorted.length)
  const nodes: FleetNode[] = []
  const answers: FleetAnswers<T>['answers'] = []
  for (const o of run.outcomes) {
    if (!o.ok) {
      nodes.push({name: o.node, ok: false, complete: false, error: o.error, code: o.code})
      continue
    }
    nodes.push({name: o.node, ok: true, complete: o.value.complete, error: null, code: null})
    answers.push({node: o.node, value: o.value.value})
  }
  return {nodes, answers}
}

/**
 * How a fleet answer ends: nodes that failed make it 4 (listed on stderr), nodes read in part 3,
 * else `found` when the answer found something. The answer itself is printed all the same.
 */
export function fleetExit(nodes: FleetNode[], found: boolean): ExitName {
  const failed = nodes.filter((n) => !n.ok)
  if (failed.length > 0) {
    process.stderr.write(
      `kp: ${failed.length} of ${nodes.length} node(s) could not be read [LIVE_FLEET_PARTIAL]:\n`,
    )
    for (const n of failed)
      process.stderr.write(
        `kp:   ${escapeControl(n.name)}: ${escapeControl(shortError(n.error ?? ''))} [${n.code ?? ''}]\n`,
      )
    return 'environment'
  }
  const partial = nodes.filter((n) => !n.complete)
  if (partial.length > 0) {
    process.stderr.write(
      `kp: input is incomplete on ${partial.length} node(s): ${partial.map((n) => escapeControl(n.name)).join(', ')} (--verbose lists the errors)\n`,
    )
    return 'input'
  }
  return found ? 'found' : 'ok'
}

export function setFleetExit(name: ExitName): void {
  process.exitCode = EXIT[name].code
}
