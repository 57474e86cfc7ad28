/** Text helpers the readers share. */

const WHITESPACE_CHAR = /\s/

/**
 * True when the text holds only whitespace. Stops at the first other character, so a 33 MB
 * dump costs a few characters here, not a trimmed copy of itself (docs/benchmarks.md).
 */
export function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 32 || (c >= 9 && c <= 13)) continue
    // Beyond ASCII, the same set String.prototype.trim removes (\s is exactly that set).
    if (c < 128 || !WHITESPACE_CHAR.test(text.charAt(i))) return false
  }
  return true
}
