import {describe, expect, it} from 'vitest'
import {shortError} from '../../../src/cli/fleet/short-error.js'

describe('shortError', () => {
  it('keeps a short error as it is, on one line', () => {
    expect(shortError('timed out\n  after 300 s')).toBe('timed out after 300 s')
  })
  it('cuts a long one (a quoted shell script) in the middle, keeping how it ends', () => {
    const long = `sh -c '${'printf x; '.repeat(100)}' did not finish within 60 s and was stopped`
    const short = shortError(long)
    expect(short.length).toBeLessThanOrEqual(300)
    expect(short).toMatch(/^sh -c 'printf x;/)
    expect(short).toMatch(/ \.\.\. .*did not finish within 60 s and was stopped$/)
  })
})
