/**
 * kube-proxy's nftables chain-name hash (pkg/proxy/nftables/proxier.go, hashAndTruncate;
 * reference/kube-proxy-iptables-nftables.md §3.6): the first 8 characters of the standard
 * base32 encoding of sha256(name), then `-` and the name itself, cut to 237 characters plus
 * "..." when longer than 240. Exported for the nftables renderer.
 */
import * as crypto from 'node:crypto'

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

// crypto.hash (Node >= 20.12) is one call without a Hash object, which matters for dumps with
// 100,000+ names; package.json allows any Node 20, so fall back to createHash.
const sha256: (name: string) => Buffer =
  typeof crypto.hash === 'function' ? (name) => crypto.hash('sha256', name, 'buffer') : (name) => crypto.createHash('sha256').update(name).digest()

/** base32std(sha256(name))[0:8]: the first 40 bits of the digest, 5 bits per character. */
export function nftNameHash(name: string): string {
  const d = sha256(name)
  let bits = 0
  for (let i = 0; i < 5; i++) bits = bits * 256 + d[i]!
  let out = ''
  for (let i = 7; i >= 0; i--) out += BASE32[Math.floor(bits / 2 ** (i * 5)) % 32]
  return out
}

/** `HASH8-name`, truncated like kube-proxy when it exceeds 240 characters. */
export function hashAndTruncate(name: string): string {
  const full = `${nftNameHash(name)}-${name}`
  return full.length > 240 ? full.slice(0, 237) + '...' : full
}

/** The base of a service port's chains: `ns/svc/proto/portName` (portName may be ""). */
export function servicePortBaseName(namespace: string, name: string, protocol: string, portName: string): string {
  return `${namespace}/${name}/${protocol.toLowerCase()}/${portName}`
}

/** The base of an endpoint's chain and affinity set; IPv6 `:` become `.`, no brackets. */
export function endpointBaseName(serviceBase: string, ip: string, port: number): string {
  return `${serviceBase}__${ip.replaceAll(':', '.')}/${port}`
}
