/**
 * How addresses of the model are written for people: `ip:port`, `[v6]:port` (Go's
 * net.JoinHostPort, the form kube-proxy prints endpoints in), `*:port` for a NodePort on every
 * node address. Reading what people type: src/core/address.ts canonicalIp.
 */
import {joinHostPort} from '../core/address.js'
import {REDACTED_SHOWN} from '../core/redaction.js'
import type {Endpoint, Frontend} from '../model/types.js'

/**
 * `172.30.0.41:80`, `[fd00::1]:80`, `*:3001`, `<redacted>:80`; `?` stands for a port the source
 * does not show.
 */
export function frontendAddress(fe: Pick<Frontend, 'ip' | 'port' | 'redacted'>): string {
  return joinHostPort(frontendHost(fe), fe.port ?? '?')
}

/** The address part: `*` for a NodePort on every node address, `<redacted>` for a hidden one. */
export function frontendHost(fe: Pick<Frontend, 'ip' | 'redacted'>): string {
  return fe.ip ?? (fe.redacted ? REDACTED_SHOWN : '*')
}

export function endpointAddress(ep: Pick<Endpoint, 'ip' | 'port'>): string {
  return joinHostPort(ep.ip ?? REDACTED_SHOWN, ep.port ?? '?')
}

/** An effective share as people read it: `33.3 %`, `50 %`, `100 %`; never a raw probability. */
export function formatShare(share: number | null): string {
  if (share === null) return '-'
  const percent = Math.round(share * 1000) / 10
  return `${Number.isInteger(percent) ? percent.toFixed(0) : percent.toFixed(1)} %`
}
