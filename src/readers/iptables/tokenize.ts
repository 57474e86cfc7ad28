/**
 * Splits one iptables line into words the way iptables-restore does (xshared.c,
 * add_param_to_argv), by hand and in one pass, so a 1 MB line costs one walk and no regex:
 * * blanks (space, tab) separate words; runs of blanks count as one;
 * * `"` opens and closes a quoted part, which may sit inside a word (`a"b c"d` is `ab cd`);
 * * inside quotes a backslash takes the next character literally (`\"`, `\'`, `\\`),
 *   which is how iptables-save writes a comment holding a quote; outside quotes a backslash
 *   is an ordinary character.
 * kube-proxy's own test parser has no escape handling; iptables' has, and real dumps come from
 * iptables, so we follow iptables.
 *
 * The reader tokenises 430,000 lines of a large node's dump: `tokenizeInto` fills one reused
 * buffer and makes no object per word (only the word strings), which is most of what the
 * reader used to spend in the garbage collector (docs/benchmarks.md).
 */

export interface Word {
  text: string
  /** Some part of the word was in quotes: it is a value, never an option or a `!`. */
  quoted: boolean
}

export interface TokenizedLine {
  words: Word[]
  /** Set when a quote was still open at the end of the line. */
  unclosedQuote: boolean
}

/** The words of one line, in reused parallel arrays: word i is `texts[i]`, for i < `count`. */
export interface WordBuffer {
  texts: string[]
  /** Some part of word i was in quotes: it is a value, never an option or a `!`. */
  quoted: boolean[]
  count: number
  /** A quote was still open at the end of the line. */
  unclosedQuote: boolean
}

export function newWordBuffer(): WordBuffer {
  return {texts: [], quoted: [], count: 0, unclosedQuote: false}
}

const SPACE = 32
const TAB = 9
const QUOTE = 34
const BACKSLASH = 92

/** Tokenises `line` into `out`, replacing what it held. */
export function tokenizeInto(line: string, out: WordBuffer): void {
  const {texts, quoted: quotedFlags} = out
  let count = 0
  let inQuote = false
  let escaped = false
  let quoted = false
  let started = false
  // Plain runs are sliced, not copied char by char: `runStart` marks the start of the current
  // run of literal characters not yet added to `parts` (-1: none). A word with no quote or
  // escape in it is one slice of the line.
  let parts = ''
  let runStart = -1
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (inQuote) {
      if (escaped) {
        escaped = false
        runStart = i
      } else if (c === BACKSLASH || c === QUOTE) {
        if (runStart >= 0) parts += line.slice(runStart, i)
        runStart = -1
        if (c === BACKSLASH) escaped = true
        else inQuote = false
      } else if (runStart < 0) {
        runStart = i
      }
      continue
    }
    if (c === QUOTE || c === SPACE || c === TAB) {
      if (runStart >= 0)
        parts = parts === '' ? line.slice(runStart, i) : parts + line.slice(runStart, i)
      runStart = -1
      if (c === QUOTE) {
        inQuote = true
        quoted = true
        started = true
      } else if (started) {
        texts[count] = parts
        quotedFlags[count] = quoted
        count++
        parts = ''
        quoted = false
        started = false
      }
      continue
    }
    started = true
    if (runStart < 0) runStart = i
  }
  if (runStart >= 0) parts = parts === '' ? line.slice(runStart) : parts + line.slice(runStart)
  if (started) {
    texts[count] = parts
    quotedFlags[count] = quoted
    count++
  }
  out.count = count
  out.unclosedQuote = inQuote
}

/** The words of one line as objects: for tests and the few callers outside the line loop. */
export function tokenizeLine(line: string): TokenizedLine {
  const buf = newWordBuffer()
  tokenizeInto(line, buf)
  const words: Word[] = []
  for (let i = 0; i < buf.count; i++) words.push({text: buf.texts[i]!, quoted: buf.quoted[i]!})
  return {words, unclosedQuote: buf.unclosedQuote}
}
