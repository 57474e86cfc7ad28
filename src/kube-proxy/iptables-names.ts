/**
 * kube-proxy's iptables chain-name hashes (spec §2.6, pkg/proxy/iptables/proxier.go
 * portProtoHash / servicePortEndpointChainName):
 *
 *   KUBE-SVC-/SVL-/EXT-/FW-/XLB- + base32(sha256(SPN + proto))[0:16]
 *   KUBE-SEP-                    + base32(sha256(SPN + proto + endpoint))[0:16]
 *
 * SPN is `ns/name:port` (`ns/name` for an unnamed port), proto lowercase, endpoint `ip:port` or
 * `[v6]:port`; plain concatenation, RFC 4648 standard base32, no padding reached in 16 chars.
 * The readers check these names and the renderer writes them: one implementation for both.
 */
import * as crypto from 'node:crypto'

const RFC4648_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 §6 base32 with the standard alphabet, without padding. */
export function base32(bytes: Uint8Array): string {
  let out = ''
  let buffer = 0
  let bits = 0
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte
    bits += 8
    while (bits >= 5) {
      bits -= 5
      out += RFC4648_ALPHABET[(buffer >>> bits) & 31]
    }
    buffer &= (1 << bits) - 1
  }
  if (bits > 0) out += RFC4648_ALPHABET[(buffer << (5 - bits)) & 31]
  return out
}

// A reader checks the hash of every chain of a dump (110,000 on a 10,000-service node):
// crypto.hash (Node >= 20.12; package.json allows any Node 20, hence the fallback) is one call
// without a Hash object, and a latin1 ('binary') digest string, one character per byte, costs
// less than a Buffer allocated outside the heap per digest.
const sha256: (input: string) => string =
  typeof crypto.hash === 'function'
    ? (input) => crypto.hash('sha256', input, 'binary')
    : (input) => crypto.createHash('sha256').update(input, 'utf8').digest('binary')

const ALPHABET_CODES = Array.from(RFC4648_ALPHABET, (c) => c.charCodeAt(0))
/** The 16 character codes of the hash being made: one string at the end instead of one per character. */
const HASH16_CODES: number[] = new Array<number>(16).fill(0)

/** base32(sha256(input))[0:16]: the first 80 bits of the digest, 5 bits per character. */
function hash16(input: string): string {
  const d = sha256(input)
  let buffer = 0
  let bits = 0
  let n = 0
  for (let i = 0; i < 10; i++) {
    // Never more than 12 bits are waiting, so the buffer stays a small integer.
    buffer = ((buffer << 8) | d.charCodeAt(i)) & 0xfff_ff
    bits += 8
    while (bits >= 5) {
      bits -= 5
      HASH16_CODES[n++] = ALPHABET_CODES[(buffer >>> bits) & 31]!
    }
  }
  return String.fromCharCode.apply(null, HASH16_CODES)
}

/** The 16 characters shared by KUBE-SVC-/SVL-/EXT-/FW-/XLB- of one service port. */
export function iptablesChainHash(servicePortName: string, protocol: string): string {
  return hash16(servicePortName + protocol.toLowerCase())
}

/** The 16 characters of KUBE-SEP- for one endpoint (`ip:port`, or `[v6]:port`). */
export function iptablesEndpointHash(
  servicePortName: string,
  protocol: string,
  endpoint: string,
): string {
  return hash16(servicePortName + protocol.toLowerCase() + endpoint)
}

/** `ip:port` the way Go's net.JoinHostPort writes it (brackets around IPv6). */
export function endpointString(ip: string, port: number | null): string {
  const host = ip.includes(':') ? `[${ip}]` : ip
  return port === null ? host : `${host}:${port}`
}
