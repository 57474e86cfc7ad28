/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated `ip addr`, `ip -o
 * addr` and `ip -j [-p] addr` dumps through readState, sniffed and forced; the JSON ones also
 * with members deleted, repeated or of a wrong type. Each round must give a sane state
 * (../robustness.ts).
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  'inet ',
  'inet6 ',
  '10.0.0.1/32',
  '10.0.0.1/99',
  'fe80::1/129',
  '::/0',
  'kube-ipvs0',
  '3: ',
  '4: kube-ipvs0: <BROADCAST,NOARP> mtu 1500\n',
  'scope global',
  'valid_lft forever',
  '"ifname"',
  '"addr_info"',
  '"local"',
  '"prefixlen"',
  '{',
  '}',
  '[',
  ']',
  'null',
]

describe('mutated ip addr dumps never make the reader throw', () => {
  for (const file of [
    'ip-addr.txt',
    'ip-addr-show-kube-ipvs0.txt',
    'ip-o-addr-show-kube-ipvs0.txt',
    'ip-j-addr-show-kube-ipvs0.json',
    'ip-j-p-addr.json',
  ]) {
    it(file, async () => {
      await mutatedReads({
        files: [`fixtures/ip-addr/real-netns/${file}`],
        format: 'ip-addr',
        noise: NOISE,
        rounds: 150,
      })
    })
  }
})
