/**
 * Text that comes from a dump (comments, chain names) is shown with control characters
 * escaped, so a crafted dump cannot drive the operator's terminal (docs/architecture.md). Line breaks are
 * escaped too: everything this is given is one line (a diagnostic, a table cell), and a name
 * holding a newline (a JSON string can) would split it. Only the tab is left as it is. Unicode's
 * bidirectional controls would reorder what a line appears to say, and the line and paragraph
 * separators break lines in some terminals: they are escaped too.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0)
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`
  })
}
