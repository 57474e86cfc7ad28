/**
 * Where the iptables reader keeps its rules: a few numbers per rule in shared Int32Array blocks,
 * not an object per rule. A 10,000-service dump has 430,000 rules; as objects of 16 fields they
 * were fresh heap that the collector copied and marked, and making them was the largest single
 * cost of the read (docs/benchmarks.md). Here a rule is a row of ROW_WIDTH
 * numbers, and what it refers to (its chain's name, its target, its comment, its match objects,
 * the piece of text its line is in) is an index into one table of values.
 *
 * RuleStore knows nothing of what the fields mean; the iptables row layout and the codecs of
 * its packed fields are at the end of this file, and ./chain.ts LazyRule reads and writes them.
 */

/** Rows per block: blocks are never moved or copied once made (a growing array would be, at each doubling). */
const BLOCK_SHIFT = 12
const BLOCK_ROWS = 1 << BLOCK_SHIFT
const BLOCK_MASK = BLOCK_ROWS - 1
/** Numbers per row (a power of two: the row's offset is a shift). */
const ROW_SHIFT = 4
export const ROW_WIDTH = 1 << ROW_SHIFT

export class RuleStore {
  /** Rows in use. */
  count = 0
  private readonly blocks: Int32Array[] = []
  /** Value 0 is null: a fresh (zeroed) row refers to nothing. */
  private readonly values: unknown[] = [null]
  /**
   * Per field, the last two values stored and their indexes. Most rules repeat a value of the
   * rule before (its chain, its piece of text, `-p tcp`) or the one before that (a SEP chain's
   * rules alternate KUBE-MARK-MASQ and DNAT): those are not stored again.
   */
  private readonly recent: unknown[] = new Array<unknown>(ROW_WIDTH * 2).fill(undefined)
  private readonly recentIndex = new Int32Array(ROW_WIDTH * 2)

  /** A new row, all zeros (every value null); returns its index. */
  add(): number {
    const row = this.count++
    if (row >> BLOCK_SHIFT >= this.blocks.length)
      this.blocks.push(new Int32Array(BLOCK_ROWS * ROW_WIDTH))
    return row
  }

  /** Takes back the last row added (a line found wrong after its rule was begun), zeroed for the next. */
  dropLast(): void {
    const row = --this.count
    const at = (row & BLOCK_MASK) << ROW_SHIFT
    this.blocks[row >> BLOCK_SHIFT]!.fill(0, at, at + ROW_WIDTH)
  }

  int(row: number, field: number): number {
    return this.blocks[row >> BLOCK_SHIFT]![((row & BLOCK_MASK) << ROW_SHIFT) + field]!
  }

  setInt(row: number, field: number, value: number): void {
    this.blocks[row >> BLOCK_SHIFT]![((row & BLOCK_MASK) << ROW_SHIFT) + field] = value
  }

  value(row: number, field: number): unknown {
    return this.values[this.int(row, field)]
  }

  setValue(row: number, field: number, value: unknown): void {
    this.setInt(row, field, this.indexOf(field, value))
  }

  /**
   * Stores `value` once, without looking for it among the recent ones, and returns its index
   * for setInt. For a value many rows share and that changes seldom, whose equality with the
   * last one would cost a comparison of its whole content: a piece of the dump (1 MiB) is
   * compared by content when two pieces are the same length, all of it when they are alike
   * (test/readers/iptables/rule-store.test.ts).
   */
  addValue(value: unknown): number {
    return this.values.push(value) - 1
  }

  /** The index `value` is stored under for `field`: one of the field's last two, or a new one. */
  private indexOf(field: number, value: unknown): number {
    if (value === null) return 0
    const a = field << 1
    const recent = this.recent
    if (recent[a] === value) return this.recentIndex[a]!
    if (recent[a + 1] === value) {
      const index = this.recentIndex[a + 1]!
      recent[a + 1] = recent[a]
      this.recentIndex[a + 1] = this.recentIndex[a]!
      recent[a] = value
      this.recentIndex[a] = index
      return index
    }
    const index = this.values.push(value) - 1
    recent[a + 1] = recent[a]
    this.recentIndex[a + 1] = this.recentIndex[a]!
    recent[a] = value
    this.recentIndex[a] = index
    return index
  }
}

/**
 * The iptables reader's row layout (./chain.ts LazyRule reads and writes it). Numbers are kept
 * as they are; the other fields are indexes into the store's values.
 */
export const enum RuleField {
  Line = 0,
  /** Where the rule's line is in its piece of text: [Start, End). */
  Start = 1,
  End = 2,
  /** optionsFrom and a KeptValue code, packed (packOptions). */
  Options = 3,
  Goto = 4,
  /** The piece of text the line is in. */
  Dump = 5,
  Table = 6,
  Chain = 7,
  Target = 8,
  Comment = 9,
  Protocol = 10,
  Src = 11,
  Dst = 12,
  Dport = 13,
  /** What few rules have (counters, -i, -o, --sport), as one object. */
  Rare = 14,
  /** A plain rule's comment as where it is in the line (packCommentAt), when Comment holds none. */
  CommentAt = 15,
}
if (RuleField.CommentAt >= ROW_WIDTH)
  throw new Error('rule-store.ts: a rule has more fields than a RuleStore row has places')

// ---- The fields that pack two numbers in one: each encoder beside its decoder.

/**
 * CommentAt: a comment's place in its rule's line, 1 + offset × 4096 + length, or 0 when it does
 * not fit (4,095 characters or more, or 512 KiB or more into a line): it is then kept as a string.
 */
const COMMENT_LENGTH_SPAN = 4096
const COMMENT_OFFSET_LIMIT = 1 << 19

export function packCommentAt(offset: number, length: number): number {
  return length < COMMENT_LENGTH_SPAN - 1 && offset < COMMENT_OFFSET_LIMIT
    ? 1 + offset * COMMENT_LENGTH_SPAN + length
    : 0
}

/** The length of a packed CommentAt (not 0). */
export const commentLength = (at: number): number => (at - 1) % COMMENT_LENGTH_SPAN
/** The offset of a packed CommentAt (not 0). */
export const commentOffset = (at: number): number =>
  (at - 1 - commentLength(at)) / COMMENT_LENGTH_SPAN

/**
 * The options whose first value the plain reader keeps the place of, for the builder's questions
 * about most rules of a large dump: each SVC->SEP rule's probability, each SEP chain's DNAT.
 */
export const KEPT_VALUES: ReadonlyArray<{name: string; afterTarget: boolean}> = [
  {name: '--probability', afterTarget: false},
  {name: '--to-destination', afterTarget: true},
]

/** The index in KEPT_VALUES of this option in this place, or -1. */
export function keptIndex(name: string, afterTarget: boolean): number {
  for (let i = 0; i < KEPT_VALUES.length; i++)
    if (KEPT_VALUES[i]!.name === name && KEPT_VALUES[i]!.afterTarget === afterTarget) return i
  return -1
}

/**
 * A kept-value code: 0 nothing known (the line was tokenised), NONE_KEPT none of KEPT_VALUES in
 * its place, else which one and how far into the rule's text its value's word starts.
 */
export const NOTHING_KNOWN = 0
export const NONE_KEPT = 1
export const keptCode = (index: number, offset: number): number =>
  2 + index + KEPT_VALUES.length * offset
export const keptIndexOf = (code: number): number => (code - 2) % KEPT_VALUES.length
export const keptOffsetOf = (code: number): number => Math.floor((code - 2) / KEPT_VALUES.length)

/** Options: optionsFrom (the word the options start at, at most 4) + OPTIONS_SPAN × a kept-value code. */
const OPTIONS_SPAN = 8

export const packOptions = (optionsFrom: number, kept: number): number =>
  optionsFrom + OPTIONS_SPAN * kept
export const optionsFromOf = (options: number): number => options % OPTIONS_SPAN
export const keptCodeOf = (options: number): number => Math.floor(options / OPTIONS_SPAN)
