/**
 * How a focused read (./focus.ts) tells a line's chain and target from the dump's bytes, making
 * no string: where the chain name starts and ends, what kind of chain it is by its prefix, a
 * number standing for the name, and where the `-j`/`-g` target starts.
 */
import {
  KUBE_CHAIN_PREFIX,
  KUBE_EXTERNAL_SERVICES,
  KUBE_NODEPORTS,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from '../../kube-proxy/iptables-names.js'
import {PER_SERVICE_PREFIXES, SEP_PREFIX} from './groups.js'

export const DISPATCH_CHAINS = [
  KUBE_SERVICES,
  KUBE_NODEPORTS,
  KUBE_EXTERNAL_SERVICES,
  KUBE_PROXY_FIREWALL,
]
const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0))
export const KUBE_BYTES = ascii(KUBE_CHAIN_PREFIX)
export const SEP_BYTES = ascii(SEP_PREFIX)
export const [SVC_BYTES, SVL_BYTES, EXT_BYTES, FW_BYTES, XLB_BYTES] = PER_SERVICE_PREFIXES.map(
  ([p]) => ascii(p),
) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array]
export const DISPATCH_BYTES = DISPATCH_CHAINS.map(ascii)
export const MARK_BYTES = ascii('MARK')

/** What a chain is to the selection. */
export type ChainKind = 0 | 1 | 2 | 3
export const ChainKind = {Other: 0, Dispatch: 1, PerService: 2, Sep: 3} as const

/** Whether `prefix` is at `at` in the bytes. */
export function bytesAt(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at + prefix.length > bytes.length) return false
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false
  return true
}

/** Where the chain name of line `pos..nl` starts (`:CHAIN`, `-A CHAIN`, `[p:b] -A CHAIN`), or -1. */
export function chainNameStart(bytes: Uint8Array, pos: number, nl: number): number {
  const c = bytes[pos]
  if (c === 58 /* : */) return pos + 1
  let at = pos
  if (c === 91 /* [ */) {
    // `[pkts:bytes] -A CHAIN ...` from `iptables-save -c`.
    at = -1
    for (let i = pos + 1; i + 1 < nl; i++) {
      if (bytes[i] === 93 /* ] */ && bytes[i + 1] === 32) {
        at = i + 2
        break
      }
    }
    if (at < 0) return -1
  }
  return at + 3 <= nl &&
    bytes[at] === 45 /* - */ &&
    bytes[at + 1] === 65 /* A */ &&
    bytes[at + 2] === 32
    ? at + 3
    : -1
}

/** Where the chain name starting at `start` ends (a blank, a CR, or the end of the line). */
export function chainNameEnd(bytes: Uint8Array, start: number, nl: number): number {
  let end = start
  while (end < nl && bytes[end] !== 32) end++
  if (end > start && bytes[end - 1] === 13 /* \r */) end--
  return end
}

/** Whether the name at `at`, already known to start with `KUBE-`, starts with `prefix` (a `KUBE-` name too). */
export function kubeNameHas(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at + prefix.length > bytes.length) return false
  for (let i = KUBE_BYTES.length; i < prefix.length; i++)
    if (bytes[at + i] !== prefix[i]) return false
  return true
}

/**
 * Whether bytes[start..end) holds a quote. A loop over the few bytes of a chain name: a search
 * per line (quotes are in most lines' comments) costs more.
 */
export function hasQuote(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] === 34 /* " */) return true
  return false
}

/**
 * The kind of the chain named at `start..end`, told by its prefix without cutting the name out:
 * the byte after `KUBE-` picks the one or two names to compare.
 */
export function chainKindAt(bytes: Uint8Array, start: number, end: number): ChainKind {
  if (end - start < 8 || !bytesAt(bytes, start, KUBE_BYTES)) return ChainKind.Other
  switch (bytes[start + 5]) {
    case 83 /* S */:
      if (kubeNameHas(bytes, start, SEP_BYTES)) return ChainKind.Sep
      if (kubeNameHas(bytes, start, SVC_BYTES) || kubeNameHas(bytes, start, SVL_BYTES))
        return ChainKind.PerService
      break
    case 69 /* E */:
      if (kubeNameHas(bytes, start, EXT_BYTES)) return ChainKind.PerService
      break
    case 70 /* F */:
      if (kubeNameHas(bytes, start, FW_BYTES)) return ChainKind.PerService
      break
    case 88 /* X */:
      if (kubeNameHas(bytes, start, XLB_BYTES)) return ChainKind.PerService
      break
  }
  for (const name of DISPATCH_BYTES)
    if (end - start === name.length && bytesAt(bytes, start, name)) return ChainKind.Dispatch
  return ChainKind.Other
}

/**
 * A number made from a name at bytes `start..end` (its length and an FNV-1a of its last 8
 * bytes, where kube-proxy's names differ: their hash). Names are compared as numbers first,
 * and cut out as strings only when the numbers match.
 */
export function nameKey(bytes: Uint8Array, start: number, end: number): number {
  let h = Math.imul(0x811c9dc5 ^ (end - start), 0x01000193)
  for (let i = Math.max(start, end - 8); i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193)
  return h | 0
}

/** nameKey of a string of the names kp compares (chain names; their bytes are their UTF-8). */
export function stringKey(name: string): number {
  const b = Buffer.from(name, 'utf8')
  return nameKey(b, 0, b.length)
}

/** The chain a rule line (`[p:b] -A CHAIN ...`) or a declaration (`:CHAIN ...`) names. */
export function chainNameOf(line: string): string {
  const bytes = Buffer.from(line, 'utf8')
  const start = chainNameStart(bytes, 0, bytes.length)
  return start < 0 ? '' : bytes.toString('utf8', start, chainNameEnd(bytes, start, bytes.length))
}

/** Where the hash of the per-service chain named at `nameStart` starts (KUBE-FW- is one shorter than the others). */
export function hashStartOf(bytes: Uint8Array, nameStart: number): number {
  return nameStart + (bytes[nameStart + 7] === 45 /* - */ ? 8 : 9)
}

/** Whether the word at `at` ends there (a blank, a CR, or the end of the line). */
export function isWordEnd(bytes: Uint8Array, at: number, nl: number): boolean {
  return at >= nl || bytes[at] === 32 || bytes[at] === 13 /* \r */
}

/** Whether line pos..nl has ` --jump ` or ` --goto ` (asked only of the few rules without -j / -g). */
export function longJump(bytes: Buffer, pos: number, nl: number): boolean {
  const line = bytes.toString('latin1', pos, nl)
  return line.includes(' --jump ') || line.includes(' --goto ')
}

/** Where the `-j`/`-g` target of rule line pos..nl starts, or -1: a search back from its end, making no string. */
export function targetStart(bytes: Uint8Array, pos: number, nl: number): number {
  for (let i = nl - 4; i >= pos; i--) {
    if (bytes[i] !== 32 || bytes[i + 1] !== 45 /* - */ || bytes[i + 3] !== 32) continue
    const c = bytes[i + 2]
    if (c === 106 /* j */ || c === 103 /* g */) return i + 4
  }
  return -1
}
