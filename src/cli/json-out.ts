/**
 * Compact JSON written in pieces: the same text as JSON.stringify(value), without ever holding
 * the whole document. A 10,000-service state is a 24 MB string otherwise; making and then
 * writing it costs more than the pieces do (fresh memory is slow on small VMs: docs/benchmarks.md).
 */

/** About how much text one write takes. */
const PIECE_CHARS = 1 << 20
/** Arrays shorter than this are stringified whole. */
const STREAMED_ARRAY = 64
/** Objects this deep or deeper are stringified whole (a state's services are its elements at depth 2). */
const WHOLE_OBJECT_DEPTH = 2

function hasToJSON(value: object): boolean {
  return typeof (value as {toJSON?: unknown}).toJSON === 'function'
}

/** Writes JSON.stringify(value)'s text through `write`, in pieces of about PIECE_CHARS. */
export function writeCompactJson(value: unknown, write: (text: string) => void): void {
  let pending = ''
  const out = (text: string): void => {
    pending += text
    if (pending.length >= PIECE_CHARS) {
      write(pending)
      pending = ''
    }
  }
  emit(value, out, 0)
  if (pending.length > 0) write(pending)
}

function emit(value: unknown, out: (text: string) => void, depth: number): void {
  if (value === null || typeof value !== 'object' || hasToJSON(value)) {
    out(JSON.stringify(value) ?? 'null')
    return
  }
  if (Array.isArray(value)) {
    if (value.length < STREAMED_ARRAY) {
      out(JSON.stringify(value))
      return
    }
    out('[')
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out(',')
      // As in JSON.stringify: an element that has no JSON form (undefined, a function) is null.
      emit(value[i], out, depth + 1)
    }
    out(']')
    return
  }
  if (depth >= WHOLE_OBJECT_DEPTH) {
    out(JSON.stringify(value))
    return
  }
  out('{')
  let first = true
  for (const [key, v] of Object.entries(value)) {
    // As in JSON.stringify: a property that has no JSON form is left out.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    out(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`)
    first = false
    emit(v, out, depth + 1)
  }
  out('}')
}

/**
 * A writer of text pieces to a stream that encodes each into one reused buffer instead of a new
 * one per write (24 fresh 1 MiB buffers for a 10,000-service state, each a round of page faults).
 * The buffer is reused only when the stream took the last write at once: for process.stdout
 * (a file, or a pipe on Linux) an empty write queue means the bytes are out. A stream that keeps
 * written chunks after its write is done (a PassThrough still unread) must not be given this.
 */
export function reusingBufferWriter(stream: NodeJS.WritableStream & {writableLength: number}): (text: string) => void {
  let buffer: Buffer | null = null
  return (text) => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const most = text.length * 3
    if (buffer === null || buffer.length < most) buffer = Buffer.allocUnsafeSlow(Math.max(most, 4 * PIECE_CHARS))
    const bytes = buffer.write(text, 0, 'utf8')
    stream.write(bytes === buffer.length ? buffer : buffer.subarray(0, bytes))
    if (stream.writableLength > 0) buffer = null
  }
}
