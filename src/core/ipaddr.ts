/**
 * Transitional (issue #20): src/readers/iptables/parse.ts and build.ts still import these from
 * here; once they import from ./address.ts this file goes. Use ./address.ts everywhere else.
 */
import {createRequire} from 'node:module'
import type IpAddr from 'ipaddr.js'

/** ipaddr.js loaded with `require`, as ./address.ts loads it (its header says why). */
export const ipaddr: typeof IpAddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr

export {toCidr} from './address.js'
