import {describe, expect, it} from 'vitest'
import {isBlank} from '../../src/core/text.js'

describe('isBlank', () => {
  it('agrees with trim() on what counts as whitespace', () => {
    for (const text of ['', ' ', '\t\r\n', '\u00a0\u2028\ufeff', ' x ', '\u00e9', '\n\n*nat']) {
      expect(isBlank(text), JSON.stringify(text)).toBe(text.trim() === '')
    }
  })
})
