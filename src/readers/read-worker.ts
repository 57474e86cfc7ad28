/**
 * The worker-thread side of ./read-in-worker.ts: reads one node's files (kp diff's B) and posts
 * back the state as JSON text. Never throws to its parent: an InputError is posted as data, any
 * other failure as `failed`, and the parent then reads the input itself.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {InputError} from '../errors.js'
import {readFiles, type FileReadRequest} from './read-state.js'
import type {WorkerReply} from './read-in-worker.js'

const port = parentPort
if (port) {
  let reply: WorkerReply
  try {
    const read = await readFiles(workerData as FileReadRequest)
    // JSON text, not the object: V8's structured clone of a 10,000-service state takes ~840 ms
    // to deserialize on the main thread, JSON.parse ~400 ms. The stringify (~200 ms) runs here,
    // in parallel with the main thread's own read. A string is also cheaper to receive than a
    // transferred Buffer of the UTF-8 bytes: copying it in costs the busy main thread ~80 ms,
    // decoding the Buffer there ~150 ms (measured on a 24 MB state; see read-in-worker.ts).
    reply = {kind: 'read', json: JSON.stringify(read)}
  } catch (error) {
    reply =
      error instanceof InputError
        ? {kind: 'input-error', message: error.message, code: error.code, hints: error.hints, diagnostics: error.diagnostics}
        : {kind: 'failed', reason: error instanceof Error ? error.message : String(error)}
  }
  port.postMessage(reply)
}
