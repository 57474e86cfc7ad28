/**
 * An input's bytes, for readers that take them in pieces instead of as one decoded string: a file
 * on disk is then never held (or decoded) whole: fresh memory is slow to touch on these machines,
 * and one reused buffer is not (docs/performance.md).
 */
import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {decodeText, isBlank} from '../core/text.js'
import {InputError} from '../errors.js'

/** An open ByteSource. */
export interface ByteReader {
  /** Bytes in the source when it was opened. */
  readonly size: number
  /** Copies up to `length` bytes from `position` into `into` at `at`; returns how many (0 at the end). */
  readInto(into: Uint8Array, at: number, position: number, length: number): number
  close(): void
}

export interface ByteSource {
  open(): ByteReader
}

/** How much of a source's start the format sniffers see, and the binary-data check looks at (../read-state.ts). */
export const SNIFF_BYTES = 64 * 1024

/** Why a source whose head (its first SNIFF_BYTES, decoded) holds a NUL byte is refused; null for text. */
export function binaryDataProblem(head: string): string | null {
  return head.includes('\u0000') ? 'binary data (NUL bytes), not a text dump' : null
}

/** Bytes already in memory (stdin, live output, a test's string). */
export function memoryBytes(bytes: Buffer): ByteSource {
  const reader: ByteReader = {
    size: bytes.length,
    readInto(into, at, position, length) {
      if (position >= bytes.length) return 0
      return bytes.copy(into, at, position, Math.min(bytes.length, position + length))
    },
    close() {},
  }
  return {open: () => reader}
}

/** Why a file could not be read, in words: `no such file or directory`. */
export function describeReadError(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  if (e.code === 'ENOENT') return 'no such file or directory'
  if (e.code === 'EACCES') return 'permission denied'
  if (e.code === 'EISDIR') return 'is a directory'
  return e.message ?? String(error)
}

/** A file that could not be read; `reason` alone is for callers that word the message their own way. */
export class UnreadableFile extends InputError {
  constructor(
    path: string,
    readonly reason: string,
  ) {
    super(`${path}:1: cannot read: ${reason}`, 'INPUT_UNREADABLE')
  }
}

function cannotRead(path: string, error: unknown): UnreadableFile {
  return new UnreadableFile(path, describeReadError(error))
}

/**
 * A regular file, opened on each use (a file that vanished since it was listed is an input
 * error). Pipes (`-f <(iptables-save)`) cannot be read twice or at an offset: ../load.ts reads
 * those whole, into memoryBytes.
 */
export function fileBytes(path: string): ByteSource {
  return {
    open() {
      let fd: number
      let size: number
      try {
        fd = openSync(path, 'r')
        size = fstatSync(fd).size
      } catch (error) {
        throw cannotRead(path, error)
      }
      return {
        size,
        readInto(into, at, position, length) {
          try {
            return readSync(fd, into, at, length, position)
          } catch (error) {
            throw cannotRead(path, error)
          }
        },
        close() {
          closeSync(fd)
        },
      }
    },
  }
}

/** Bytes read from a pipe or device per call. */
const SPECIAL_PIECE_BYTES = 256 * 1024

/**
 * A pipe or other special file (`-f <(iptables-save)`), read whole: it can be read only once,
 * from the start. Reading stops early once its first SNIFF_BYTES hold a NUL byte: that input is
 * refused as binary data anyway (../read-state.ts rejectUnreadable), and `-f /dev/zero` or
 * `-f /dev/urandom` would otherwise be read until memory ran out.
 */
export function readSpecialFile(path: string): Buffer {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    throw cannotRead(path, error)
  }
  try {
    const pieces: Buffer[] = []
    const buffer = Buffer.allocUnsafe(SPECIAL_PIECE_BYTES)
    let total = 0
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null)
      if (n === 0) break
      // A copy of what came: a pipe gives 64 KiB or less per read, and a view would keep a whole buffer alive per piece.
      const piece = Buffer.from(buffer.subarray(0, n))
      pieces.push(piece)
      const binary = nulInHead(piece, total)
      total += n
      if (binary) break
    }
    return Buffer.concat(pieces, total)
  } catch (error) {
    throw cannotRead(path, error)
  } finally {
    closeSync(fd)
  }
}

/**
 * Whether the part of `piece` that falls in its source's first SNIFF_BYTES (`before` bytes came
 * first) holds a NUL byte: a source read in pieces can stop there, being refused as binary data.
 */
export function nulInHead(piece: Buffer, before: number): boolean {
  const headEnd = Math.min(piece.length, SNIFF_BYTES - before)
  return headEnd > 0 && piece.subarray(0, headEnd).includes(0)
}

/** Bytes `start..end` of an open source, read until all are there or the source ends. */
export function readRange(reader: ByteReader, start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(Math.max(0, end - start))
  let got = 0
  while (got < out.length) {
    const n = reader.readInto(out, got, start + got, out.length - got)
    if (n === 0) break
    got += n
  }
  return got === out.length ? out : out.subarray(0, got)
}

/** The first `max` bytes (fewer when the source is shorter). */
export function readHead(source: ByteSource, max: number): Buffer {
  const reader = source.open()
  try {
    return readRange(reader, 0, Math.min(reader.size, max))
  } finally {
    reader.close()
  }
}

/**
 * Whether the bytes decode to whitespace only. The first byte that is not ASCII whitespace
 * decides, unless it starts a multi-byte character (which may be a Unicode space): then the text
 * from there is checked. Stops at the first piece that holds anything else.
 */
export function isBlankSource(source: ByteSource): boolean {
  const reader = source.open()
  try {
    const piece = Buffer.allocUnsafe(64 * 1024)
    for (let position = 0; ;) {
      const n = reader.readInto(piece, 0, position, piece.length)
      if (n === 0) return true
      for (let i = 0; i < n; i++) {
        const c = piece[i]!
        if (c === 32 || (c >= 9 && c <= 13)) continue
        return c < 128
          ? false
          : isBlank(readRange(reader, position + i, reader.size).toString('utf8'))
      }
      position += n
    }
  } finally {
    reader.close()
  }
}

/** How much of a source one text piece holds, at most (plus a line longer than that). */
const TEXT_PIECE_BYTES = 1 << 20

/**
 * The source as text, in pieces of whole lines (each piece but the last ends with a newline;
 * the last holds what follows the last newline, possibly nothing). Decoding piece by piece needs no buffer of the whole file: a 0x0A byte
 * is never inside a UTF-8 character, so each piece decodes alone. A piece of plain ASCII is
 * decoded as Latin-1 (the same string, in a fraction of the time).
 */
export function* textPieces(source: ByteSource, pieceBytes = TEXT_PIECE_BYTES): Generator<string> {
  for (const piece of bytePieces(source, pieceBytes)) yield decodeText(piece)
}

/**
 * The source's bytes in pieces of whole lines, as textPieces cuts them, undecoded (the
 * `iptables -L` reader translates bytes). Each piece is a view of one reused buffer: it is good
 * until the next one is asked for.
 */
export function* bytePieces(source: ByteSource, pieceBytes = TEXT_PIECE_BYTES): Generator<Buffer> {
  const reader = source.open()
  try {
    let buffer = Buffer.allocUnsafeSlow(pieceBytes)
    let filled = 0
    for (let position = 0; ;) {
      const n = reader.readInto(buffer, filled, position, buffer.length - filled)
      position += n
      filled += n
      if (n === 0) {
        yield buffer.subarray(0, filled)
        return
      }
      if (filled < buffer.length) continue
      const lastNewline = buffer.lastIndexOf(10, filled - 1)
      if (lastNewline < 0) {
        // One line longer than the buffer: a bigger buffer.
        const grown = Buffer.allocUnsafeSlow(buffer.length * 2)
        buffer.copy(grown, 0, 0, filled)
        buffer = grown
        continue
      }
      yield buffer.subarray(0, lastNewline + 1)
      buffer.copy(buffer, 0, lastNewline + 1, filled)
      filled -= lastNewline + 1
    }
  } finally {
    reader.close()
  }
}
