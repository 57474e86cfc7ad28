/**
 * How addresses of the model are written for people and compared with what people type:
 * `ip:port`, `[v6]:port` (Go's net.JoinHostPort, the form kube-proxy prints endpoints in),
 * `*:port` for a NodePort on every node address.
 */
import {isIP} from 'node:net'
import {ipaddr} from '../core/ipaddr.js'
import type {Endpoint, Family, Frontend} from '../model/types.js'

function hostPort(ip: string | null, port: number | null): string {
  const host = ip === null ? '*' : ip.includes(':') ? `[${ip}]` : ip
  return `${host}:${port ?? '?'}`
}

/** `172.30.0.41:80`, `[fd00::1]:80`, `*:3001`; `?` stands for a port the source does not show. */
export function frontendAddress(fe: Pick<Frontend, 'ip' | 'port'>): string {
  return hostPort(fe.ip, fe.port)
}

export function endpointAddress(ep: Pick<Endpoint, 'ip' | 'port'>): string {
  return hostPort(ep.ip, ep.port)
}

/**
 * One spelling per address, so `fd00:0::1` typed by a person matches `fd00::1` in a dump.
 * Returns null for text that is not an IP address.
 */
export function canonicalIp(text: string): string | null {
  // Every IPv4 address has a dot and every IPv6 address a colon, and none a slash: `ns/name` is
  // told apart here, before node's isIP compiles its IPv6 pattern (about 15 ms of `kp explain NAME`).
  if (text.includes('/') || !(text.includes('.') || text.includes(':'))) return null
  const version = isIP(text)
  if (version === 4) return text
  if (version === 6) return ipaddr.IPv6.parse(text).toRFC5952String()
  return null
}

export function familyOf(ip: string): Family | null {
  const version = isIP(ip)
  return version === 4 ? 'IPv4' : version === 6 ? 'IPv6' : null
}

/** An effective share as people read it: `33.3 %`, `50 %`, `100 %`; never a raw probability. */
export function formatShare(share: number | null): string {
  if (share === null) return '-'
  const percent = Math.round(share * 1000) / 10
  return `${Number.isInteger(percent) ? percent.toFixed(0) : percent.toFixed(1)} %`
}
