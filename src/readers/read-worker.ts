/**
 * The worker-thread side of ./read-in-worker.ts: reads one node's files (kp diff's B) and posts
 * back the state as JSON text. Never throws to its parent: an InputError is posted as data, any
 * other failure as `failed`, and the parent then reads the input itself.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {encodeState} from '../core/port-codec.js'
import {InputError} from '../errors.js'
import {readFiles, type FileReadRequest} from './read-state.js'
import type {WorkerReply} from './read-in-worker.js'

const port = parentPort
if (port) {
  let reply: WorkerReply
  let transfer: ArrayBuffer[] = []
  try {
    const read = await readFiles(workerData as FileReadRequest)
    // The service ports as codes (src/core/port-codec.ts), the rest of the state as JSON text: the
    // main thread then makes only the ports it finds different from A's (src/analyze/diff.ts
    // diffEncoded). The codes' buffers are handed over, not copied. (JSON of the whole state was
    // ~80-95 ms of JSON.parse on the busy main thread for the 10,000-service nft listing, V8's
    // structured clone of the object ~840 ms.)
    const {state, ports} = encodeState(read.state)
    reply = {kind: 'read', json: JSON.stringify({...read, state}), ports}
    transfer = [ports.codes.buffer, ports.offsets.buffer]
  } catch (error) {
    reply =
      error instanceof InputError
        ? {
            kind: 'input-error',
            message: error.message,
            code: error.code,
            hints: error.hints,
            diagnostics: error.diagnostics,
          }
        : {kind: 'failed', reason: error instanceof Error ? error.message : String(error)}
  }
  port.postMessage(reply, transfer)
}
