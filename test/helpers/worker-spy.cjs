// Preloaded into kp (NODE_OPTIONS=--require) by test/commands/diff-worker.test.ts: records each
// worker thread kp starts, and can make kp's read worker crash, to test what kp does then.
//   KP_SPY_LOG    file to append to: `started <entry URL>` per worker
//   KP_SPY_CRASH  throw | exit | async: in kp's read worker (the one whose workerData has
//                 `files`), throw while starting, exit without replying, or throw after starting
// Plain CommonJS: it runs before kp's own (ESM) modules, on every thread.
const wt = require('node:worker_threads')
const fs = require('node:fs')

const log = process.env.KP_SPY_LOG
if (wt.isMainThread) {
  const Original = wt.Worker
  wt.Worker = class SpiedWorker extends Original {
    constructor(entry, options) {
      super(entry, options)
      if (log) fs.appendFileSync(log, `started ${String(entry)}\n`)
    }
  }
  // `import {Worker} from 'node:worker_threads'` in kp's ESM modules sees the spied class.
  require('node:module').syncBuiltinESMExports()
} else if (wt.workerData && Array.isArray(wt.workerData.files)) {
  const crash = process.env.KP_SPY_CRASH
  if (crash === 'throw') throw new Error('worker-spy: crash while starting')
  if (crash === 'exit') process.exit(0)
  if (crash === 'async')
    setImmediate(() => {
      throw new Error('worker-spy: crash after starting')
    })
}
