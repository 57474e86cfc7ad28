/**
 * Runs one piece of work per node of a fleet: at most `parallel` at once, each within its own
 * time limit, all stopped when `signal` aborts (Ctrl-C). One node's failure is its outcome, never
 * the run's: a platform team checking 300 nodes wants the 297 answers and the 3 reasons.
 */
import {KpError} from '../../errors.js'
import {NodeUnavailable} from '../../readers/fleet.js'

/** A node's result: its value, or why there is none (with a catalogue code). */
export type NodeOutcome<T> =
  | {node: string; ok: true; value: T; ms: number}
  | {node: string; ok: false; error: string; code: string; ms: number}

export interface FleetRun<T> {
  /** One per node, in the order the nodes were given; nodes never started are left out. */
  outcomes: NodeOutcome<T>[]
  /** The run was stopped by `signal` before every node was done. */
  interrupted: boolean
}

/** What a progress display hears: a node started, finished or failed. */
export interface FleetEvent {
  kind: 'start' | 'done' | 'failed'
  node: string
  /** Nodes finished so far (done or failed), this one included. */
  finished: number
  failed: number
  total: number
  /** For 'failed': why. */
  error?: string
}

export interface FleetRunOptions {
  /** At most this many nodes at once (>= 1). */
  parallel: number
  /** Each node's work is stopped after this long and counts as failed (LIVE_TIMEOUT). */
  timeoutMs: number
  /** Aborting it stops the run: no node starts after, running ones are told to stop. */
  signal?: AbortSignal
  onEvent?: (e: FleetEvent) => void
  /** How long a stopped node's work may take to clean up (remove its partial files) after a stop. */
  graceMs?: number
}

const DEFAULT_GRACE_MS = 5000

class Stopped extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message)
  }
}

/** Why the work of a node failed, as one line and a code. */
function failureOf(error: unknown): {error: string; code: string} {
  if (error instanceof KpError || error instanceof NodeUnavailable || error instanceof Stopped)
    return {error: error.message, code: error.code}
  return {error: (error as Error)?.message ?? String(error), code: 'LIVE_FLEET_PARTIAL'}
}

export async function runFleet<N extends {name: string}, T>(
  nodes: readonly N[],
  work: (node: N, signal: AbortSignal) => Promise<T>,
  opts: FleetRunOptions,
): Promise<FleetRun<T>> {
  const outcomes: Array<NodeOutcome<T> | undefined> = Array.from({length: nodes.length})
  // Work that was abandoned (timed out or stopped) but may still be removing its files.
  const settling: Array<Promise<unknown>> = []
  const total = nodes.length
  let next = 0
  let finished = 0
  let failed = 0
  const stopped = (): boolean => opts.signal?.aborted === true

  const runOne = async (i: number): Promise<void> => {
    const node = nodes[i]!
    const started = Date.now()
    opts.onEvent?.({kind: 'start', node: node.name, finished, failed, total})
    const controller = new AbortController()
    let onStop: (() => void) | undefined
    const cut = new Promise<never>((_, reject) => {
      const timer = setTimeout(() => {
        const e = new Stopped(
          `timed out after ${Math.round(opts.timeoutMs / 1000)} s`,
          'LIVE_TIMEOUT',
        )
        controller.abort(e)
        reject(e)
      }, opts.timeoutMs)
      onStop = () => {
        const e = new Stopped('stopped (interrupted)', 'LIVE_INTERRUPTED')
        controller.abort(e)
        reject(e)
      }
      opts.signal?.addEventListener('abort', onStop, {once: true})
      // Aborted at the latest in `finally`: the timer never outlives the node's work.
      controller.signal.addEventListener('abort', () => clearTimeout(timer), {once: true})
    })
    cut.catch(() => {})
    const job = work(node, controller.signal)
    try {
      const value = await Promise.race([job, cut])
      outcomes[i] = {node: node.name, ok: true, value, ms: Date.now() - started}
      finished++
      opts.onEvent?.({kind: 'done', node: node.name, finished, failed, total})
    } catch (error) {
      // Stopped (timeout, Ctrl-C): the work may have failed first, as it was told to stop.
      const stoppedBy = controller.signal.aborted ? (controller.signal.reason as unknown) : null
      if (stoppedBy instanceof Stopped) settling.push(job.catch(() => {}))
      const f = failureOf(stoppedBy instanceof Stopped ? stoppedBy : error)
      outcomes[i] = {node: node.name, ok: false, ...f, ms: Date.now() - started}
      finished++
      failed++
      opts.onEvent?.({kind: 'failed', node: node.name, finished, failed, total, error: f.error})
    } finally {
      if (onStop) opts.signal?.removeEventListener('abort', onStop)
      if (!controller.signal.aborted) controller.abort()
    }
  }

  const lane = async (): Promise<void> => {
    while (!stopped() && next < nodes.length) await runOne(next++)
  }
  const lanes = Math.max(1, Math.min(opts.parallel, nodes.length))
  await Promise.all(Array.from({length: lanes}, lane))
  if (settling.length > 0) {
    // Give stopped work its chance to remove what it half wrote, but never hang on it.
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled(settling),
      new Promise((resolve) => {
        timer = setTimeout(resolve, opts.graceMs ?? DEFAULT_GRACE_MS)
      }),
    ])
    clearTimeout(timer)
  }
  return {
    outcomes: outcomes.filter((o): o is NodeOutcome<T> => o !== undefined),
    interrupted: stopped(),
  }
}
