/**
 * Reading one input in a worker thread while the main thread reads another: `kp diff A B` reads
 * B here (./read-worker.ts) while it reads A itself, so on a two-core machine the command takes
 * about max(A, B) plus the transfer instead of A + B.
 *
 * The state comes back in two parts: its service ports as 16-bit codes in buffers handed over
 * without a copy (src/core/port-codec.ts), the rest (node, sources, diagnostics, foreign) as JSON
 * text. `kp diff` compares A's ports with the codes and makes objects only of the B ports that
 * differ (src/analyze/diff.ts diffEncoded). For the bench's 10,000-service nft listing the whole
 * state as JSON was 13 MB and ~80–95 ms of JSON.parse on the main thread, plus the copy in and the
 * comparison of 10,000 equal pairs: together ~0.3–0.45 s after the main thread's own read, against
 * ~0.1 s now (docs/benchmarks.md). V8's structured clone of the object would cost ~840 ms.
 * Reading the same state from its dump costs 1 to 3 s. A worker's start-up costs tens of ms and
 * its own heap, so it is used only for large plain files and folders (workerPaysOff); everything
 * else is read on the main thread as before.
 */
import {readdir, stat} from 'node:fs/promises'
import {join} from 'node:path'
import {Worker} from 'node:worker_threads'
import type {EncodedPorts, EncodedState} from '../core/port-codec.js'
import {InputError} from '../errors.js'
import type {Diagnostic} from '../model/types.js'
import type {BundleFacts} from './bundle.js'
import type {FileRead, FileReadRequest} from './read-state.js'

/** What the worker posts back (one message, then it ends). */
export type WorkerReply =
  | {kind: 'read'; /** FileRead with no service ports. */ json: string; ports: EncodedPorts}
  | {kind: 'input-error'; message: string; code: string; hints: string[]; diagnostics: Diagnostic[]}
  | {kind: 'failed'; reason: string}

/**
 * How a worker read ended. `failed`: the worker crashed or could not start (a bug, or no
 * threads); the caller reads the input on the main thread instead, which fails, if it does,
 * exactly as it would have without the worker.
 */
export type WorkerOutcome =
  | {kind: 'read'; state: EncodedState; facts: BundleFacts | null}
  | {kind: 'input-error'; error: InputError}
  | {kind: 'failed'; reason: string}

export interface WorkerRead {
  /** Settles once; never rejects. */
  readonly outcome: Promise<WorkerOutcome>
  /** Stops the worker (when its result is no longer wanted) and lets the process exit without it. */
  cancel(): void
}

/** Overrides the size threshold (bytes): 0 forces the worker on, e.g. for tests; a huge number turns it off. */
export const WORKER_MIN_BYTES_ENV = 'KP_DIFF_WORKER_MIN_BYTES'

/**
 * Both inputs must hold at least this many bytes: the smaller one counts, not the sum. The worker
 * pays off only when the main thread has a read of its own to overlap with the worker's: with a
 * small A it just waits for B's read plus the stringify and the transfer, which is slower than
 * reading B itself. `kp diff` of generated iptables-save dumps against their `kp migrate`
 * nftables text, median of 5 runs, worker on vs off, on the 2-core bench machine:
 *   2,000 services (6.6 MB + 9.2 MB):   1.40 s vs 1.36 s (no gain)
 *   3,000 services (9.9 MB + 13.8 MB):  1.76 s vs 1.88 s
 *   250 services (0.8 MB) vs 10,000 (46 MB): 3.30 s vs 2.88 s (a sum threshold would pick this)
 *   10,000 services (33 MB + 46 MB):    4.28 s vs 5.65 s (median of 3)
 * The worker's own heap adds ~50 MB (3,000) to ~120 MB (10,000: 517 MB vs 394 MB) to the peak
 * memory.
 */
const DEFAULT_MIN_BYTES = 8 * 1024 * 1024

function minBytes(): number {
  const raw = process.env[WORKER_MIN_BYTES_ENV]
  if (raw === undefined || raw.trim() === '') return DEFAULT_MIN_BYTES
  const n = Number(raw)
  return Number.isNaN(n) || n < 0 ? DEFAULT_MIN_BYTES : n
}

/**
 * The bytes a path holds: a regular file's size, or the regular files of a folder (a bundle or a
 * folder of dumps) and of its sub-folders one level down. null for anything else (stdin, `live`,
 * a pipe such as `<(iptables-save)`, a path that cannot be read): those are read on the main
 * thread, where they are read today, and where an unreadable path gets its usual error.
 */
async function inputBytes(path: string): Promise<number | null> {
  if (path === '-' || path === 'live') return null
  try {
    const st = await stat(path)
    if (st.isFile()) return st.size
    if (!st.isDirectory()) return null
    let total = 0
    for (const entry of await readdir(path, {withFileTypes: true})) {
      const p = join(path, entry.name)
      if (entry.isFile()) total += (await stat(p)).size
      else if (entry.isDirectory()) {
        for (const inner of await readdir(p, {withFileTypes: true}))
          if (inner.isFile()) total += (await stat(join(p, inner.name))).size
      }
    }
    return total
  } catch {
    return null
  }
}

/**
 * Whether reading `second` in a worker while `first` is read here is worth a thread: both are
 * plain files or folders of at least the threshold's size, and no `--cluster` input is stdin
 * (which can be read only once, by one thread).
 */
export async function workerPaysOff(
  first: string,
  second: string,
  cluster: string[] = [],
): Promise<boolean> {
  if (cluster.includes('-')) return false
  const [a, b] = await Promise.all([inputBytes(first), inputBytes(second)])
  if (a === null || b === null) return false
  return Math.min(a, b) >= minBytes()
}

/**
 * The worker's entry, next to this module: read-worker.js when built; run from source (bin/dev.js,
 * vitest), read-worker-tsx.mjs, which registers tsx in the worker and loads read-worker.ts.
 */
function workerEntry(): URL {
  return new URL(
    import.meta.url.endsWith('.ts') ? './read-worker-tsx.mjs' : './read-worker.js',
    import.meta.url,
  )
}

function decode(reply: WorkerReply): WorkerOutcome {
  switch (reply.kind) {
    case 'read': {
      const read = JSON.parse(reply.json) as FileRead
      return {kind: 'read', state: {state: read.state, ports: reply.ports}, facts: read.facts}
    }
    case 'input-error':
      return {
        kind: 'input-error',
        error: new InputError(reply.message, reply.code, reply.hints, reply.diagnostics),
      }
    case 'failed':
      return reply
  }
}

/** Starts reading `request` in a worker thread. */
export function readInWorker(request: FileReadRequest): WorkerRead {
  let worker: Worker
  try {
    // The worker's stdout and stderr are ours to read, and are dropped: whatever it might print
    // (a warning, a crash) must not change kp's output, which the main thread alone writes.
    worker = new Worker(workerEntry(), {workerData: request, stdout: true, stderr: true})
  } catch (error) {
    return {outcome: Promise.resolve({kind: 'failed', reason: String(error)}), cancel: () => {}}
  }
  worker.stdout.resume()
  worker.stderr.resume()
  const stop = (): void => {
    worker.unref()
    void worker.terminate()
  }
  const outcome = new Promise<WorkerOutcome>((resolve) => {
    worker.once('message', (reply: WorkerReply) => {
      // Its work is done: free its heap now rather than when it winds down by itself.
      stop()
      try {
        resolve(decode(reply))
      } catch (error) {
        resolve({kind: 'failed', reason: `unreadable reply: ${String(error)}`})
      }
    })
    worker.once('messageerror', (error) => {
      stop()
      resolve({kind: 'failed', reason: `unreadable reply: ${error.message}`})
    })
    // An uncaught exception in the worker (a bug). Listening here also keeps it from being printed.
    worker.on('error', (error) => {
      stop()
      resolve({kind: 'failed', reason: error.message})
    })
    // Ended without a reply (terminated, or process.exit in the worker): settles only if nothing else did.
    worker.once('exit', (code) =>
      resolve({kind: 'failed', reason: `worker exited with code ${code} without a reply`}),
    )
  })
  return {outcome, cancel: stop}
}
