/**
 * Where the entries of an `nft -j` document are in its text, found by one scan without parsing
 * them, and whether the text ends before the document does (cut off: NFT_JSON_TRUNCATED), so
 * that ./parse.ts can read it entry by entry and keep the whole entries of a cut document.
 */

const WS_SPACE = 32
const WS_TAB = 9
const WS_LF = 10
const WS_CR = 13
const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const COLON = 58
const LBRACKET = 91
const RBRACKET = 93
const LBRACE = 123
const RBRACE = 125

function skipWhitespace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i)
    if (c !== WS_SPACE && c !== WS_LF && c !== WS_TAB && c !== WS_CR) return i
    i++
  }
}

/** The index of the `"` that closes the string opening at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let q = open
  for (;;) {
    q = text.indexOf('"', q + 1)
    if (q < 0) return -1
    let backslashes = 0
    while (text.charCodeAt(q - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return q
  }
}

/** The index just after the `}` or `]` that closes the object or array opening at `open`, or -1. */
function endOfContainer(text: string, open: number): number {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = closingQuote(text, i)
      if (i < 0) return -1
    } else if (c === LBRACE || c === LBRACKET) {
      depth++
    } else if (c === RBRACE || c === RBRACKET) {
      if (--depth === 0) return i + 1
    }
  }
  return -1
}

/**
 * Where each entry of `{"nftables": [{...}, {...}, ...]}` starts and ends in the text; null
 * when the text is not exactly that (any other key, an entry that is not an object, anything
 * after it): then it is read whole. An entry found here may still be bad JSON:
 * JSON.parse says so. `cut`: the text ends before the document does (an entry, the array or
 * the object still open); the entries before the cut are whole.
 */
export function entryRanges(text: string): {starts: number[]; ends: number[]; cut: boolean} | null {
  const starts: number[] = []
  const ends: number[] = []
  const cut = () => ({starts, ends, cut: true})
  let i = skipWhitespace(text, 0)
  if (text.charCodeAt(i) !== LBRACE) return null
  i = skipWhitespace(text, i + 1)
  if (!text.startsWith('"nftables"', i)) return null
  i = skipWhitespace(text, i + 10)
  if (text.charCodeAt(i) !== COLON) return null
  i = skipWhitespace(text, i + 1)
  if (text.charCodeAt(i) !== LBRACKET) return null
  i = skipWhitespace(text, i + 1)
  if (i >= text.length) return cut()
  if (text.charCodeAt(i) === RBRACKET) {
    i++
  } else {
    for (;;) {
      if (i >= text.length) return cut()
      if (text.charCodeAt(i) !== LBRACE) return null
      const end = endOfContainer(text, i)
      // endOfContainer ends early only at the end of the text: the entry is cut.
      if (end < 0) return cut()
      starts.push(i)
      ends.push(end)
      i = skipWhitespace(text, end)
      if (i >= text.length) return cut()
      const c = text.charCodeAt(i)
      if (c === RBRACKET) {
        i++
        break
      }
      if (c !== COMMA) return null
      i = skipWhitespace(text, i + 1)
    }
  }
  i = skipWhitespace(text, i)
  if (i >= text.length) return cut()
  if (text.charCodeAt(i) !== RBRACE) return null
  return skipWhitespace(text, i + 1) === text.length ? {starts, ends, cut: false} : null
}
