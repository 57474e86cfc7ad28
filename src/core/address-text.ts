/**
 * What the model accepts as an address or a CIDR: exactly what a saved state (kp-json) is read
 * back with, so every state kp writes can be read again (src/readers/kp-json/parse.ts).
 */
import {isIP} from 'node:net'

/** An IPv4 or IPv6 address as node:net reads it (zone IDs allowed). */
export function isIpAddress(text: string): boolean {
  return isIP(text) !== 0
}

/** `10.0.0.0/8`, `fd00::/64`; with `bare` also a plain address (nodePortAddresses holds both). */
export function isCidrText(text: string, bare: boolean): boolean {
  const slash = text.indexOf('/')
  const version = isIP(slash < 0 ? text : text.slice(0, slash))
  if (version === 0) return false
  if (slash < 0) return bare
  const prefix = text.slice(slash + 1)
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128)
}
