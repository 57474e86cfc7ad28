/**
 * The words of an nft rule as the trace reads them: selectors (`ip daddr`, `meta mark`, `fib
 * daddr type`), numbers, braced sets and maps, port ranges, and the open conditions a set
 * element makes when the packet cannot settle it.
 */
import {open, type OpenCondition} from './branch.js'

/** The words a selector takes, and what it reads. */
export const SELECTORS: Array<{words: string[]; read: string}> = [
  {words: ['ip', 'daddr'], read: 'daddr'},
  {words: ['ip6', 'daddr'], read: 'daddr'},
  {words: ['ip', 'saddr'], read: 'saddr'},
  {words: ['ip6', 'saddr'], read: 'saddr'},
  {words: ['meta', 'l4proto'], read: 'proto'},
  {words: ['ip', 'protocol'], read: 'proto'},
  {words: ['ip6', 'nexthdr'], read: 'proto'},
  {words: ['th', 'dport'], read: 'dport'},
  {words: ['tcp', 'dport'], read: 'tcp dport'},
  {words: ['udp', 'dport'], read: 'udp dport'},
  {words: ['sctp', 'dport'], read: 'sctp dport'},
  {words: ['meta', 'mark'], read: 'mark'},
  {words: ['mark'], read: 'mark'},
  {words: ['ct', 'state'], read: 'ct state'},
  {words: ['ct', 'status'], read: 'ct status'},
  {words: ['fib', 'saddr', 'type'], read: 'fib saddr'},
  {words: ['fib', 'daddr', 'type'], read: 'fib daddr'},
  {words: ['iifname'], read: 'iifname'},
  {words: ['oifname'], read: 'oifname'},
  {words: ['meta', 'iifname'], read: 'iifname'},
  {words: ['meta', 'oifname'], read: 'oifname'},
  {words: ['meta', 'nfproto'], read: 'nfproto'},
]

export function selectorAt(w: readonly string[], i: number): {read: string; length: number} | null {
  let best: {read: string; length: number} | null = null
  for (const s of SELECTORS) {
    if (s.words.every((x, k) => w[i + k] === x) && (!best || s.words.length > best.length))
      best = {read: s.read, length: s.words.length}
  }
  return best
}

export function numberOf(word: string): number | null {
  const n = Number(word)
  return Number.isFinite(n) ? n >>> 0 : null
}

/** `{ a , b }` at w[i]: its items (each item's words) and the index after it. */
export function bracedItems(w: readonly string[], i: number): {items: string[][]; end: number} {
  const items: string[][] = []
  let cur: string[] = []
  let k = i + 1
  for (; k < w.length && w[k] !== '}'; k++) {
    if (w[k] === ',') {
      if (cur.length) items.push(cur)
      cur = []
    } else cur.push(w[k]!)
  }
  if (cur.length) items.push(cur)
  return {items, end: k + 1}
}

/** An open condition's words, its negation applied. */
export function wordsOf(o: OpenCondition): {holds: string; fails: string} {
  return o.negated ? {holds: o.fails, fails: o.holds} : {holds: o.holds, fails: o.fails}
}

/** Several open conditions that must all hold (the parts of one set element): one question. */
export function allOf(parts: OpenCondition[]): OpenCondition {
  return open(
    parts.map((p) => `${p.negated ? '!' : ''}${p.key}`).join(' & '),
    parts.map((p) => wordsOf(p).holds).join(', and '),
    `not (${parts.map((p) => wordsOf(p).holds).join(', and ')})`,
  )
}

/** Open conditions of which one must hold (several set elements the packet may hit): one question. */
export function anyOf(options: OpenCondition[]): OpenCondition {
  return open(
    options.map((p) => `${p.negated ? '!' : ''}${p.key}`).join(' | '),
    options.map((p) => wordsOf(p).holds).join(', or '),
    options.map((p) => wordsOf(p).fails).join(', and '),
  )
}

export function portIn(spec: string, port: number): boolean {
  const dash = spec.indexOf('-')
  if (dash > 0) return port >= Number(spec.slice(0, dash)) && port <= Number(spec.slice(dash + 1))
  return Number(spec) === port
}
