import {describe, expect, it} from 'vitest'
import {indexAtOrBefore, isBlank} from '../../src/core/text.js'

describe('isBlank', () => {
  it('agrees with trim() on what counts as whitespace', () => {
    for (const text of ['', ' ', '\t\r\n', '\u00a0\u2028\ufeff', ' x ', '\u00e9', '\n\n*nat']) {
      expect(isBlank(text), JSON.stringify(text)).toBe(text.trim() === '')
    }
  })
})

describe('indexAtOrBefore', () => {
  it('finds the last start at or before an offset', () => {
    const starts = [0, 5, 9, 20]
    expect([0, 4, 5, 8, 9, 19, 20, 1000].map((o) => indexAtOrBefore(starts, o))).toEqual([
      0, 0, 1, 1, 2, 2, 3, 3,
    ])
    expect(indexAtOrBefore([0], 7)).toBe(0)
  })
})
