/**
 * Writes a text that is produced piece by piece (a renderer's TextSink) straight to a file
 * through one reused buffer: a large rendering (`kp migrate --out`) is never held, joined or
 * encoded whole.
 */
import {closeSync, openSync, writeSync} from 'node:fs'
import type {TextSink} from '../render/types.js'

const BUFFER_BYTES = 1 << 20
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_UTF8_BYTES_PER_UNIT = 3

function writeAll(fd: number, bytes: Uint8Array, length: number): void {
  for (let offset = 0; offset < length;) offset += writeSync(fd, bytes, offset, length - offset)
}

/** Opens `path` (created or truncated, as writeFile does), gives `produce` a sink into it, and returns what `produce` returns. */
export function writeTextFile<T>(path: string, produce: (sink: TextSink) => T): T {
  const fd = openSync(path, 'w')
  try {
    const buffer = Buffer.allocUnsafe(BUFFER_BYTES)
    let used = 0
    const result = produce((piece) => {
      const worstCase = piece.length * MAX_UTF8_BYTES_PER_UNIT
      if (used + worstCase > buffer.length) {
        writeAll(fd, buffer, used)
        used = 0
      }
      if (worstCase > buffer.length) {
        const bytes = Buffer.from(piece, 'utf8')
        writeAll(fd, bytes, bytes.length)
      } else {
        used += buffer.write(piece, used, 'utf8')
      }
    })
    writeAll(fd, buffer, used)
    return result
  } finally {
    closeSync(fd)
  }
}
