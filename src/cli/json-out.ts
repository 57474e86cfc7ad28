/**
 * Compact JSON written in pieces: the same text as JSON.stringify(value), without ever holding
 * the whole document: on small VMs fresh memory is slow, so one large string costs more than the
 * pieces (docs/performance.md).
 */

/** About how much text one write takes. */
const PIECE_CHARS = 1 << 20
/** Arrays shorter than this are stringified whole. */
const STREAMED_ARRAY = 64
/** Objects this deep or deeper are stringified whole (a state's services are its elements at depth 2). */
const WHOLE_OBJECT_DEPTH = 2

/** Where writeCompactJson puts the document's text, a short string at a time. */
export interface JsonOut {
  text(text: string): void
  /** The document is complete: write out whatever is held. */
  end(): void
}

function hasToJSON(value: object): boolean {
  return typeof (value as {toJSON?: unknown}).toJSON === 'function'
}

/** Writes JSON.stringify(value)'s text into `out`. */
export function writeCompactJson(value: unknown, out: JsonOut): void {
  emit(value, (text) => out.text(text), 0)
  out.end()
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
 * A JsonOut that encodes each text straight into one reused buffer and writes the buffer to the
 * stream once about PIECE_CHARS bytes are in it: joining the texts into a string first would make
 * a fresh string per piece and a fresh buffer to encode it into, each a round of page faults.
 * The buffer is reused only when the stream took the last write at once: for process.stdout
 * (a file, or a pipe on Linux) an empty write queue means the bytes are out. A stream that keeps
 * written chunks after its write is done (a PassThrough still unread) must not be given this.
 */
export function bufferedStreamOut(
  stream: NodeJS.WritableStream & {writableLength: number},
): JsonOut {
  let buffer: Buffer | null = null
  let used = 0
  const flush = (): void => {
    if (buffer === null || used === 0) return
    stream.write(used === buffer.length ? buffer : buffer.subarray(0, used))
    used = 0
    if (stream.writableLength > 0) buffer = null
  }
  return {
    text(text) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit.
      const most = text.length * 3
      if (buffer !== null && used + most > buffer.length) flush()
      if (buffer === null || used + most > buffer.length)
        buffer = Buffer.allocUnsafeSlow(Math.max(most, 4 * PIECE_CHARS))
      used += buffer.write(text, used, 'utf8')
      if (used >= PIECE_CHARS) flush()
    },
    end: flush,
  }
}

/**
 * Makes `stream` block when it is a pipe (`kp list --json | jq`). libuv opens a pipe non-blocking,
 * so the part of a write the reader has not taken yet is queued in memory: bufferedStreamOut then
 * cannot reuse its buffer, and a large `--json` into a pipe holds the whole document in fresh
 * buffers. Blocking, a write returns once the pipe has taken it, so the reader sets the pace, as
 * with a file. Files and terminals are left as they are.
 */
export function blockWhenPipe(stream: NodeJS.WriteStream): void {
  const handle = (stream as {_handle?: {setBlocking?: (blocking: boolean) => number}})._handle
  if (!stream.isTTY && typeof handle?.setBlocking === 'function') handle.setBlocking(true)
}
