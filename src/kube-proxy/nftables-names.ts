/**
 * kube-proxy's nftables chain-name hash (pkg/proxy/nftables/proxier.go, hashAndTruncate;
 * docs/kube-proxy-layouts.md §3.6): the first 8 characters of the standard
 * base32 encoding of sha256(name), then `-` and the name itself, cut to 237 characters plus
 * "..." when longer than 240. The reader checks these names and the renderer writes them.
 */
import * as crypto from 'node:crypto'

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

// crypto.hash (Node >= 20.12) is one call without a Hash object, which matters when every chain
// name of a large table is checked; package.json allows any Node 20, so fall back to createHash.
// The digest comes as a latin1 string, one character per byte: cheaper than a Buffer, whose
// memory is allocated outside the heap one digest at a time.
const sha256: (name: string) => string =
  typeof crypto.hash === 'function'
    ? (name) => crypto.hash('sha256', name, 'binary')
    : (name) => crypto.createHash('sha256').update(name).digest('binary')

/** base32std(sha256(name))[0:8]: the first 40 bits of the digest, 5 bits per character. */
export function nftNameHash(name: string): string {
  const d = sha256(name)
  let out = ''
  for (let i = 0; i < 8; i++) out += BASE32[base32Digit(d, i)]
  return out
}

/** Whether nftNameHash(name) is `hash`, without making the string (a reader checks every name of a dump). */
export function nftNameHashIs(name: string, hash: string): boolean {
  if (hash.length !== 8) return false
  const d = sha256(name)
  for (let i = 0; i < 8; i++)
    if (BASE32.charCodeAt(base32Digit(d, i)) !== hash.charCodeAt(i)) return false
  return true
}

/** The i-th 5-bit group (0..7) of the first 40 bits of the digest (latin1: one character per byte). */
function base32Digit(digest: string, i: number): number {
  const bit = i * 5
  const byte = bit >> 3
  // The two bytes the group may span, as one 16-bit number; the group ends at bit `shift` from the right.
  const pair = (digest.charCodeAt(byte) << 8) | digest.charCodeAt(byte + 1)
  const shift = 11 - (bit & 7)
  return (pair >> shift) & 31
}

/** `HASH8-name`, truncated like kube-proxy when it exceeds 240 characters. */
export function hashAndTruncate(name: string): string {
  const full = `${nftNameHash(name)}-${name}`
  return full.length > 240 ? full.slice(0, 237) + '...' : full
}

/** The base of a service port's chains: `ns/svc/proto/portName` (portName may be ""). */
export function servicePortBaseName(
  namespace: string,
  name: string,
  protocol: string,
  portName: string,
): string {
  return `${namespace}/${name}/${protocol.toLowerCase()}/${portName}`
}

/** The base of an endpoint's chain and affinity set; IPv6 `:` become `.`, no brackets. */
export function endpointBaseName(serviceBase: string, ip: string, port: number): string {
  return `${serviceBase}__${ip.replaceAll(':', '.')}/${port}`
}

// ---------------------------------------------------------------------------------------------
// The objects of kube-proxy's nftables mode (pkg/proxy/nftables/proxier.go), in `table ip
// kube-proxy` and `table ip6 kube-proxy`.

export const NFT_TABLE = 'kube-proxy'

// Sets and maps.
export const CLUSTER_IPS_SET = 'cluster-ips'
export const NODEPORT_IPS_SET = 'nodeport-ips'
export const SERVICE_IPS_MAP = 'service-ips'
export const SERVICE_NODEPORTS_MAP = 'service-nodeports'
export const FIREWALL_IPS_MAP = 'firewall-ips'
export const NO_ENDPOINT_SERVICES_MAP = 'no-endpoint-services'
export const NO_ENDPOINT_NODEPORTS_MAP = 'no-endpoint-nodeports'

// Chains that are not per service.
export const SERVICES_CHAIN = 'services'
export const MASQUERADING_CHAIN = 'masquerading'
export const MARK_FOR_MASQUERADE_CHAIN = 'mark-for-masquerade'
export const REJECT_CHAIN = 'reject-chain'
export const FIREWALL_CHECK_CHAIN = 'firewall-check'
export const SERVICE_ENDPOINTS_CHECK_CHAIN = 'service-endpoints-check'
export const NODEPORT_ENDPOINTS_CHECK_CHAIN = 'nodeport-endpoints-check'
export const CLUSTER_IPS_CHECK_CHAIN = 'cluster-ips-check'

/**
 * The kinds of per-service object, each named `<kind>-HASH-base`: a service port's cluster and
 * local policy chains, external and firewall chains, and an endpoint's chain and affinity set.
 */
export type PerServicePrefix =
  'service' | 'local' | 'external' | 'firewall' | 'endpoint' | 'affinity'
export const NFT_PER_SERVICE_PREFIXES: readonly PerServicePrefix[] = [
  'service',
  'local',
  'external',
  'firewall',
  'endpoint',
  'affinity',
]

/** `<kind>-HASH-base` (hashAndTruncate of the base is HASH-base). */
export function perServiceName(prefix: PerServicePrefix, hashedBase: string): string {
  return `${prefix}-${hashedBase}`
}

// Objects of the 1.36 and 1.37 layouts (docs/kube-proxy-layouts.md §3.10).
export const HAIRPIN_CONNECTIONS_SET = 'hairpin-connections'
export const LOCALHOST_NODEPORT_REJECT_MAP = 'localhost-nodeport-reject-ports'
/** `localhost-nodeport-reject-tcp` etc.: the chain and the named counter of one protocol. */
export const LOCALHOST_NODEPORT_REJECT_PREFIX = 'localhost-nodeport-reject-'
export const LOCALHOST_NODEPORT_REJECTED_PREFIX = 'localhost-nodeport-rejected-'

/**
 * The longest element comment nft takes: kube-proxy 1.37 cuts a service port's `ns/name:port`
 * comment to this many bytes (PR #139516); a longer one made every sync of older releases fail.
 */
export const NFT_COMMENT_MAX_BYTES = 128
