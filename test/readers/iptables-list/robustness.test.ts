/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated
 * `iptables -L` listings (-n -v, -x with --line-numbers, without -v, without -n, one chain)
 * through readState, sniffed and forced, with the listing's own odd words. Each round must give
 * a sane state (../robustness.ts).
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  'Chain ',
  'Chain X (policy ACCEPT)\n',
  'Chain KUBE-SERVICES (1 references)\n',
  ' pkts bytes target     prot opt in     out     source               destination\n',
  'num  target     prot opt source               destination\n',
  '--',
  '!',
  '*',
  '/*',
  '*/',
  ' */',
  'tcp dpt:',
  'dpt:!',
  'dpts:1:',
  'to:',
  'recent: CHECK',
  'name:',
  'statistic mode random probability',
  'MARK or',
  'ADDRTYPE match dst-type',
  'multiport dports',
  '[goto]',
  '!10.0.0.0/8',
  '::/0',
  'anywhere',
  'localhost',
  '1K',
  '99999999999999999999',
]

describe('mutated iptables -L listings never make the reader throw', () => {
  for (const file of [
    'fixtures/iptables-list/overall/nat-filter-n-v.txt',
    'fixtures/iptables-list/overall/nat-filter-n-v-x-line-numbers.txt',
    'fixtures/iptables-list/node-with-cni/nat-filter-n.txt',
    'fixtures/iptables-list/ipv6/nat-names.txt',
    'fixtures/iptables-list/k8s-1.1/nat-kube-services-n-v.txt',
  ])
    it(file, async () => {
      await mutatedReads({files: [file], format: 'iptables-list', noise: NOISE, rounds: 150})
    })
})
