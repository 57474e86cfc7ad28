/**
 * The byte tools of the listing translator: the words of one line found by position (never cut
 * out as strings), and the growing buffer the translated lines are written to. A 10,000-service
 * listing has 650,000 lines: building each translated line as a string cost more than reading
 * the result (docs/performance.md, "iptables -L listings").
 */

/** The words of one line of `src`: word i is src[start[i], end[i]). Reused from line to line. */
export class LineWords {
  src: Buffer = Buffer.alloc(0)
  start = new Int32Array(64)
  end = new Int32Array(64)
  count = 0

  /** Splits src[from, to) on blanks, at most `max` words (the rest stays unsplit). */
  split(src: Buffer, from: number, to: number, max = Number.POSITIVE_INFINITY): this {
    this.src = src
    let n = 0
    let i = from
    while (n < max) {
      while (i < to && src[i] === 32) i++
      if (i >= to) break
      if (n === this.start.length) this.grow()
      this.start[n] = i
      while (i < to && src[i] !== 32) i++
      this.end[n++] = i
    }
    this.count = n
    return this
  }

  private grow(): void {
    const start = new Int32Array(this.start.length * 2)
    const end = new Int32Array(this.end.length * 2)
    start.set(this.start)
    end.set(this.end)
    this.start = start
    this.end = end
  }

  length(k: number): number {
    return this.end[k]! - this.start[k]!
  }

  /** Word k is `text` (ASCII), compared in place. */
  is(k: number, text: string): boolean {
    if (k >= this.count) return false
    const s = this.start[k]!
    if (this.end[k]! - s !== text.length) return false
    const src = this.src
    for (let i = 0; i < text.length; i++) if (src[s + i] !== text.charCodeAt(i)) return false
    return true
  }

  /** Word k starts with `text` (ASCII). */
  startsWith(k: number, text: string): boolean {
    if (k >= this.count) return false
    const s = this.start[k]!
    if (this.end[k]! - s < text.length) return false
    const src = this.src
    for (let i = 0; i < text.length; i++) if (src[s + i] !== text.charCodeAt(i)) return false
    return true
  }

  /** The byte at offset `at` of word k (-1 past its end). */
  byteAt(k: number, at: number): number {
    const i = this.start[k]! + at
    return i < this.end[k]! ? this.src[i]! : -1
  }

  /** Word k as a string: for messages and the rare words looked up by name. */
  text(k: number): string {
    return this.src.toString('utf8', this.start[k], this.end[k])
  }
}

/** Digits, and the `:` `,` `-` of ranges and lists: a port value as -n prints it. */
export function isNumericPorts(src: Buffer, from: number, to: number): boolean {
  if (from >= to) return false
  for (let i = from; i < to; i++) {
    const c = src[i]!
    if ((c < 48 || c > 57) && c !== 58 && c !== 44 && c !== 45) return false
  }
  return true
}

/** The translated text, written as bytes; read back in pieces of whole lines. */
export class OutBytes {
  buf: Buffer
  at = 0

  constructor(size: number) {
    this.buf = Buffer.allocUnsafeSlow(Math.max(size, 1024))
  }

  private ensure(n: number): void {
    if (this.at + n <= this.buf.length) return
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(grown, 0, 0, this.at)
    this.buf = grown
  }

  /** An ASCII constant. */
  ascii(text: string): void {
    this.ensure(text.length)
    const {buf} = this
    let at = this.at
    for (let i = 0; i < text.length; i++) buf[at++] = text.charCodeAt(i)
    this.at = at
  }

  byte(c: number): void {
    this.ensure(1)
    this.buf[this.at++] = c
  }

  /** src[from, to), as it is. */
  copy(src: Buffer, from: number, to: number): void {
    const n = to - from
    this.ensure(n)
    if (n > 32) src.copy(this.buf, this.at, from, to)
    else {
      const {buf} = this
      let at = this.at
      for (let i = from; i < to; i++) buf[at++] = src[i]!
    }
    this.at += n
  }

  /** src[from, to) in double quotes, with `"` and `\` escaped as iptables-save writes a comment. */
  quoted(src: Buffer, from: number, to: number): void {
    this.byte(34)
    let run = from
    for (let i = from; i < to; i++) {
      const c = src[i]!
      if (c === 34 || c === 92) {
        this.copy(src, run, i)
        this.byte(92)
        run = i
      }
    }
    this.copy(src, run, to)
    this.byte(34)
  }
}
