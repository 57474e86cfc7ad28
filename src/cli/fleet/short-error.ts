/** Longest failure line of a fleet summary (stderr, text views); --json has each error whole. */
const ERROR_SHOWN = 300

/**
 * A node's error shortened for the summary: a failed command's message quotes the command, and
 * through kubectl that is a whole shell script; 300 nodes of it would hide the list.
 */
export function shortError(error: string): string {
  const line = error.replace(/\s+/g, ' ').trim()
  return line.length > ERROR_SHOWN
    ? `${line.slice(0, ERROR_SHOWN / 2)} ... ${line.slice(-ERROR_SHOWN / 2 + 5)}`
    : line
}
