/**
 * Small readers over a rule's words (nft list syntax, see ir.ts), shared by the kube-proxy
 * table interpreter and the iptables-nft interpreter.
 */
import type {Protocol} from '../../model/types.js'
import {unquote} from './ir.js'

/** The word after the first occurrence of `a b` (e.g. `ip daddr`), with its `!=` if any. */
export function valueAfter(
  words: readonly string[],
  a: string,
  b: string,
): {value: string; negated: boolean} | null {
  for (let i = 0; i + 2 < words.length; i++) {
    if (words[i] === a && words[i + 1] === b) {
      // `th dport` / `ip daddr` in a concatenation (`ip daddr . meta l4proto`) has no value.
      const next = words[i + 2]!
      if (next === '.' || next === 'vmap' || next === 'map') return null
      if (next === '!=')
        return words[i + 3] === undefined ? null : {value: words[i + 3]!, negated: true}
      if (next === '==')
        return words[i + 3] === undefined ? null : {value: words[i + 3]!, negated: false}
      return {value: next, negated: false}
    }
  }
  return null
}

/** The values of a set literal `{ a , b }` starting at words[i], or the single word at i. */
export function listAt(words: readonly string[], i: number): string[] {
  if (words[i] !== '{') return words[i] === undefined ? [] : [words[i]!]
  const out: string[] = []
  for (let k = i + 1; k < words.length && words[k] !== '}'; k++)
    if (words[k] !== ',') out.push(words[k]!)
  return out
}

/** The source or destination address match of `ip|ip6 saddr|daddr`, as a list. */
export function addressMatch(
  words: readonly string[],
  field: 'saddr' | 'daddr',
): {values: string[]; negated: boolean} | null {
  for (let i = 0; i + 2 < words.length; i++) {
    if ((words[i] === 'ip' || words[i] === 'ip6') && words[i + 1] === field) {
      let k = i + 2
      const next = words[k]!
      if (next === '.' || next === 'vmap' || next === 'map') return null
      let negated = false
      if (next === '!=') {
        negated = true
        k++
      } else if (next === '==') k++
      return {values: listAt(words, k), negated}
    }
  }
  return null
}

/** The final verdict of a rule: `jump X`, `goto X`, `drop`, `reject`, `accept`, `return`. */
export function verdictOf(words: readonly string[]): {kind: string; target: string | null} | null {
  // iptables-nft in JSON: `xt target "REJECT"` is the REJECT nft's text output shows as `reject`.
  const n = words.length
  if (n >= 3 && words[n - 3] === 'xt' && words[n - 2] === 'target' && words[n - 1] === '"REJECT"')
    return {kind: 'reject', target: null}
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i]!
    if ((w === 'jump' || w === 'goto') && words[i + 1] !== undefined && i + 2 >= words.length)
      return {kind: w, target: words[i + 1]!}
    if (
      i === words.length - 1 &&
      (w === 'drop' || w === 'accept' || w === 'return' || w === 'reject' || w === 'continue')
    )
      return {kind: w, target: null}
    if (w === 'reject' && words[i + 1] === 'with') return {kind: 'reject', target: null}
  }
  return null
}

export function hasSequence(words: readonly string[], ...seq: string[]): boolean {
  outer: for (let i = 0; i + seq.length <= words.length; i++) {
    for (let k = 0; k < seq.length; k++) if (words[i + k] !== seq[k]) continue outer
    return true
  }
  return false
}

export function protocolOf(word: string | undefined): Protocol | null {
  switch (word) {
    case 'tcp':
    case '6':
      return 'TCP'
    case 'udp':
    case '17':
      return 'UDP'
    case 'sctp':
    case '132':
      return 'SCTP'
    default:
      return null
  }
}

/** A mark word (`0x4000`, `0x00004000`, `16384`) as a number, or null. */
export function markValue(word: string | undefined): number | null {
  if (word === undefined) return null
  const n =
    word.startsWith('0x') || word.startsWith('0X')
      ? Number.parseInt(word.slice(2), 16)
      : /^\d+$/.test(word)
        ? Number(word)
        : Number.NaN
  return Number.isFinite(n) ? n : null
}

/** The mark OR-ed in by `meta mark set meta mark | 0x4000` / `mark set mark or 0x4000`, as written. */
export function markSetOr(words: readonly string[]): string | null {
  const set = words.indexOf('set')
  if (set < 1 || words[set - 1] !== 'mark') return null
  for (let i = set + 1; i + 1 < words.length; i++) {
    if (words[i] === '|' || words[i] === 'or') return words[i + 1]!
  }
  return null
}

/** `iif != "veth*"` / `iifname != veth*` style interface matches: {name, negated}. */
export function interfaceMatch(words: readonly string[]): {name: string; negated: boolean} | null {
  for (let i = 0; i + 1 < words.length; i++) {
    const w = words[i]!
    if (
      w === 'iif' ||
      w === 'iifname' ||
      (w === 'meta' && (words[i + 1] === 'iif' || words[i + 1] === 'iifname'))
    ) {
      const k = w === 'meta' ? i + 2 : i + 1
      const negated = words[k] === '!='
      const value = words[negated ? k + 1 : k]
      if (value === undefined) return null
      return {name: unquote(value), negated}
    }
  }
  return null
}
