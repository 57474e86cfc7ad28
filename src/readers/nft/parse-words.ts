/**
 * The word-level pieces of nft text statements: which line each word is on, `;`-separated
 * statements, `{ ... }` blocks, rules with their comment and set/map elements.
 */
import {unquote, type NftElement, type NftRule} from './ir.js'

/** The line of each word of a statement: one number when it is on one line (the common case). */
export type WordLines = number[] | number

export function lineAt(lines: WordLines, k: number): number {
  return typeof lines === 'number' ? lines : lines[Math.min(k, lines.length - 1)]!
}

/** Index of the `}` that closes the `{` at `open`, or -1. */
export function matchingBrace(words: string[], open: number): number {
  let depth = 0
  for (let k = open; k < words.length; k++) {
    if (words[k] === '{') depth++
    else if (words[k] === '}' && --depth === 0) return k
  }
  return -1
}

export interface Part {
  words: string[]
  lines: WordLines
}

/** Splits at top-level `;` (`type nat hook output priority -100 ; policy accept ;`). */
export function splitStatements(words: string[], lines: WordLines): Part[] {
  if (!words.includes(';')) return [{words, lines}]
  const out: Part[] = []
  let start = 0
  let depth = 0
  const cut = (end: number): void => {
    if (end > start)
      out.push({
        words: words.slice(start, end),
        lines: typeof lines === 'number' ? lines : lines.slice(start, end),
      })
  }
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!
    if (w === '{') depth++
    else if (w === '}') depth--
    else if (w === ';' && depth === 0) {
      cut(k)
      start = k + 1
    }
  }
  cut(words.length)
  return out
}

/** The `;`-separated statements of the `{ ... }` block that starts at words[i], if any. */
export function blockStatements(words: string[], lines: WordLines, i: number): Part[] {
  if (words[i] !== '{') return []
  const close = matchingBrace(words, i)
  const end = close < 0 ? words.length : close
  return splitStatements(
    words.slice(i + 1, end),
    typeof lines === 'number' ? lines : lines.slice(i + 1, end),
  )
}

/** A rule's words without its trailing `comment "..."` (nft prints it last). */
export function toRule(words: string[], line: number): NftRule {
  let end = words.length
  while (end > 0 && words[end - 1] === ';') end--
  let comment: string | null = null
  const c = end - 2
  if (c >= 0 && words[c] === 'comment' && words[c + 1]!.startsWith('"')) {
    comment = unquote(words[c + 1]!)
    end = c
  }
  return {tokens: end === words.length ? words : words.slice(0, end), comment, line}
}

const KEY_END = new Set([':', 'comment', 'timeout', 'expires', 'counter'])

/** Elements of `{ a . b : v , c . d : w }` between words[from] and words[to] (exclusive). */
export function splitElements(
  words: string[],
  lines: WordLines,
  from: number,
  to: number,
  allowValue: boolean,
): NftElement[] {
  const out: NftElement[] = []
  let k = from
  while (k < to) {
    while (k < to && words[k] === ',') k++
    if (k >= to) break
    const line = lineAt(lines, k)
    const key: string[] = []
    let part = ''
    while (k < to && words[k] !== ',' && !KEY_END.has(words[k]!)) {
      const w = words[k]!
      if (w === '.') {
        key.push(part)
        part = ''
      } else {
        part = part === '' ? w : `${part} ${w}`
      }
      k++
    }
    key.push(part)
    let comment: string | null = null
    let value: string[] | null = null
    while (k < to && words[k] !== ',') {
      const w = words[k]!
      if (w === 'comment' && k + 1 < to) {
        comment = unquote(words[k + 1]!)
        k += 2
      } else if ((w === 'timeout' || w === 'expires') && k + 1 < to) {
        k += 2
      } else if (w === 'counter') {
        k++
        while (k < to && (words[k] === 'packets' || words[k] === 'bytes')) k += 2
      } else if (w === ':' && allowValue) {
        k++
        const v: string[] = []
        let depth = 0
        while (k < to && (depth > 0 || words[k] !== ',')) {
          const x = words[k]!
          if (x === '{') depth++
          else if (x === '}') depth--
          v.push(x)
          k++
        }
        value = v
      } else {
        k++
      }
    }
    out.push({key, value, comment, line})
  }
  return out
}
