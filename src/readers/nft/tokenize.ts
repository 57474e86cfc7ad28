/**
 * Splits one line of nft syntax into words, in one pass over its characters.
 *
 * * Words are separated by blanks. A `"..."` string is one word and keeps its quotes.
 * * `{`, `}` and `;` are always words of their own (`policy accept;` -> `policy accept ;`).
 * * A comma is its own word when it ends a word (`goto a, 1 : ...` as `nft list` prints vmaps),
 *   but stays inside one (`flags dynamic,timeout`, `ct state established,related`).
 * * `#` at the start of a word ends the line: `# handle 12` from `nft -a`, the
 *   `# Warning: table ip nat is managed by iptables-nft` trailer, and `#` lines.
 *
 * Dumps have 500,000+ lines, so a line is read in place (no copy of it), a repeated keyword
 * (`ip`, `saddr`, `jump`, `tcp`, ...) is one shared string (WordCache), and the reader skips
 * most lines without making their words at all (lineShape, isBlankLine).
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

/** What separates words: a space, a tab, or the CR of a CRLF line end. */
const isBlankCode = (c: number): boolean => c === SPACE || c === TAB || c === CR

/** Words longer than this are taken as they are (chain names, rarely repeated on other lines). */
const MAX_SHARED_LENGTH = 24
const SHARED_SLOTS = 1 << 14

/**
 * A fixed-size cache of the words already seen, one per slot (a newer word with the same slot
 * replaces the older one), so its memory is bounded whatever the input. Only words without
 * digits: keywords and names. One per input: its words may be slices of that input's text.
 */
export class WordCache {
  private readonly slots: string[] = new Array<string>(SHARED_SLOTS).fill('')

  /** text[start, end) as a string, the same string as last time when it was seen before. */
  word(text: string, start: number, end: number): string {
    const length = end - start
    if (length > MAX_SHARED_LENGTH) return text.slice(start, end)
    let h = length
    for (let k = start; k < end; k++) {
      const c = text.charCodeAt(k)
      // Addresses, ports and numbers: mostly different from one rule to the next, so a slot
      // would only keep them alive a little longer (the garbage collector copies them then).
      if (c >= 48 && c <= 57) return text.slice(start, end)
      h = (Math.imul(h, 31) + c) | 0
    }
    const slot = (h ^ (h >>> 14)) & (SHARED_SLOTS - 1)
    const seen = this.slots[slot]!
    if (seen.length === length) {
      let k = 0
      while (k < length && seen.charCodeAt(k) === text.charCodeAt(start + k)) k++
      if (k === length) return seen
    }
    const fresh = text.slice(start, end)
    this.slots[slot] = fresh
    return fresh
  }
}

/** The words of text[start, end) (one line, without its `\n`). */
export function tokenizeRange(
  text: string,
  start: number,
  end: number,
  cache: WordCache | null,
): LineTokens {
  const words: string[] = []
  let wordStart = -1
  let i = start
  for (; i < end; i++) {
    const c = text.charCodeAt(i)
    const blank = isBlankCode(c)
    if (blank || c === LBRACE || c === RBRACE || c === SEMI) {
      if (wordStart >= 0) {
        pushWord(words, text, wordStart, i, cache)
        wordStart = -1
      }
      if (!blank) words.push(c === LBRACE ? '{' : c === RBRACE ? '}' : ';')
      continue
    }
    if (wordStart >= 0) continue
    if (c === QUOTE) {
      let close = i + 1
      while (close < end && text.charCodeAt(close) !== QUOTE) close++
      if (close >= end) {
        words.push(text.slice(i, end) + '"')
        return {words, unterminatedQuote: true}
      }
      words.push(wordAt(text, i, close + 1, cache))
      i = close
      continue
    }
    if (c === HASH) break
    wordStart = i
  }
  if (wordStart >= 0) pushWord(words, text, wordStart, i, cache)
  return {words, unterminatedQuote: false}
}

/** First words of the statements of a chain block that are not rules (see parse.ts chainProperty). */
const CHAIN_PROPERTIES = ['type', 'policy', 'comment', 'devices', 'device']

/** What lineShape says about a line. */
export const LINE_BLANK = 0
export const LINE_RULE = 1
export const LINE_OTHER = 2
/** A lone `}` (blanks around it, nothing else): the end of the block. */
export const LINE_CLOSE = 3

/**
 * A look at text[start, end) that makes no words: LINE_BLANK when tokenizeRange would find
 * none, LINE_RULE when, inside a chain block, the line is a rule on its own: words, braces
 * balanced (or more closed), no `;`, every quote closed, and not a chain property (`type`,
 * `policy`, `comment`, `devices`). The text reader then keeps only where the line is and
 * reads its words when the rule is used. Mirrors tokenizeRange: keep the two in step.
 */
export function lineShape(text: string, start: number, end: number): number {
  let wordStart = -1
  let firstStart = -1
  let firstEnd = -1
  let depth = 0
  let i = start
  for (; i < end; i++) {
    const c = text.charCodeAt(i)
    const blank = isBlankCode(c)
    if (blank || c === LBRACE || c === RBRACE || c === SEMI) {
      if (wordStart >= 0) {
        if (firstStart < 0) {
          firstStart = wordStart
          firstEnd = i
        }
        wordStart = -1
      }
      if (!blank) {
        if (firstStart < 0 && c === RBRACE) {
          let k = i + 1
          while (k < end && isBlankCode(text.charCodeAt(k))) k++
          if (k === end) return LINE_CLOSE
        }
        // A line that starts with `{`, `}` or `;`, or has a `;`, is read word by word.
        if (firstStart < 0 || c === SEMI) return LINE_OTHER
        depth += c === LBRACE ? 1 : -1
      }
      continue
    }
    if (wordStart >= 0) continue
    if (c === QUOTE) {
      let close = i + 1
      while (close < end && text.charCodeAt(close) !== QUOTE) close++
      // Not closed: the tokenizer reports it.
      if (close >= end) return LINE_OTHER
      if (firstStart < 0) {
        firstStart = i
        firstEnd = close + 1
      }
      i = close
      continue
    }
    if (c === HASH) break
    wordStart = i
  }
  if (wordStart >= 0 && firstStart < 0) {
    firstStart = wordStart
    firstEnd = i
  }
  if (firstStart < 0) return LINE_BLANK
  if (depth > 0) return LINE_OTHER
  if (firstEnd - firstStart > 1 && text.charCodeAt(firstEnd - 1) === COMMA) firstEnd--
  for (const property of CHAIN_PROPERTIES) {
    if (firstEnd - firstStart === property.length && text.startsWith(property, firstStart))
      return LINE_OTHER
  }
  return LINE_RULE
}

/**
 * NAME when text[start, end) is `chain NAME {` and nothing else (blanks around; NAME without
 * quotes, braces, `;` or a trailing comma, not starting with `#`): the words tokenizeRange finds
 * are then exactly `chain`, NAME and `{`. null for anything else, which is read word by word.
 * `nft list` prints one such line per chain, and kube-proxy makes one chain per endpoint.
 */
export function chainHeaderName(text: string, start: number, end: number): string | null {
  let i = start
  while (i < end && isBlankCode(text.charCodeAt(i))) i++
  if (!text.startsWith('chain', i)) return null
  i += 5
  const afterKeyword = i
  while (i < end && isBlankCode(text.charCodeAt(i))) i++
  if (i === afterKeyword) return null
  const nameStart = i
  for (; i < end; i++) {
    const c = text.charCodeAt(i)
    if (isBlankCode(c) || c === LBRACE) break
    if (c === RBRACE || c === SEMI || c === QUOTE || (c === HASH && i === nameStart)) return null
  }
  const nameEnd = i
  if (nameEnd === nameStart || text.charCodeAt(nameEnd - 1) === COMMA) return null
  while (i < end && isBlankCode(text.charCodeAt(i))) i++
  if (i === end || text.charCodeAt(i) !== LBRACE) return null
  i++
  while (i < end && isBlankCode(text.charCodeAt(i))) i++
  return i === end ? text.slice(nameStart, nameEnd) : null
}

/** Whether tokenizeRange finds no word in text[start, end): blanks, or a `#` comment. */
export function isBlankLine(text: string, start: number, end: number): boolean {
  let i = start
  for (; i < end; i++) {
    const c = text.charCodeAt(i)
    if (!isBlankCode(c)) break
  }
  return i === end || text.charCodeAt(i) === HASH
}

/** text[start, end) as a word; a trailing comma becomes a word of its own. */
function pushWord(
  words: string[],
  text: string,
  start: number,
  end: number,
  cache: WordCache | null,
): void {
  if (end - start > 1 && text.charCodeAt(end - 1) === COMMA) {
    words.push(wordAt(text, start, end - 1, cache), ',')
  } else {
    words.push(wordAt(text, start, end, cache))
  }
}

function wordAt(text: string, start: number, end: number, cache: WordCache | null): string {
  return cache === null ? text.slice(start, end) : cache.word(text, start, end)
}
