// The worker entry when kp runs from source (bin/dev.js, vitest): tsx compiles TypeScript only on
// the main thread, so the worker registers it before it loads read-worker.ts. Plain JavaScript,
// so that it needs no compiling itself; the build (dist/) starts read-worker.js directly.
import {register} from 'tsx/esm/api'

register()
await import('./read-worker.ts')
