/**
 * Text from a dump reaches the operator's terminal only through escapeControl: C0/C1 controls,
 * Unicode bidirectional controls (which reorder what a line appears to say, "Trojan Source") and
 * the line/paragraph separators (which some terminals and editors break lines at) are escaped.
 */
import {describe, expect, it} from 'vitest'
import {escapeControl} from '../../src/cli/escape.js'

describe('escapeControl', () => {
  it('escapes C0 and C1 controls but keeps the tab', () => {
    expect(escapeControl('a\u001b[31mb\tc\nd\u0085')).toBe('a\\x1b[31mb\tc\\x0ad\\x85')
  })

  it('escapes the bidirectional embedding, override and isolate controls', () => {
    const bidi = [
      '\u202a',
      '\u202b',
      '\u202c',
      '\u202d',
      '\u202e',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
    ]
    for (const c of bidi) {
      const code = c.charCodeAt(0).toString(16)
      expect(escapeControl(`ns/svc${c}x`)).toBe(`ns/svc\\u${code}x`)
    }
    // A right-to-left override that would show "ns/evil:80" reversed is visible as text.
    expect(escapeControl('ns/\u202eliveMy:80')).toBe('ns/\\u202eliveMy:80')
  })

  it('escapes the line and paragraph separators', () => {
    expect(escapeControl('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c')
  })

  it('leaves other text as it is, including right-to-left letters and marks', () => {
    const text = 'ns/שירות:80 ‎mark é 服务'
    expect(escapeControl(text)).toBe(text)
  })
})
