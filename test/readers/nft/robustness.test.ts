/**
 * Readers never throw on bad input (docs/architecture.md): a fixed-seed run of mutated real `nft list`
 * dumps (plain, with handles, the `add ...` transaction form, iptables-nft) through readState,
 * sniffed and forced. Each round must give a sane state (../robustness.ts: no throw, errors one
 * line at a real line, shares in 0..1, ports in 0..65535). Also a node's nft dump read together
 * with an iptables-save dump or cluster objects.
 */
import {describe, it} from 'vitest'
import {COMMON_NOISE, mutatedReads} from '../robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  '{',
  '}',
  ';',
  'map',
  'vmap',
  'set',
  'element',
  '@',
  'numgen random mod',
  'numgen random mod 0',
  'numgen random mod 99999999999',
  'dnat to',
  'dnat ip to',
  ' : ',
  ' . ',
  'goto',
  'jump',
  'table ip kube-proxy {',
  'chain',
  'elements = {',
  'ip daddr',
  'tcp dport',
  '65536',
  '0-65535',
  'comment "',
  '# handle 5',
  '::',
  'meta random & 2147483647 < 4294967296',
  'add rule ip kube-proxy',
  'add element ip kube-proxy service-ips {',
  'timeout -1s',
  'return',
  'drop',
  'reject',
]

describe('mutated nft dumps never make the reader throw', () => {
  for (const file of [
    'upstream-overall/list.nft',
    'upstream-startup/input.nft',
    'upstream-syncrepeated-twoendpoints/list-a.nft',
    'newest-inline-dnat/list-a.nft',
    'iptables-nft-multipleservices-older/input.nft',
  ]) {
    it(file, async () => {
      await mutatedReads({
        files: [`fixtures/nft/${file}`],
        format: 'nft',
        noise: NOISE,
        rounds: 100,
      })
    })
  }

  it('with an iptables-save dump and with cluster objects, either one mutated', async () => {
    await mutatedReads({
      files: [
        'fixtures/nft/upstream-overall/list.nft',
        'fixtures/iptables/upstream-overall/input.rules',
      ],
      mutable: [0],
      noise: NOISE,
      rounds: 60,
    })
    await mutatedReads({
      files: [
        'fixtures/nft/upstream-overall/list.nft',
        'fixtures/kube/iptables-overall/cluster.yaml',
      ],
      noise: NOISE,
      rounds: 60,
    })
  })
})
