/**
 * ipaddr.js, loaded with `require`. An ESM `import` of a CommonJS package makes Node scan the
 * package's source for its export names (cjs-module-lexer); ipaddr.js is 38 KB, the scan made
 * the lexer hot, and V8's background compile of it (~60 ms) was then waited for at every kp
 * process's exit (docs/benchmarks.md). Import ipaddr from here, not from 'ipaddr.js'
 * (test/core/ipaddr.test.ts checks).
 */
import {createRequire} from 'node:module'
import type IpAddr from 'ipaddr.js'

export const ipaddr: typeof IpAddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr
