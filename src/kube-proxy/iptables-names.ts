/**
 * kube-proxy's iptables chain-name hashes (docs/kube-proxy-layouts.md §2.6, pkg/proxy/iptables/proxier.go
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
import {joinHostPort} from '../core/address.js'

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
  return joinHostPort(ip, port)
}

// ---------------------------------------------------------------------------------------------
// The chains of kube-proxy's iptables mode (pkg/proxy/iptables/proxier.go); IPVS mode shares the
// ones it names alike (KUBE-SERVICES, KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-FORWARD, ...).

/** Every chain kube-proxy and kubelet write starts so. */
export const KUBE_CHAIN_PREFIX = 'KUBE-'
export const KUBE_SERVICES = 'KUBE-SERVICES'
export const KUBE_EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES'
export const KUBE_NODEPORTS = 'KUBE-NODEPORTS'
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING'
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ'
export const KUBE_FORWARD = 'KUBE-FORWARD'
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL'
export const KUBE_PROXY_CANARY = 'KUBE-PROXY-CANARY'
/** KUBE-MARK-MASQ and kubelet's KUBE-MARK-DROP. */
export const KUBE_MARK_PREFIX = 'KUBE-MARK-'
// kubelet's chains (pkg/kubelet/kubelet_network_linux.go), which kube-proxy jumped to until 1.28.
export const KUBE_MARK_DROP = 'KUBE-MARK-DROP'
export const KUBE_FIREWALL = 'KUBE-FIREWALL'
export const KUBE_KUBELET_CANARY = 'KUBE-KUBELET-CANARY'

/** servicePortPolicyClusterChain: the cluster endpoints' cascade. */
export const SVC_CHAIN_PREFIX = 'KUBE-SVC-'
/** servicePortPolicyLocalChainName: the local endpoints' cascade. */
export const SVL_CHAIN_PREFIX = 'KUBE-SVL-'
/** serviceExternalChainName: external traffic, before the policy chain. */
export const EXT_CHAIN_PREFIX = 'KUBE-EXT-'
/** serviceFirewallChainName: loadBalancerSourceRanges. */
export const FW_CHAIN_PREFIX = 'KUBE-FW-'
/** Before 1.24 the local chain of an externalTrafficPolicy=Local service. */
export const XLB_CHAIN_PREFIX = 'KUBE-XLB-'
/** servicePortEndpointChainName: one endpoint's DNAT. */
export const SEP_CHAIN_PREFIX = 'KUBE-SEP-'
/** The chains of one service port, all named by iptablesChainHash. */
export const SERVICE_CHAIN_PREFIXES = [
  SVC_CHAIN_PREFIX,
  SVL_CHAIN_PREFIX,
  EXT_CHAIN_PREFIX,
  FW_CHAIN_PREFIX,
  XLB_CHAIN_PREFIX,
] as const
/** Every per-service and per-endpoint chain prefix. */
export const PER_SERVICE_CHAIN_PREFIXES = [...SERVICE_CHAIN_PREFIXES, SEP_CHAIN_PREFIX] as const

/** The chains kube-proxy writes for one service port (proxier.go's names for them). */
export interface ServicePortChains {
  clusterPolicyChain: string
  localPolicyChain: string
  externalChain: string
  firewallChain: string
}

export function servicePortChains(servicePortName: string, protocol: string): ServicePortChains {
  const hash = iptablesChainHash(servicePortName, protocol)
  return {
    clusterPolicyChain: SVC_CHAIN_PREFIX + hash,
    localPolicyChain: SVL_CHAIN_PREFIX + hash,
    externalChain: EXT_CHAIN_PREFIX + hash,
    firewallChain: FW_CHAIN_PREFIX + hash,
  }
}

/** KUBE-SEP- of one endpoint (`ip:port`, or `[v6]:port`). */
export function endpointChainName(
  servicePortName: string,
  protocol: string,
  endpoint: string,
): string {
  return SEP_CHAIN_PREFIX + iptablesEndpointHash(servicePortName, protocol, endpoint)
}

/** kubelet's chains: on every node whatever the proxy, so no evidence of kube-proxy. */
export const KUBELET_CHAINS = [KUBE_KUBELET_CANARY, KUBE_FIREWALL, KUBE_MARK_DROP] as const
