/**
 * Reading the values of kube-proxy's rules (ports, `ip:port`, marks), and the rule references a
 * service port keeps.
 */
import {KUBE_MARK_MASQ} from '../../kube-proxy/iptables-names.js'
import type {SourceRef} from '../../model/types.js'
import type {IptablesCounters} from './ruleset.js'
import {normaliseAddress} from './rule-words.js'
import {findTargetOption, type IptablesRule} from './ruleset.js'

export function parsePort(value: string | undefined): number | null {
  if (value === undefined) return null
  const n = Number(value)
  return Number.isInteger(n) && n >= 0 && n <= 65535 ? n : null
}

/** `80-90` -> `80`: the first port of a range. */
function beforeDash(text: string): string {
  const dash = text.indexOf('-')
  return dash < 0 ? text : text.slice(0, dash)
}

/** `10.1.2.3:80`, `[fd00::1]:80`, `10.1.2.3` -> ip and port (null when absent). */
export function splitHostPort(text: string): {ip: string; port: number | null} | null {
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0) return null
    const ip = text.slice(1, close)
    const rest = text.slice(close + 1)
    if (rest === '') return {ip: normaliseAddress(ip), port: null}
    if (!rest.startsWith(':')) return null
    return {ip: normaliseAddress(ip), port: parsePort(beforeDash(rest.slice(1)))}
  }
  const colon = text.indexOf(':')
  if (colon < 0) return {ip: text, port: null}
  if (text.indexOf(':', colon + 1) >= 0) return {ip: normaliseAddress(text), port: null} // a bare IPv6 address
  return {ip: text.slice(0, colon), port: parsePort(beforeDash(text.slice(colon + 1)))}
}

/** The mark value as written before any `/mask`: `0x4000/0x4000` -> `0x4000`. */
export function markValue(text: string): string {
  const slash = text.indexOf('/')
  return slash < 0 ? text : text.slice(0, slash)
}

/**
 * A rule that marks a packet for masquerading: `-j KUBE-MARK-MASQ`, or (2015, before that chain
 * existed) `-j MARK --set-xmark 0x4d415351/0xffffffff` written straight into the service rules.
 */
export function isMasqueradeMarking(rule: IptablesRule): boolean {
  return (
    rule.target === KUBE_MARK_MASQ ||
    (rule.target === 'MARK' &&
      (findTargetOption(rule, '--set-xmark') ?? findTargetOption(rule, '--or-mark')) !== undefined)
  )
}

/** kube-proxy's own MASQUERADE rule: in KUBE-POSTROUTING, or (2015) appended to nat POSTROUTING itself. */
export const SNAT_COMMENT = 'kubernetes service traffic requiring SNAT'

/** Up to this many lines, sourceRefs sorts by insertion. */
const INSERTION_SORT_MAX = 64

/**
 * The refs of a service port's rules, in line order: sortState then finds them sorted and leaves
 * them (numbers sort natively, faster than a comparator sort of the refs).
 * Only the first `keep` (ReadOptions.refsPerPort) are made.
 */
export function sourceRefs(path: string, lines: readonly number[], keep: number): SourceRef[] {
  // A service port with many endpoints has a long list: sorted natively (no quadratic case).
  if (lines.length > INSERTION_SORT_MAX) {
    const sorted = Int32Array.from(lines).sort()
    return Array.from(
      keep < sorted.length ? sorted.subarray(0, Math.max(0, keep)) : sorted,
      (line) => ({path, line}),
    )
  }
  // Insertion sort into the refs themselves: ~30 lines per service port, mostly in runs already.
  // (An Int32Array per port to sort natively is memory outside the heap, 10,000 times.) Once
  // `keep` are made, a line after the last kept one is left out (most are: the lines come mostly
  // in order), and an earlier one takes the last one's place.
  const refs: SourceRef[] = []
  if (keep <= 0) return refs
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    let j = refs.length
    if (j === keep) {
      if (refs[j - 1]!.line <= line) continue
      j--
    }
    while (j > 0 && refs[j - 1]!.line > line) {
      refs[j] = refs[j - 1]!
      j--
    }
    refs[j] = {path, line}
  }
  return refs
}

/** `[12:720]` -> its two counters; null when the word is not that (by hand: one per chain of a dump). */
export function parseCounters(word: string): IptablesCounters | null {
  const colon = word.indexOf(':')
  if (
    word.charCodeAt(0) !== 91 /* [ */ ||
    word.charCodeAt(word.length - 1) !== 93 /* ] */ ||
    colon < 0
  )
    return null
  const packets = word.slice(1, colon)
  const bytes = word.slice(colon + 1, -1)
  if (!isDigits(packets) || !isDigits(bytes)) return null
  // Most chains of a dump show [0:0]: one shared object for them (counters are never changed in place).
  if (packets === '0' && bytes === '0') return ZERO_COUNTERS
  return {packets: Number(packets), bytes: Number(bytes)}
}

export const ZERO_COUNTERS: IptablesCounters = Object.freeze({packets: 0, bytes: 0})

export function isDigits(text: string): boolean {
  if (text.length === 0) return false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}
