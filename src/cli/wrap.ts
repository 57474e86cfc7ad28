/**
 * Prose at the terminal's width: lines break between words, never inside one (an address or a
 * rule cut in two cannot be copied), and continuation lines hang under their first line. Into a
 * pipe or file nothing is wrapped, unless COLUMNS asks for a width: a script reads whole lines.
 */
import {displayWidth} from './views/table.js'

/** How much deeper than its first line a wrapped line's continuation starts. */
const HANG = '  '

/**
 * The width to wrap at: COLUMNS when set (a positive number), else the terminal's columns when
 * stdout is one; null (do not wrap) into a pipe or file.
 */
export function terminalWidth(
  stream: {isTTY?: boolean; columns?: number} = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): number | null {
  const columns = Number(env.COLUMNS)
  if (env.COLUMNS !== undefined && Number.isInteger(columns) && columns > 0) return columns
  if (stream.isTTY && stream.columns !== undefined && stream.columns > 0) return stream.columns
  return null
}

/**
 * One line as lines of at most `width` columns, broken at spaces. Its leading spaces are kept on
 * every line, plus HANG on the continuations. A word wider than the room stays whole on a line
 * of its own. Lines that fit, and any line with width null, come back as they are.
 */
export function wrapLine(line: string, width: number | null): string[] {
  if (width === null || displayWidth(line) <= width) return [line]
  const lead = /^ */.exec(line)![0]
  const words = line.slice(lead.length).split(/ +/)
  const out: string[] = []
  let current = lead
  let currentWidth = lead.length
  let empty = true
  for (const word of words) {
    const w = displayWidth(word)
    if (!empty && currentWidth + 1 + w > width) {
      out.push(current)
      current = lead + HANG
      currentWidth = current.length
      empty = true
    }
    current += (empty ? '' : ' ') + word
    currentWidth += (empty ? 0 : 1) + w
    empty = false
  }
  out.push(current)
  return out
}

/** Every line of `text` through wrapLine. */
export function wrapText(text: string, width: number | null): string {
  if (width === null) return text
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line, width))
    .join('\n')
}
