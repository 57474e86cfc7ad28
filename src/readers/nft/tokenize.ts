/**
 * Splits one line of nft syntax into words, in one pass over its characters.
 *
 * * Words are separated by blanks. A `"..."` string is one word and keeps its quotes.
 * * `{`, `}` and `;` are always words of their own (`policy accept;` -> `policy accept ;`).
 * * A comma is its own word when it ends a word (`goto a, 1 : ...` as `nft list` prints vmaps),
 *   but stays inside one (`flags dynamic,timeout`, `ct state established,related`).
 * * `#` at the start of a word ends the line: `# handle 12` from `nft -a`, the
 *   `# Warning: table ip nat is managed by iptables-nft` trailer, and `#` lines.
 */

export interface LineTokens {
  words: string[]
  /** Set when a `"` was not closed on this line. */
  unterminatedQuote: boolean
}

const SPACE = 32
const TAB = 9
const CR = 13
const QUOTE = 34
const HASH = 35
const COMMA = 44
const SEMI = 59
const LBRACE = 123
const RBRACE = 125

export function tokenizeLine(line: string): LineTokens {
  const words: string[] = []
  let unterminatedQuote = false
  let start = -1
  const n = line.length
  let i = 0
  for (; i < n; i++) {
    const c = line.charCodeAt(i)
    const blank = c === SPACE || c === TAB || c === CR
    if (blank || c === LBRACE || c === RBRACE || c === SEMI) {
      if (start >= 0) {
        pushWord(words, line, start, i)
        start = -1
      }
      if (!blank) words.push(c === LBRACE ? '{' : c === RBRACE ? '}' : ';')
      continue
    }
    if (start >= 0) continue
    if (c === QUOTE) {
      const close = line.indexOf('"', i + 1)
      if (close < 0) {
        words.push(line.slice(i) + '"')
        unterminatedQuote = true
        return {words, unterminatedQuote}
      }
      words.push(line.slice(i, close + 1))
      i = close
      continue
    }
    if (c === HASH) break
    start = i
  }
  if (start >= 0) pushWord(words, line, start, i)
  return {words, unterminatedQuote}
}

/** line[start, end) as a word; a trailing comma becomes a word of its own. */
function pushWord(words: string[], line: string, start: number, end: number): void {
  if (end - start > 1 && line.charCodeAt(end - 1) === COMMA) {
    words.push(line.slice(start, end - 1), ',')
  } else {
    words.push(line.slice(start, end))
  }
}
