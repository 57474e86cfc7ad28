/**
 * `cat /proc/net/ip_vs`: the kernel's own listing (ip_vs_ctl.c, ip_vs_info_seq_show), read where
 * the kube-proxy image has no ipvsadm. It has ipvsadm -Ln's header and columns, but
 * (docs/ipvs-layouts.md b.6):
 *
 * * addresses and ports in hex: `0A600001:01BB` (IPv4 in host order, `%08X:%04X`),
 *   `[fd00:0010:...:000a]:0035` (IPv6 uncompressed, `%pI6`), firewall marks `%08X`;
 * * `persistent TIMEOUT NETMASK`: the timeout in jiffies (seconds × the kernel's CONFIG_HZ, which
 *   the file does not show) and the mask in hex, without ipvsadm's `mask` word;
 * * no scheduler flags (`mh-port`, `sh-fallback`) and no persistence engine.
 */
import type {Family} from '../../model/types.js'
import {parseIp} from '../../core/address.js'

const HEX_V4 = /^([0-9A-Fa-f]{8}):([0-9A-Fa-f]{4})$/
const HEX_V6 = /^\[((?:[0-9a-fA-F]{4}:){7}[0-9a-fA-F]{4})\]:([0-9A-Fa-f]{4})$/
const HEX_MARK = /^[0-9A-Fa-f]{8}$/
/**
 * A service or real-server row whose address only the kernel writes: ipvsadm prints IPv4 with
 * dots and IPv6 compressed (inet_ntop), never eight 4-digit groups with a 4-digit port.
 */
const PROC_ROW =
  /^[^\S\n]*(?:TCP|UDP|SCTP|->)[^\S\n]+(?:[0-9A-F]{8}|\[(?:[0-9a-f]{4}:){7}[0-9a-f]{4}\]):[0-9A-F]{4}[^\S\n]/m
/** `FWM  00000064 rr`: ipvsadm prints the mark in decimal, without leading zeros. */
const PROC_FWM_ROW = /^FWM[^\S\n]+0[0-9A-F]{7}[^\S\n]/m

/** Whether a listing is /proc/net/ip_vs rather than `ipvsadm -Ln` (same header, hex rows). */
export function isProcListing(text: string): boolean {
  return PROC_ROW.test(text) || PROC_FWM_ROW.test(text)
}

/** `0A600001:01BB` → 10.96.0.1 port 443; `[fd00:...:000a]:0035` → fd00::a port 53. */
export function parseProcHostPort(text: string): {ip: string; family: Family; port: number} | null {
  const v4 = HEX_V4.exec(text)
  if (v4) {
    const n = parseInt(v4[1]!, 16)
    const ip = [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff].join('.')
    return {ip, family: 'IPv4', port: parseInt(v4[2]!, 16)}
  }
  const v6 = HEX_V6.exec(text)
  if (!v6) return null
  const ip = parseIp(v6[1]!)
  return ip ? {...ip, port: parseInt(v6[2]!, 16)} : null
}

/** A firewall mark as `%08X`; null for anything else. */
export function parseProcMark(text: string | undefined): number | null {
  return text !== undefined && HEX_MARK.test(text) ? parseInt(text, 16) : null
}

/** The service options after the scheduler: `ops`, `persistent JIFFIES NETMASK`. */
export interface ProcServiceOptions {
  onePacket: boolean
  /** The timeout as the file writes it, in jiffies; null when not persistent. */
  persistentJiffies: number | null
  /** null for the full host mask (kube-proxy's): FFFFFFFF for IPv4, prefix 128 (00000080) for IPv6. */
  persistenceMask: string | null
  /** Tokens that are none of these. */
  unknown: string[]
  /** `persistent` without a number of jiffies. */
  badTimeout: string | null
}

export function readProcServiceOptions(rest: string[], family: Family): ProcServiceOptions {
  const out: ProcServiceOptions = {
    onePacket: false,
    persistentJiffies: null,
    persistenceMask: null,
    unknown: [],
    badTimeout: null,
  }
  for (let j = 0; j < rest.length; j++) {
    const t = rest[j]!
    if (t === 'ops') out.onePacket = true
    else if (t === 'persistent') {
      const timeout = rest[j + 1] ?? ''
      if (/^\d+$/.test(timeout) && Number(timeout) <= 0xffff_ffff) {
        out.persistentJiffies = Number(timeout)
        j++
      } else {
        out.badTimeout = timeout
        if (timeout !== '') j++
      }
      const mask = rest[j + 1]
      if (mask !== undefined && HEX_MARK.test(mask)) {
        j++
        out.persistenceMask = maskText(parseInt(mask, 16), family)
      }
    } else out.unknown.push(t)
  }
  return out
}

/** The kernel keeps an IPv6 persistence mask as a prefix length (ip_vs_ctl.c, `netmask` of AF_INET6). */
function maskText(mask: number, family: Family): string | null {
  if (family === 'IPv6') return mask === 128 ? null : `/${mask}`
  if (mask === 0xffff_ffff) return null
  return [mask >>> 24, (mask >>> 16) & 0xff, (mask >>> 8) & 0xff, mask & 0xff].join('.')
}
