/** Text helpers the readers share. */
import {isAscii} from 'node:buffer'

const WHITESPACE_CHAR = /\s/

/**
 * True when the text holds only whitespace. Stops at the first other character, so a large
 * dump costs a few characters here, not a trimmed copy of itself.
 */
export function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 32 || (c >= 9 && c <= 13)) continue
    // Beyond ASCII, the same set String.prototype.trim removes (\s is exactly that set).
    if (c < 128 || !WHITESPACE_CHAR.test(text.charAt(i))) return false
  }
  return true
}

/**
 * The text of a whole input without the byte order mark (U+FEFF) that Windows editors put at
 * the start of a UTF-8 file: a dump pasted into Notepad and copied over would otherwise start
 * with a character no reader expects (`\uFEFFtable ip kube-proxy {`, JSON that does not parse).
 * Only the very start of an input: it is one character, so no line number moves.
 */
export function withoutByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/**
 * Bytes -> text. Dumps are almost always plain ASCII, and such a one decodes as Latin-1 (one
 * byte per character, the same string) in a fraction of the time UTF-8 decoding takes.
 */
export function decodeText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
}

/**
 * The index of the last of `starts` (ascending) that is at or before `offset`, by binary search:
 * which line, or which piece of a text, an offset is in. 0 when none is (starts[0] is 0 for both).
 */
export function indexAtOrBefore(starts: readonly number[], offset: number): number {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (starts[mid]! <= offset) lo = mid
    else hi = mid - 1
  }
  return lo
}
