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

function parseIPv6(text: string): bigint | null {
  let head = text
  let tailV4: bigint | null = null
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as the last two groups.
  const lastColon = head.lastIndexOf(':')
  if (lastColon >= 0 && head.slice(lastColon + 1).includes('.')) {
    tailV4 = parseIPv4(head.slice(lastColon + 1))
    if (tailV4 === null) return null
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
  let value = 0n
  for (const g of groups) {
    if (!HEX_GROUP.test(g)) return null
    value = (value << 16n) | BigInt(parseInt(g, 16))
  }
  if (tailV4 !== null) value = (value & ~0xffffffffn) | tailV4
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

/** The family of an address or CIDR, or null when it is neither. */
export function familyOf(addressOrCidr: string): Family | null {
  const slash = addressOrCidr.indexOf('/')
  return parseAddress(slash >= 0 ? addressOrCidr.slice(0, slash) : addressOrCidr)?.family ?? null
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
