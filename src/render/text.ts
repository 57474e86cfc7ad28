/**
 * Text output the renderers share. A renderer hands its primary text to a TextSink piece by
 * piece, so that `kp migrate --out` can write a large rendering (a 10,000-service nft script is
 * ~45 MB) straight to its file instead of holding, joining and copying it whole.
 */
import type {TextSink} from './types.js'

/** String.prototype.trim's whitespace: ECMAScript WhiteSpace and LineTerminator. */
function isWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d)
  if (c < 0xa0) return false
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  )
}

const BLANK_LINE_RUNS = /\n{3,}/g

/**
 * Passes pieces on to `sink` exactly as `text.replace(/\n{3,}/g, '\n\n').trimEnd() + '\n'` of
 * the whole text would read: a run of blank lines becomes one, and the trailing whitespace
 * becomes one newline (written by end()). The trailing whitespace of what was passed on is held
 * back until something else follows, so a run of newlines never spans two pieces and the rule
 * applied per piece gives the same text as applied once.
 */
export class TidyTextSink {
  private heldWhitespace = ''
  constructor(private readonly sink: TextSink) {}

  write(piece: string): void {
    let end = piece.length
    while (end > 0 && isWhitespace(piece.charCodeAt(end - 1))) end--
    if (end === 0) {
      this.heldWhitespace += piece
      return
    }
    let out = this.heldWhitespace + (end === piece.length ? piece : piece.slice(0, end))
    this.heldWhitespace = end === piece.length ? '' : piece.slice(end)
    if (out.includes('\n\n\n')) out = out.replace(BLANK_LINE_RUNS, '\n\n')
    this.sink(out)
  }

  end(): void {
    this.heldWhitespace = ''
    this.sink('\n')
  }
}
