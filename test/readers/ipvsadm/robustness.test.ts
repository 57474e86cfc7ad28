/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated `ipvsadm -Ln`
 * (plain, --stats, --rate, --persistent-conn, one service, names) and `-Sn` listings through
 * readState, sniffed and forced, with ipvsadm's own odd tokens: bracketed IPv6, ports past
 * 65535, negative and huge weights, tabs. Each round must give a sane state (../robustness.ts).
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  'TCP',
  'UDP',
  'SCTP',
  'FWM',
  '  -> ',
  '[::1]:80',
  '[fe80::1]:99999',
  '[',
  ']',
  '1.2.3.4:65536',
  '1.2.3.4:-1',
  '999.1.1.1:80',
  ':80',
  '[::]:',
  'Masq',
  'Route',
  'Tunnel',
  'rr',
  'sh',
  'persistent 99999999999',
  'persistent',
  'Prot LocalAddress:Port Scheduler Flags\n',
  '-A -t ',
  '-a -t ',
  '-r ',
  '-s rr',
  '-w',
  '-w -5',
  '-w 99999999999',
  '-p',
  '-m',
  '-g',
  '-f 5',
  '1K',
  '\t\t',
]

describe('mutated ipvsadm listings never make the reader throw', () => {
  const files = [
    'fixtures/ipvsadm/variants/ipvsadm-Ln.txt',
    'fixtures/ipvsadm/variants/ipvsadm-Sn.txt',
    'fixtures/ipvsadm/non-numeric/ipvsadm-L.txt',
    'fixtures/ipvsadm/single-service/ipvsadm-Ln-t-10.96.100.20-80.txt',
    'fixtures/ipvsadm/foreign-only/ipvsadm-Ln.txt',
    'fixtures/ipvs/generated/ipvsadm-Ln--stats.txt',
    'fixtures/ipvs/generated/ipvsadm-Ln--rate.txt',
    'fixtures/ipvs/generated/ipvsadm-Ln--persistent-conn.txt',
  ]
  for (const file of files) {
    it(file, async () => {
      await mutatedReads({files: [file], format: 'ipvsadm', noise: NOISE, rounds: 150})
    })
  }
})
