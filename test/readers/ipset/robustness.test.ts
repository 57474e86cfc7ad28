/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated `ipset save` and
 * `ipset list` dumps through readState, sniffed and forced. Each round must give a sane state
 * (../robustness.ts).
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  'create ',
  'add ',
  'hash:ip,port',
  'hash:ip,port,ip',
  'hash:ip,port,net',
  'bitmap:port',
  'range 0-65535',
  'family inet6',
  'family inet',
  'KUBE-CLUSTER-IP ',
  'KUBE-LOOP-BACK ',
  'KUBE-NODE-PORT-TCP ',
  '10.0.0.1,tcp:80',
  '10.0.0.1,tcp:99999',
  '10.0.0.1,udp:',
  '10.0.0.1,sctp:80,10.0.0.1',
  'fe80::1,tcp:80',
  ',',
  'timeout 5',
  'comment "x"',
  'Name: x\nType: hash:ip\n',
  'Members:\n',
  'Header: ',
  '/33',
  '/-1',
]

describe('mutated ipset dumps never make the reader throw', () => {
  const files = [
    'fixtures/ipset/real-odd/ipset-save.txt',
    'fixtures/ipset/real-odd/ipset-list.txt',
    'fixtures/ipset/old-list/ipset-list.txt',
    'fixtures/ipvs/generated/ipset-save.ipvs-mode.txt',
    'fixtures/ipvs/generated/ipset-list.ipvs-mode.txt',
  ]
  for (const file of files) {
    it(file, async () => {
      await mutatedReads({files: [file], format: 'ipset', noise: NOISE, rounds: 150})
    })
  }
})
