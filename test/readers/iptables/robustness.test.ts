/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated real dumps through
 * readState, sniffed and forced. Each round must give a sane state (../robustness.ts: no throw,
 * errors one line at a real line, shares in 0..1, ports in 0..65535).
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  '!',
  '-j',
  '-A',
  '*nat',
  'COMMIT',
  '[1:2]',
  'KUBE-SEP-',
  '--probability',
  '--probability 1.5',
  '-X KUBE-SVC-',
  '--dport 70000',
  '--to-destination 1.2.3.4:99999',
]

describe('mutated iptables dumps never make the reader throw', () => {
  for (const fixture of [
    'realsave-overall',
    'upstream-overall',
    'handmade-ipv6',
    'handmade-legacy-xlb',
    'list-rules-overall',
    'upstream-syncrepeated-fullresync',
  ]) {
    it(fixture, async () => {
      await mutatedReads({
        files: [`fixtures/iptables/${fixture}/input.rules`],
        format: 'iptables-save',
        noise: NOISE,
        rounds: 150,
      })
    })
  }
})
