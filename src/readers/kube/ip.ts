/**
 * IP and CIDR parsing the way kube-proxy reads Service and EndpointSlice fields
 * (k8s.io/utils/net ParseIPSloppy / ParseCIDRSloppy): IPv4 octets may carry leading zeros and
 * are still decimal ("010.0.0.1" is 10.0.0.1, not octal 8.0.0.1), and CIDRs are printed as
 * their network address ("203.0.113.000/025" -> "203.0.113.0/25", see
 * fixtures/kube/iptables-overall/PROVENANCE.md and the upstream TestBadIPs case).
 */
import {ipaddr} from '../../core/ipaddr.js'
import type {Family} from '../../model/types.js'

export interface ParsedIp {
  family: Family
  /** Canonical text: dotted decimal without leading zeros, or RFC 5952 IPv6. */
  text: string
  /** The address as bytes (4 or 16), for masking. */
  bytes: number[]
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

/** Parses an IPv4 or IPv6 address; null when it is not one. Surrounding whitespace is ignored. */
export function parseIp(raw: string): ParsedIp | null {
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

export interface ParsedCidr {
  family: Family
  /** Network address and prefix length, e.g. "203.0.113.0/25". */
  text: string
}

/** Parses a CIDR and returns it normalised to its network address; null when it is not one. */
export function parseCidr(raw: string): ParsedCidr | null {
  const s = raw.trim()
  const slash = s.indexOf('/')
  if (slash < 0) return null
  const ip = parseIp(s.slice(0, slash))
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
