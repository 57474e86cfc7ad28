/**
 * Tables are built from a column spec, never by string concatenation in a command.
 * Borderless, like kubectl: columns separated by two spaces, multi-line cells allowed.
 */
import Table from 'cli-table3'
import type {Style} from './style.js'

export interface Column<Row> {
  header: string
  /** The cell text; may hold several lines. Already escaped and styled. */
  cell: (row: Row) => string
}

const NO_BORDER = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ',
}

export function renderTable<Row>(columns: Column<Row>[], rows: Row[], style: Style): string {
  const table = new Table({
    head: columns.map((c) => style.bold(c.header)),
    chars: NO_BORDER,
    // cli-table3 colours heads and borders itself unless told not to; colour is ours to decide.
    style: {head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true},
  })
  for (const row of rows) table.push(columns.map((c) => c.cell(row)))
  // cli-table3 pads the last column too; trailing blanks only get in the way of grep and diff.
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
}
