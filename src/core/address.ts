/**
 * Every way kp reads and writes an IP address, a CIDR, a port and `host:port`. Sources disagree
 * on what an address is, and each reader keeps the reading of the program whose output it takes
 * in, so there are four readings here, each named for its users:
 *
 * - the model's (`isIp`, `isCidr`, `isIpOrCidr`): node:net, zone IDs allowed, IPv4 octets without
 *   leading zeros. What a saved state (kp-json) is read back with, and what every reader's result
 *   is checked with (src/readers/valid-addresses.ts), so every state kp writes can be read again.
 * - the canonical one (`parseIp`, `canonicalIp`): node:net's, then one spelling per address (RFC
 *   5952 for IPv6), so `fd00:0::1` typed by a person or shown by ipset matches `fd00::1`.
 * - kube-proxy's (`parseIpSloppy`, `parseCidrSloppy`): k8s.io/utils/net ParseIPSloppy, for the
 *   Service and EndpointSlice fields of the cluster YAML.
 * - the renderers' (`parseAddress`, `addressFamily`, `isAddress`, `isAddressCidr`, `cidrContains`,
 *   ...): decimal octets (leading zeros allowed), no zone IDs, parsed to a bigint; what a
 *   setting must be before a renderer writes it into rules. Nothing here throws.
 *
 * ipaddr.js is loaded with `require`: an ESM `import` of a CommonJS package makes Node scan the
 * package's source for its export names (cjs-module-lexer), and V8's background compile of that
 * was then waited for at every kp process's exit (test/core/address.test.ts checks no one imports it).
 */
import {createRequire} from 'node:module'
import {isIP} from 'node:net'
import type IpAddr from 'ipaddr.js'
import type {Family} from '../model/types.js'

const ipaddr: typeof IpAddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr

// ---------------------------------------------------------------------------------------------
// The model's reading (node:net)

/** An IPv4 or IPv6 address as node:net reads it (zone IDs allowed). */
export function isIp(text: string): boolean {
  return isIP(text) !== 0
}

/** `10.0.0.0/8`, `fd00::/64`: a node:net address and a prefix length its family allows. */
export function isCidr(text: string): boolean {
  return isCidrText(text, false)
}

/** A CIDR or a plain address, as nodePortAddresses holds both. */
export function isIpOrCidr(text: string): boolean {
  return isCidrText(text, true)
}

function isCidrText(text: string, bare: boolean): boolean {
  const slash = text.indexOf('/')
  const version = isIP(slash < 0 ? text : text.slice(0, slash))
  if (version === 0) return false
  if (slash < 0) return bare
  const prefix = text.slice(slash + 1)
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128)
}

/**
 * An address or prefix as a CIDR: a bare address becomes /32 or /128. Dumps write a one-address
 * range without its prefix length (iptables-save's `-s 198.51.100.7/32` is read as the address,
 * nft and ipset print it bare), while the model's sourceRanges and podCIDRs are CIDRs.
 */
export function toCidr(text: string): string {
  if (text.includes('/')) return text
  return text.includes(':') ? `${text}/128` : `${text}/32`
}

// ---------------------------------------------------------------------------------------------
// The canonical reading: one spelling per address

export interface CanonicalIp {
  /** Dotted decimal as written, or RFC 5952 IPv6 (a zone ID kept). */
  ip: string
  family: Family
}

/** A node:net address in its canonical spelling and its family; null when not one (or ipaddr.js cannot read its zone ID). */
export function parseIp(text: string): CanonicalIp | null {
  // Every IPv4 address has a dot and every IPv6 address a colon, and none a slash: `ns/name` is
  // told apart here, before node's isIP compiles its IPv6 pattern (a cost `kp explain NAME` sees).
  if (text.includes('/') || !(text.includes('.') || text.includes(':'))) return null
  const version = isIP(text)
  if (version === 4) return {ip: text, family: 'IPv4'}
  if (version !== 6) return null
  try {
    return {ip: ipaddr.IPv6.parse(text).toRFC5952String(), family: 'IPv6'}
  } catch {
    // node:net takes zone IDs ipaddr.js does not (`fe80::1%eth-0`): no spelling for those.
    return null
  }
}

/** parseIp(text)?.ip: the canonical spelling of an address, or null for text that is not one. */
export function canonicalIp(text: string): string | null {
  return parseIp(text)?.ip ?? null
}

// ---------------------------------------------------------------------------------------------
// kube-proxy's reading (k8s.io/utils/net ParseIPSloppy / ParseCIDRSloppy)

export interface SloppyIp {
  family: Family
  /** Canonical text: dotted decimal without leading zeros, or RFC 5952 IPv6. */
  text: string
  /** The address as bytes (4 or 16), for masking. */
  bytes: number[]
}

export interface SloppyCidr {
  family: Family
  /** Network address and prefix length, e.g. "203.0.113.0/25". */
  text: string
}

const DECIMAL_OCTET = /^[0-9]{1,3}$/

function parseIpv4Sloppy(s: string): number[] | null {
  const parts = s.split('.')
  if (parts.length !== 4) return null
  const out: number[] = []
  for (const p of parts) {
    if (!DECIMAL_OCTET.test(p)) return null
    const n = Number.parseInt(p, 10)
    if (n > 255) return null
    out.push(n)
  }
  return out
}

/**
 * An address the way kube-proxy reads Service and EndpointSlice fields: IPv4 octets may carry
 * leading zeros and are still decimal ("010.0.0.1" is 10.0.0.1, not octal 8.0.0.1), an
 * IPv4-mapped IPv6 address is IPv4, no zone ID; surrounding whitespace ignored. Null when not one.
 */
export function parseIpSloppy(raw: string): SloppyIp | null {
  const s = raw.trim()
  if (s.includes(':')) {
    if (!ipaddr.IPv6.isValid(s) || s.includes('%')) return null
    const v6 = ipaddr.IPv6.parse(s)
    // Go treats an IPv4-mapped IPv6 address (::ffff:a.b.c.d) as IPv4 (IsIPv6String is false).
    if (v6.isIPv4MappedAddress()) {
      const bytes = v6.toIPv4Address().toByteArray()
      return {family: 'IPv4', text: bytes.join('.'), bytes}
    }
    return {family: 'IPv6', text: v6.toRFC5952String(), bytes: v6.toByteArray()}
  }
  const bytes = parseIpv4Sloppy(s)
  return bytes ? {family: 'IPv4', text: bytes.join('.'), bytes} : null
}

/**
 * A CIDR read as parseIpSloppy reads its address, printed as its network address
 * ("203.0.113.000/025" -> "203.0.113.0/25", upstream's TestBadIPs case); null when not one.
 */
export function parseCidrSloppy(raw: string): SloppyCidr | null {
  const s = raw.trim()
  const slash = s.indexOf('/')
  if (slash < 0) return null
  const ip = parseIpSloppy(s.slice(0, slash))
  const lenText = s.slice(slash + 1)
  if (!ip || !/^[0-9]{1,3}$/.test(lenText)) return null
  const prefix = Number.parseInt(lenText, 10)
  const bits = ip.bytes.length * 8
  if (prefix > bits) return null
  const masked = ip.bytes.map((b, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8))
    return b & ((0xff << (8 - keep)) & 0xff)
  })
  const addr = ip.family === 'IPv4' ? masked.join('.') : ipaddr.fromByteArray(masked).toString()
  return {family: ip.family, text: `${addr}/${prefix}`}
}

// ---------------------------------------------------------------------------------------------
// The renderers' reading: decimal octets, no zone IDs, as a bigint

export interface ParsedAddress {
  family: Family
  value: bigint
}

const SHORT_DECIMAL = /^\d{1,3}$/
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/

function parseIPv4(text: string): bigint | null {
  const parts = text.split('.')
  if (parts.length !== 4) return null
  let value = 0n
  for (const part of parts) {
    if (!SHORT_DECIMAL.test(part)) return null
    const n = Number(part)
    if (n > 255) return null
    value = (value << 8n) | BigInt(n)
  }
  return value
}

/**
 * Whether parseIPv4 accepts `text`, without its bigint: four dot-separated groups of one to
 * three decimal digits, each at most 255. A renderer checks every endpoint and frontend address
 * of the state, so this is the common case and kept to one pass over the characters.
 */
function isIPv4(text: string): boolean {
  let dots = 0
  let digits = 0
  let octet = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x2e) {
      if (digits === 0 || octet > 255) return false
      dots++
      digits = 0
      octet = 0
    } else if (c >= 0x30 && c <= 0x39 && digits < 3) {
      octet = octet * 10 + (c - 0x30)
      digits++
    } else {
      return false
    }
  }
  return dots === 3 && digits > 0 && octet <= 255
}

/**
 * The eight groups of an IPv6 address (`::` expanded, an embedded IPv4 tail written as two
 * `0` groups) and that tail; null when `text` is not an IPv6 address.
 */
function ipv6Groups(text: string): {groups: string[]; tailV4: string | null} | null {
  let head = text
  let tailV4: string | null = null
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as the last two groups.
  const lastColon = head.lastIndexOf(':')
  if (lastColon >= 0 && head.slice(lastColon + 1).includes('.')) {
    tailV4 = head.slice(lastColon + 1)
    if (!isIPv4(tailV4)) return null
    head = head.slice(0, lastColon + 1) + '0:0'
  }
  const halves = head.split('::')
  if (halves.length > 2) return null
  const groupsOf = (s: string): string[] => (s === '' ? [] : s.split(':'))
  const left = groupsOf(halves[0] ?? '')
  const right = halves.length === 2 ? groupsOf(halves[1] ?? '') : []
  const missing = 8 - left.length - right.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const groups = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right]
  for (const g of groups) if (!HEX_GROUP.test(g)) return null
  return {groups, tailV4}
}

function parseIPv6(text: string): bigint | null {
  const parsed = ipv6Groups(text)
  if (parsed === null) return null
  let value = 0n
  for (const g of parsed.groups) value = (value << 16n) | BigInt(parseInt(g, 16))
  if (parsed.tailV4 !== null) value = (value & ~0xffffffffn) | (parseIPv4(parsed.tailV4) ?? 0n)
  return value
}

/** The renderers' reading of an address (not a CIDR) as its family and a bigint; null when not one. */
export function parseAddress(text: string): ParsedAddress | null {
  if (text.includes(':')) {
    const v = parseIPv6(text)
    return v === null ? null : {family: 'IPv6', value: v}
  }
  const v = parseIPv4(text)
  return v === null ? null : {family: 'IPv4', value: v}
}

/** The family of an address (not a CIDR), or null when it is neither: parseAddress(text)?.family without the arithmetic. */
export function addressFamily(text: string): Family | null {
  // isIPv4 rejects any ':' itself, so the common IPv4 case scans the text once.
  if (isIPv4(text)) return 'IPv4'
  return text.includes(':') && ipv6Groups(text) !== null ? 'IPv6' : null
}

/** The family of an address or of a CIDR's address (its prefix length unchecked), or null when it is neither. */
export function addressOrCidrFamily(addressOrCidr: string): Family | null {
  const slash = addressOrCidr.indexOf('/')
  return addressFamily(slash >= 0 ? addressOrCidr.slice(0, slash) : addressOrCidr)
}

/** An IPv4 or IPv6 address as the renderers read one, without a prefix length. */
export function isAddress(text: string): boolean {
  return addressFamily(text) !== null
}

/** `10.0.0.0/8`, `fd00::/64`: a renderers' address and a prefix length its family allows. */
export function isAddressCidr(text: string): boolean {
  const slash = text.indexOf('/')
  if (slash < 0) return false
  const family = addressFamily(text.slice(0, slash))
  const prefix = text.slice(slash + 1)
  return (
    family !== null &&
    SHORT_DECIMAL.test(prefix) &&
    Number(prefix) <= (family === 'IPv4' ? 32 : 128)
  )
}

/** Whether `cidr` (or a bare address, taken as a host route) contains `address`. */
export function cidrContains(cidr: string, address: string): boolean {
  const slash = cidr.indexOf('/')
  const net = parseAddress(slash >= 0 ? cidr.slice(0, slash) : cidr)
  const ip = parseAddress(address)
  if (!net || !ip || net.family !== ip.family) return false
  const bits = net.family === 'IPv4' ? 32 : 128
  const prefix = slash >= 0 ? Number(cidr.slice(slash + 1)) : bits
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return false
  const shift = BigInt(bits - prefix)
  return net.value >> shift === ip.value >> shift
}

/** A single host: an address without prefix, or with /32 (IPv4) or /128 (IPv6); that address, or null. */
export function hostAddress(entry: string): string | null {
  const slash = entry.indexOf('/')
  const addr = slash >= 0 ? entry.slice(0, slash) : entry
  const parsed = parseAddress(addr)
  if (!parsed) return null
  if (slash < 0) return addr
  const prefix = entry.slice(slash + 1)
  return prefix === (parsed.family === 'IPv4' ? '32' : '128') ? addr : null
}

/** Whether an address is in 127.0.0.0/8 or is ::1. */
export function isLoopback(address: string): boolean {
  return cidrContains('127.0.0.0/8', address) || cidrContains('::1/128', address)
}

// ---------------------------------------------------------------------------------------------
// Ports and host:port

/** A port written in decimal, 0 to 65535 (0 is a valid ipset bitmap member), or null. */
export function parsePort(text: string | undefined): number | null {
  if (text === undefined || text.length === 0 || text.length > 5) return null
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) return null
  }
  const n = Number(text)
  return n <= 65535 ? n : null
}

export interface HostPort extends CanonicalIp {
  port: number
}

/**
 * `a.b.c.d:port` or `[v6]:port` as ipvsadm prints them with `-n`, the address canonical (parseIp).
 * Null when the address or the port is not numeric, or when brackets and family disagree.
 */
export function parseHostPort(text: string): HostPort | null {
  let host: string
  let portText: string
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0 || text[close + 1] !== ':') return null
    host = text.slice(1, close)
    portText = text.slice(close + 2)
  } else {
    const colon = text.lastIndexOf(':')
    if (colon < 0) return null
    host = text.slice(0, colon)
    portText = text.slice(colon + 1)
  }
  const ip = parseIp(host)
  const port = parsePort(portText)
  if (!ip || port === null) return null
  // `[10.0.0.1]:80` or a bare `fd00::1:80` is not how ipvsadm writes either family.
  if ((ip.family === 'IPv6') !== text.startsWith('[')) return null
  return {...ip, port}
}

/**
 * `10.0.0.1:80` or `[fd00::1]:80` -> {ip, port}; `10.0.0.1` or a bare IPv6 address -> port null.
 * The address is not checked (a DNAT target as nft prints it); null only when a port is there
 * but not one (parsePort).
 */
export function splitHostPort(text: string): {ip: string; port: number | null} | null {
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0) return null
    const ip = text.slice(1, close)
    const rest = text.slice(close + 1)
    if (rest === '') return {ip, port: null}
    if (!rest.startsWith(':')) return null
    const port = parsePort(rest.slice(1))
    return port === null ? null : {ip, port}
  }
  const colon = text.indexOf(':')
  if (colon < 0) return {ip: text, port: null}
  if (text.indexOf(':', colon + 1) >= 0) return {ip: text, port: null}
  const port = parsePort(text.slice(colon + 1))
  return port === null ? null : {ip: text.slice(0, colon), port}
}

/**
 * `ip:port`, or `[ip]:port` for IPv6 (Go's net.JoinHostPort, the form kube-proxy prints
 * endpoints in); the host alone (still bracketed) when port is null. IPv6 is told by a colon in `host` unless
 * `family` is given. Callers pass `*` for any address and `?` for an unknown port.
 */
export function joinHostPort(host: string, port: number | string | null, family?: Family): string {
  const v6 = family === undefined ? host.includes(':') : family === 'IPv6'
  const h = v6 ? `[${host}]` : host
  return port === null ? h : `${h}:${port}`
}

// ---------------------------------------------------------------------------------------------
// iptables' reading (what iptables-save prints)

/** An IPv6 address as iptables-save prints it (inet_ntop), or null when ipaddr.js cannot read it. */
export function iptablesIpv6(text: string): string | null {
  if (!ipaddr.IPv6.isValid(text)) return null
  const parsed = ipaddr.IPv6.parse(text)
  // inet_ntop keeps IPv4-mapped addresses dotted (::ffff:1.2.3.4); ipaddr.js would not.
  return parsed.isIPv4MappedAddress() ? text.toLowerCase() : parsed.toString()
}

/** Whether iptables would take the text as an IPv6 address (ipaddr.js's reading, no prefix). */
export function isIptablesIpv6(text: string): boolean {
  return ipaddr.IPv6.isValid(text)
}
