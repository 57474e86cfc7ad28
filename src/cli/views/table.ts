/**
 * Tables are built from a column spec, never by string concatenation in a command.
 * Borderless, like kubectl: columns separated by two spaces, multi-line cells allowed, no blanks
 * at the end of a line (they only get in the way of grep and diff).
 *
 * Laid out here, not by cli-table3, which measured each line of each cell several times with
 * regular expressions it made anew per call: unusable on large nodes. Here each line is measured once.
 */
import stringWidth from 'string-width'
import type {Style} from './style.js'
import {wrapLine} from '../wrap.js'

export interface Column<Row> {
  header: string
  /** The cell text; may hold several lines. Already escaped and styled. */
  cell: (row: Row) => string
  /**
   * When the table is wider than the terminal, this column's lines are broken between words to
   * fit (kp list's frontends: the one column whose lines are long and made of words).
   */
  fold?: boolean
}

export interface TableOptions {
  /** The terminal's width (src/cli/wrap.ts terminalWidth); null: never fold. */
  width?: number | null
}

/** Narrower than this, a folded column would break nearly every word: leave the table wide. */
const MIN_FOLDED_WIDTH = 16

const GAP = '  '
/** An SGR sequence (colour, bold): the only escape sequences a styled cell holds. */
// eslint-disable-next-line no-control-regex -- SGR escapes begin with ESC
const SGR = /\u001b\[[\d;]*m/g

/**
 * Columns a line takes on a terminal: SGR sequences take none; the rest is measured by
 * string-width (East Asian wide and fullwidth characters and emoji two, combining marks and
 * zero-width characters none, a grapheme cluster as one character). Text from an input is escaped
 * before it gets here (src/cli/escape.ts), so no other control character is left. Nearly every
 * line of a table is plain ASCII: that is its length, without string-width's segmenter.
 */
export function displayWidth(line: string): number {
  if (isPrintableAscii(line)) return line.length
  const text = line.includes('\u001b') ? line.replace(SGR, '') : line
  return isPrintableAscii(text) ? text.length : stringWidth(text)
}

function isPrintableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20 || c > 0x7e) return false
  }
  return true
}

export function renderTable<Row>(
  columns: Column<Row>[],
  rows: Row[],
  style: Style,
  opts: TableOptions = {},
): string {
  const table: string[][][] = [columns.map((c) => [style.bold(c.header)])]
  for (const row of rows) table.push(columns.map((c) => c.cell(row).split('\n')))
  // Each line's width, measured once; a column is as wide as its widest line.
  let widths = measure(table)
  let columnWidth = widest(widths, columns.length)
  const room = foldRoom(columns, columnWidth, opts.width ?? null)
  if (room !== null) {
    const f = columns.findIndex((c) => c.fold)
    for (const cells of table.slice(1)) cells[f] = cells[f]!.flatMap((l) => wrapLine(l, room))
    widths = measure(table)
    columnWidth = widest(widths, columns.length)
  }
  const out: string[] = []
  for (let r = 0; r < table.length; r++) {
    const cells = table[r]!
    let height = 0
    for (const lines of cells) height = Math.max(height, lines.length)
    for (let l = 0; l < height; l++) {
      let line = ''
      for (let i = 0; i < cells.length; i++) {
        const text = cells[i]![l] ?? ''
        const pad = i < cells.length - 1 ? columnWidth[i]! - (widths[r]![i]![l] ?? 0) : 0
        line += (i > 0 ? GAP : '') + text + ' '.repeat(pad)
      }
      out.push(line.trimEnd())
    }
  }
  return out.join('\n')
}

function measure(table: string[][][]): number[][][] {
  return table.map((cells) => cells.map((lines) => lines.map(displayWidth)))
}

function widest(widths: number[][][], n: number): number[] {
  const columnWidth = new Array<number>(n).fill(0)
  for (const cells of widths) {
    for (let i = 0; i < cells.length; i++)
      for (const w of cells[i]!) if (w > columnWidth[i]!) columnWidth[i] = w
  }
  return columnWidth
}

/** The width the fold column gets when the table is too wide for `width`; null: leave it. */
function foldRoom<Row>(columns: Column<Row>[], columnWidth: number[], width: number | null) {
  const f = columns.findIndex((c) => c.fold)
  if (width === null || f < 0) return null
  const total = columnWidth.reduce((a, b) => a + b, 0) + GAP.length * (columns.length - 1)
  if (total <= width) return null
  const room = width - (total - columnWidth[f]!)
  const floor = Math.max(MIN_FOLDED_WIDTH, displayWidth(columns[f]!.header))
  return room >= floor ? room : null
}
