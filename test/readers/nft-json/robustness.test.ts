/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated real `nft -j`
 * dumps through readState, sniffed and forced: text cuts and noise, and JSON members deleted,
 * repeated or given a wrong type (null, huge numbers, nesting past the stack, `{"toString": 1}`).
 * Each round must give a sane state (../robustness.ts).
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  'null',
  '0',
  '-1',
  '1e309',
  '{}',
  '[]',
  '"nftables"',
  '"rule"',
  '"chain"',
  '"expr"',
  '"map"',
  '"set"',
  '"elem"',
  '"\\u0000"',
  '"\\n"',
]

describe('mutated nft -j dumps never make the reader throw', () => {
  for (const dir of [
    'upstream-overall',
    'newest-inline-dnat',
    'pretty',
    'iptables-nft-multipleservices-older',
  ]) {
    it(dir, async () => {
      await mutatedReads({
        files: [`fixtures/nft-json/${dir}/input.json`],
        format: 'nft-json',
        noise: NOISE,
        rounds: 120,
      })
    })
  }
})
