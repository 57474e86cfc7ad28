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

/**
 * An address or prefix as a CIDR: a bare address becomes /32 or /128. Dumps write a one-address
 * range without its prefix length (iptables-save's `-s 198.51.100.7/32` is read as the address,
 * nft and ipset print it bare), while the model's sourceRanges and podCIDRs are CIDRs.
 */
export function toCidr(text: string): string {
  if (text.includes('/')) return text
  return text.includes(':') ? `${text}/128` : `${text}/32`
}
