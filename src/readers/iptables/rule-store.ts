/**
 * Where the iptables reader keeps its rules: a few numbers per rule in shared Int32Array blocks,
 * not an object per rule. A 10,000-service dump has 430,000 rules; as objects of 16 fields they
 * were about 65 MB of fresh heap that the collector copied and marked, and making them was the
 * largest single cost of the read (docs/benchmarks.md). Here a rule is a row of ROW_WIDTH
 * numbers, and what it refers to (its chain's name, its target, its comment, its match objects,
 * the piece of text its line is in) is an index into one table of values.
 *
 * Nothing here knows what the fields mean: ./parse.ts LazyRule reads and writes them.
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
