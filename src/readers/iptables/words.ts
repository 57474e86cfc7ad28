/**
 * The word reader of the iptables reader: how one line of iptables text splits into words, the
 * way iptables-restore does it (xshared.c, add_param_to_argv). Two paths, one set of words:
 * * the general path, tokenizeInto, which resolves every quote and escape;
 * * the fast path, PlainWords, a cursor over the words of a plain line (isPlainText: no `!`, and
 *   quotes only around whole words) found by position, so a word becomes a string only when kept.
 * On a plain line both give the same words (test/readers/iptables/parse.test.ts compares them):
 * a change to how words are read goes to both.
 *
 * Tokenising rules (iptables-restore's):
 * * blanks (space, tab) separate words; runs of blanks count as one;
 * * `"` opens and closes a quoted part, which may sit inside a word (`a"b c"d` is `ab cd`);
 * * inside quotes a backslash takes the next character literally (`\"`, `\'`, `\\`),
 *   which is how iptables-save writes a comment holding a quote; outside quotes a backslash
 *   is an ordinary character.
 * kube-proxy's own test parser has no escape handling; iptables' has, and real dumps come from
 * iptables, so we follow iptables.
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
const BANG = 33
const DASH = 45

/** The general path: tokenises `line` into `out`, replacing what it held. */
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

export const isBlankCode = (c: number): boolean => c === SPACE || c === TAB

/**
 * The fast path: a walk over the words of a plain part of a line (isPlainText). Its words are the
 * runs between blanks and the quoted words, none negated (what tokenizeInto would make of them).
 * Quotes are how iptables-save writes every comment (`--comment "ns/name:port"`): a node that
 * keeps them has one on most rules. One cursor per reader, moved with start().
 */
export class PlainWords {
  text = ''
  /** Where the current word starts and ends, quotes included: [start, at). */
  start = 0
  at = 0
  /** The current word is in quotes: its value is [start + 1, at - 1), and it is never an option. */
  quoted = false
  /** The end of the part walked. */
  end = 0

  /** Walks text[from, end) from its start. */
  reset(text: string, from: number, end: number): this {
    this.text = text
    this.start = from
    this.at = from
    this.quoted = false
    this.end = end
    return this
  }

  /** Moves to the next word; false at the end of the part walked. */
  next(): boolean {
    const {text, end} = this
    let at = this.at
    while (at < end && isBlankCode(text.charCodeAt(at))) at++
    if (at >= end) return false
    this.start = at
    if (text.charCodeAt(at) === QUOTE) {
      // A whole quoted word (the walkers check that first): it ends past its closing quote.
      const close = text.indexOf('"', at + 1)
      this.at = close >= 0 && close < end ? close + 1 : end
      this.quoted = true
      return true
    }
    while (at < end && !isBlankCode(text.charCodeAt(at))) at++
    this.at = at
    this.quoted = false
    return true
  }

  /** The value of the word at the cursor: the word, or what its quotes hold. */
  value(): string {
    return this.quoted
      ? this.text.slice(this.start + 1, this.at - 1)
      : this.text.slice(this.start, this.at)
  }

  /** The word is an option (`-p`, `--dport`): two characters or more, the first a dash. */
  isOption(): boolean {
    return this.at - this.start > 1 && this.text.charCodeAt(this.start) === DASH
  }

  /** The word at the cursor is `word`, compared in place. */
  is(word: string): boolean {
    return this.at - this.start === word.length && this.text.startsWith(word, this.start)
  }
}

/**
 * Whether every `"` of text[firstQuote, to) (the part from `lineStart`, whose first quote is at
 * firstQuote) opens a whole word and closes it: a blank or the part's start before it, a closing
 * `"` before `to` with no backslash between (tokenizeInto's escape), and a blank or `to` after
 * that. Such a word is one value to tokenizeInto, quotes taken off; anything else (`a"b c"`,
 * `"a\"b"`, an unclosed quote) is left to the tokenizer.
 */
export function quotesAreWholeWords(
  text: string,
  lineStart: number,
  firstQuote: number,
  to: number,
): boolean {
  let open = firstQuote
  while (open < to) {
    if (open > lineStart && !isBlankCode(text.charCodeAt(open - 1))) return false
    const close = text.indexOf('"', open + 1)
    if (close < 0 || close >= to) return false
    for (let i = open + 1; i < close; i++) if (text.charCodeAt(i) === BACKSLASH) return false
    if (close + 1 < to && !isBlankCode(text.charCodeAt(close + 1))) return false
    // The next quote. indexOf (faster here than a walk to `to`) may run on to a later line's quote; the part it passes holds no
    // quote, so each stretch of the text is passed once per part that asks (still linear).
    open = text.indexOf('"', close + 1)
    if (open < 0) break
  }
  return true
}

/** Whether a plain walk can read text[from, to): no `!`, and quotes only around whole words. */
export function isPlainText(text: string, from: number, to: number): boolean {
  let firstQuote = -1
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c === BANG) return false
    if (c === QUOTE && firstQuote < 0) firstQuote = i
  }
  return firstQuote < 0 || quotesAreWholeWords(text, from, firstQuote, to)
}
