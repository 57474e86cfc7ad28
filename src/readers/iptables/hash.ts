/**
 * kube-proxy's iptables chain-name hashes (spec §2.6, pkg/proxy/iptables/proxier.go
 * portProtoHash / servicePortEndpointChainName):
 *
 *   KUBE-SVC-/SVL-/EXT-/FW-/XLB- + base32(sha256(SPN + proto))[0:16]
 *   KUBE-SEP-                    + base32(sha256(SPN + proto + endpoint))[0:16]
 *
 * SPN is `ns/name:port` (`ns/name` for an unnamed port), proto lowercase, endpoint `ip:port` or
 * `[v6]:port`; plain concatenation, RFC 4648 standard base32, no padding reached in 16 chars.
 * Exported for the renderer, which writes the same names.
 */
import {createHash} from 'node:crypto'

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

function hash16(input: string): string {
  return base32(createHash('sha256').update(input, 'utf8').digest()).slice(0, 16)
}

/** The 16 characters shared by KUBE-SVC-/SVL-/EXT-/FW-/XLB- of one service port. */
export function iptablesChainHash(servicePortName: string, protocol: string): string {
  return hash16(servicePortName + protocol.toLowerCase())
}

/** The 16 characters of KUBE-SEP- for one endpoint (`ip:port`, or `[v6]:port`). */
export function iptablesEndpointHash(servicePortName: string, protocol: string, endpoint: string): string {
  return hash16(servicePortName + protocol.toLowerCase() + endpoint)
}

/** `ip:port` the way Go's net.JoinHostPort writes it (brackets around IPv6). */
export function endpointString(ip: string, port: number | null): string {
  const host = ip.includes(':') ? `[${ip}]` : ip
  return port === null ? host : `${host}:${port}`
}
