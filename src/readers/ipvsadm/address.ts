/**
 * Address helpers shared by the IPVS-mode readers (ipvsadm, ipset, ip addr): strict IPv4 / IPv6
 * validation and one canonical spelling per address, so that `fd00:10:96::a` from ipset,
 * `[fd00:10:96::a]` from ipvsadm and an address from the cluster YAML join as the same key.
 */
import {isIPv4, isIPv6} from 'node:net'
import {ipaddr} from '../../core/ipaddr.js'
import type {Family, Protocol} from '../../model/types.js'

export interface CanonicalIp {
  ip: string
  family: Family
}

/** The canonical form of an IP address (RFC 5952 for IPv6), or null when the text is not one. */
export function canonicalIp(text: string): CanonicalIp | null {
  if (isIPv4(text)) return {ip: text, family: 'IPv4'}
  if (isIPv6(text)) {
    // A zone id (`fe80::1%eth0`) is not something kube-proxy binds; ipaddr.js rejects it, so do we.
    try {
      return {ip: ipaddr.IPv6.parse(text).toString(), family: 'IPv6'}
    } catch {
      return null
    }
  }
  return null
}

const DIGITS = /^\d{1,5}$/

/** A port written in decimal (1..65535 is not enforced: 0 is a valid ipset bitmap member), or null. */
export function parsePort(text: string): number | null {
  if (!DIGITS.test(text)) return null
  const port = Number(text)
  return port <= 65535 ? port : null
}

export interface HostPort extends CanonicalIp {
  port: number
}

/**
 * `a.b.c.d:port` or `[v6]:port` as ipvsadm prints them with `-n`. Null when the address or the
 * port is not numeric (a resolved name, or a port cut by `ipvsadm -L` without `-n`).
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
  const ip = canonicalIp(host)
  const port = parsePort(portText)
  if (!ip || port === null) return null
  // `[10.0.0.1]:80` or a bare `fd00::1:80` is not how ipvsadm writes either family.
  if ((ip.family === 'IPv6') !== text.startsWith('[')) return null
  return {...ip, port}
}

/** `ip:port/proto` with brackets for IPv6: how a virtual server or endpoint is shown to people. */
export function formatHostPort(ip: string, port: number | null, family: Family): string {
  const host = family === 'IPv6' ? `[${ip}]` : ip
  return port === null ? host : `${host}:${port}`
}

// A Map, not an object literal: `constructor` from the input must not find Object's prototype.
const PROTOCOLS = new Map<string, Protocol>([
  ['tcp', 'TCP'],
  ['udp', 'UDP'],
  ['sctp', 'SCTP'],
])

/** `tcp` / `TCP` → 'TCP'; null for anything kube-proxy does not program. */
export function parseProtocol(text: string): Protocol | null {
  return PROTOCOLS.get(text.toLowerCase()) ?? null
}

/** The join key of a virtual server or ipset entry: address, port and protocol. */
export function endpointKey(ip: string, protocol: Protocol, port: number): string {
  return `${ip}|${protocol}|${port}`
}
