/**
 * Where a focused read (./focus.ts) keeps the lines it chooses, and how it reads them from the
 * dump's bytes: growable lists of numbers and bytes, runs of lines decided late, and reads of
 * scattered byte ranges grouped into few reads.
 */
import {decodeText} from '../../core/text.js'
import {readRange, type ByteReader} from '../bytes.js'
import type {FocusedLines} from './focus.js'

/** Ranges no further apart than this are read with one read (the bytes between are read and dropped). */
const READ_GAP_BYTES = 16 * 1024
/** The most one such read takes. */
const READ_GROUP_BYTES = 4 * 1024 * 1024

/**
 * Reads the byte ranges [starts[i], ends[i]) of `reader`, given in file order, and hands each to
 * `use`: ranges close together are read with one read. One read per range made a focused read
 * of a service with 200,000 endpoints 1.2 million reads; the few scattered ranges of an
 * ordinary service are still read one by one.
 */
export function readRanges(
  reader: ByteReader,
  starts: ArrayLike<number>,
  ends: ArrayLike<number>,
  use: (i: number, bytes: Buffer) => void,
): void {
  for (let i = 0; i < starts.length;) {
    const groupStart = starts[i]!
    let groupEnd = ends[i]!
    let j = i + 1
    while (
      j < starts.length &&
      starts[j]! >= groupEnd &&
      starts[j]! - groupEnd <= READ_GAP_BYTES &&
      ends[j]! - groupStart <= READ_GROUP_BYTES
    )
      groupEnd = ends[j++]!
    const bytes = readRange(reader, groupStart, groupEnd)
    for (let k = i; k < j; k++)
      use(k, bytes.subarray(starts[k]! - groupStart, ends[k]! - groupStart))
    i = j
  }
}

/** A list of non-negative integers that grows without boxing. */
export class IntList {
  data: Int32Array
  length = 0
  constructor(capacity = 1024) {
    this.data = new Int32Array(capacity)
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    this.data[this.length++] = value
  }
}

/** Bytes appended in runs, in a buffer that doubles as it fills. */
export class ByteList {
  data = Buffer.allocUnsafe(64 * 1024)
  length = 0

  append(from: Uint8Array, start: number, end: number): void {
    const need = this.length + end - start
    if (need > this.data.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.data.length * 2))
      this.data.copy(grown, 0, 0, this.length)
      this.data = grown
    }
    const to = this.data
    // Most runs are one line: a loop beats making a view for set().
    if (end - start <= 256)
      for (let i = start, at = this.length; i < end; i++, at++) to[at] = from[i]!
    else to.set(from.subarray(start, end), this.length)
    this.length = need
  }
}

/**
 * Lines whose reading is decided once the whole dump has been seen, in runs: neighbouring lines
 * of one chain (a SEP chain's two rules, a service chain's jumps) are one run. For each run, its
 * first line index, where it is in the source (up to and with the newline of its last line), and
 * the key of the name it is chosen by: four numbers in a row of one array.
 *
 * Memory the process has not touched yet is slow to touch, so the array is made as large as the source could need at once, and only the part
 * written is ever touched; it grows only past that guess.
 */
export class LateLines {
  data: Int32Array
  length = 0

  constructor(expectedRuns: number) {
    this.data = new Int32Array(4 * Math.max(1024, expectedRuns))
  }

  add(idx: number, start: number, end: number, key: number): void {
    const last = (this.length - 1) * 4
    // A line that starts where the last run ends is the next line: it joins the run when its key is the same.
    if (this.length > 0 && this.data[last + 2] === start && this.data[last + 3] === key) {
      this.data[last + 2] = end
      return
    }
    let at = this.length * 4
    if (at === this.data.length) {
      const grown = new Int32Array(at * 2)
      grown.set(this.data)
      this.data = grown
    }
    const d = this.data
    d[at++] = idx
    d[at++] = start
    d[at++] = end
    d[at] = key
    this.length++
  }
}

/** The first newline in bytes[from, to), or `to`. */
export function findNewline(bytes: Buffer, from: number, to: number): number {
  const i = bytes.indexOf(10, from)
  return i < 0 || i >= to ? to : i
}

/** The lines read at once and the ones chosen late, merged in source order into one text. */
export function joinChosenLines(
  reader: ByteReader,
  now: {bytes: ByteList; idx: IntList; at: IntList},
  late: Array<{idx: number; start: number; end: number}>,
  lineCount: number,
  endsWithNewline: boolean,
): FocusedLines {
  late.sort((a, b) => a.idx - b.idx)
  let total = now.bytes.length
  for (const l of late) total += l.end - l.start
  // The late lines' bytes, in file order, read with as few reads as they allow (readRanges).
  const lateBytes: Buffer[] = new Array<Buffer>(late.length)
  readRanges(
    reader,
    late.map((l) => l.start),
    late.map((l) => l.end),
    (i, bytes) => {
      lateBytes[i] = bytes
    },
  )
  const out = Buffer.allocUnsafe(total)
  const lineIndex = new Int32Array(now.idx.length + late.length)
  let at = 0
  let lines = 0
  let k = 0
  for (let j = 0; j <= late.length; j++) {
    // The lines read at once that come before late line j (all the rest after the last), in one copy.
    const until = j < late.length ? late[j]!.idx : lineCount
    const from = k
    while (k < now.idx.length && now.idx.data[k]! < until) lineIndex[lines++] = now.idx.data[k++]!
    if (k > from)
      at += now.bytes.data.copy(
        out,
        at,
        now.at.data[from]!,
        k < now.idx.length ? now.at.data[k]! : now.bytes.length,
      )
    if (j === late.length) break
    lineIndex[lines++] = late[j]!.idx
    at += lateBytes[j]!.copy(out, at)
  }
  return {text: decodeText(out.subarray(0, at)), lineIndex, lineCount, endsWithNewline}
}
