/**
 * The little address arithmetic the renderers need: which family an address is, whether a CIDR
 * contains an address (loadBalancerSourceRanges vs. the node IP, nodePortAddresses CIDRs vs. node
 * IPs), and loopback tests. Addresses are parsed once into a bigint; nothing here throws.
 */
import type {Family} from '../model/types.js'

const DECIMAL_OCTET = /^\d{1,3}$/
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/

interface ParsedAddress {
  family: Family
  value: bigint
}

function parseIPv4(text: string): bigint | null {
  const parts = text.split('.')
  if (parts.length !== 4) return null
  let value = 0n
  for (const part of parts) {
    if (!DECIMAL_OCTET.test(part)) return null
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

/** The family of an address or CIDR, or null when it is neither. */
export function familyOf(addressOrCidr: string): Family | null {
  const slash = addressOrCidr.indexOf('/')
  return addressFamily(slash >= 0 ? addressOrCidr.slice(0, slash) : addressOrCidr)
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

/** A single host: an address without prefix, or with /32 (IPv4) or /128 (IPv6). */
export function hostAddress(entry: string): string | null {
  const slash = entry.indexOf('/')
  const addr = slash >= 0 ? entry.slice(0, slash) : entry
  const parsed = parseAddress(addr)
  if (!parsed) return null
  if (slash < 0) return addr
  const prefix = entry.slice(slash + 1)
  return prefix === (parsed.family === 'IPv4' ? '32' : '128') ? addr : null
}

export function isLoopback(address: string): boolean {
  return cidrContains('127.0.0.0/8', address) || cidrContains('::1/128', address)
}
