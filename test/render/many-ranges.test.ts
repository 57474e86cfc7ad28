/**
 * One LoadBalancer with 100,000 loadBalancerSourceRanges (a crafted or broken input). The plan's
 * union of every LB frontend's ranges was made by scanning the list for each range: 80,000 took
 * 18 s per plan, 40 s for `kp migrate --to iptables`. A scan per range does not finish within this
 * test's time limit.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../src/model/types.js'
import {renderNftables} from '../../src/render/nftables/render.js'

describe('a LoadBalancer with 100,000 source ranges', () => {
  it('renders every range once, in linear time', () => {
    const state = JSON.parse(
      readFileSync('fixtures/kp-json/overall/state.json', 'utf8'),
    ) as ProxyState
    const lb = state.services
      .find((sp) => sp.name === 'svc5')!
      .frontends.find((f) => f.type === 'LoadBalancer')!
    const n = 100_000
    lb.sourceRanges = Array.from(
      {length: n},
      (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`,
    )
    // A repeated range is written once.
    lb.sourceRanges.push(lb.sourceRanges[5]!)
    const text = renderNftables(state, {}).text
    const firewall = text.split('\n').find((l) => l.includes('ip saddr != {'))!
    expect(firewall.split(' , ')).toHaveLength(n)
    expect(firewall).toContain(' 10.1.134.159/32 }')
  }, 15_000)
})
