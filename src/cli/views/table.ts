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

export interface Column<Row> {
  header: string
  /** The cell text; may hold several lines. Already escaped and styled. */
  cell: (row: Row) => string
}

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

export function renderTable<Row>(columns: Column<Row>[], rows: Row[], style: Style): string {
  const table: string[][][] = [columns.map((c) => [style.bold(c.header)])]
  for (const row of rows) table.push(columns.map((c) => c.cell(row).split('\n')))
  // Each line's width, measured once; a column is as wide as its widest line.
  const widths: number[][][] = table.map((cells) => cells.map((lines) => lines.map(displayWidth)))
  const columnWidth = columns.map(() => 0)
  for (const cells of widths) {
    for (let i = 0; i < cells.length; i++)
      for (const w of cells[i]!) if (w > columnWidth[i]!) columnWidth[i] = w
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
