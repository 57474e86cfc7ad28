/**
 * Tables are built from a column spec, never by string concatenation in a command.
 * Borderless, like kubectl: columns separated by two spaces, multi-line cells allowed, no blanks
 * at the end of a line (they only get in the way of grep and diff).
 *
 * Laid out here, not by cli-table3, which measured each line of each cell several times with
 * regular expressions it made anew per call: unusable on large nodes. Here each line is measured once.
 */
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
 * Columns a line takes on a terminal: SGR sequences take none; East Asian wide and fullwidth
 * characters (and most emoji) two; combining marks and zero-width characters none. Text from an
 * input is escaped before it gets here (src/cli/escape.ts), so no other control character is left.
 */
export function displayWidth(line: string): number {
  let ascii = true
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c < 0x20 || c > 0x7e) {
      ascii = false
      break
    }
  }
  if (ascii) return line.length
  let width = 0
  for (const ch of line.includes('\u001b') ? line.replace(SGR, '') : line)
    width += charWidth(ch.codePointAt(0)!)
  return width
}

function charWidth(cp: number): number {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0
  if (
    (cp >= 0x300 && cp <= 0x36f) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    cp === 0xfeff ||
    (cp >= 0xfe00 && cp <= 0xfe0f)
  )
    return 0
  const wide =
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  return wide ? 2 : 1
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
