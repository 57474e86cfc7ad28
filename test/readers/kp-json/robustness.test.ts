/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated saved ProxyStates
 * through readState, sniffed and forced: text cuts and noise, and members deleted, repeated or
 * of a wrong type (null, huge numbers, nesting past the stack). Each round must give a sane
 * state (../robustness.ts): a saved state with a share of 2 is refused, not passed on.
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
  '2',
  '0.5',
  '"x"',
  '""',
  '"share"',
  '"port"',
  '"line"',
  '"services"',
  '"endpoints"',
  '"ProxyState"',
  '"\\n"',
  '"\\u001b[31m"',
]

describe('mutated saved states never make the reader throw', () => {
  const files = [
    'fixtures/kp-json/overall/state.json',
    'fixtures/kp-json/control-chars/state.json',
    'fixtures/migrate/ipvs-node-a/state.json',
    'fixtures/diff/upstream-overall/nftables.state.json',
  ]
  for (const file of files) {
    it(file, async () => {
      await mutatedReads({files: [file], format: 'kp-json', noise: NOISE, rounds: 150})
    })
  }
})
