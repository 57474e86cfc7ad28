import {describe, expect, it} from 'vitest'
import {one, plan, state} from './states.js'

const LIBERAL = {'net.netfilter.nf_conntrack_tcp_be_liberal': '1'}

describe('conntrack INVALID-drop workaround (caveat 5)', () => {
  it('MIGRATE_CONNTRACK_INVALID_DROP: warning on a kernel with the bug, info on one with the fix', () => {
    expect(
      one(
        state('iptables', [], {conntrackInvalidDrop: true, kernel: '5.15.0'}),
        'nftables',
        'MIGRATE_CONNTRACK_INVALID_DROP',
      ).severity,
    ).toBe('warning')
    expect(
      one(
        state('iptables', [], {conntrackInvalidDrop: true, kernel: '6.1.0'}),
        'nftables',
        'MIGRATE_CONNTRACK_INVALID_DROP',
      ).severity,
    ).toBe('info')
    expect(
      one(
        state('iptables', [], {conntrackInvalidDrop: true}),
        'ipvs',
        'MIGRATE_CONNTRACK_INVALID_DROP',
      ).severity,
    ).toBe('warning')
    expect(
      plan(
        state('iptables', [], {conntrackInvalidDrop: false}),
        'nftables',
        'MIGRATE_CONNTRACK_INVALID_DROP',
      ),
    ).toEqual([])
  })

  it('MIGRATE_CONNTRACK_INVALID_DROP_UNVERIFIED unless tcp_be_liberal shows the rule is off', () => {
    expect(
      one(state('iptables'), 'nftables', 'MIGRATE_CONNTRACK_INVALID_DROP_UNVERIFIED').severity,
    ).toBe('info')
    expect(
      plan(state('iptables'), 'nftables', 'MIGRATE_CONNTRACK_INVALID_DROP_UNVERIFIED', {
        sysctls: LIBERAL,
      }),
    ).toEqual([])
  })

  it('MIGRATE_CONNTRACK_INVALID_DROP_ADDED when iptables mode would add it', () => {
    expect(
      one(state('nftables'), 'iptables', 'MIGRATE_CONNTRACK_INVALID_DROP_ADDED').severity,
    ).toBe('info')
    expect(
      plan(state('nftables'), 'iptables', 'MIGRATE_CONNTRACK_INVALID_DROP_ADDED', {
        sysctls: LIBERAL,
      }),
    ).toEqual([])
    expect(
      plan(state('nftables'), 'iptables', 'MIGRATE_CONNTRACK_INVALID_DROP_ADDED', {
        target: {conntrackInvalidDrop: false},
      }),
    ).toEqual([])
    expect(plan(state('nftables'), 'ipvs', 'MIGRATE_CONNTRACK_INVALID_DROP_ADDED')).toEqual([])
  })

  it('MIGRATE_CONNTRACK_KERNEL_BUG for ipvs to nftables on a kernel before 6.1 only', () => {
    expect(
      one(
        state('ipvs', [], {kernel: '5.15.0-91-generic'}),
        'nftables',
        'MIGRATE_CONNTRACK_KERNEL_BUG',
      ).severity,
    ).toBe('info')
    expect(
      plan(state('ipvs', [], {kernel: '6.6.0'}), 'nftables', 'MIGRATE_CONNTRACK_KERNEL_BUG'),
    ).toEqual([])
    expect(plan(state('ipvs'), 'nftables', 'MIGRATE_CONNTRACK_KERNEL_BUG')).toEqual([])
  })

  it('MIGRATE_MASQUERADE_FULLY_RANDOM when iptables or ipvs mode masquerades without --random-fully', () => {
    expect(
      one(
        state('iptables', [], {randomFully: false}),
        'nftables',
        'MIGRATE_MASQUERADE_FULLY_RANDOM',
      ).severity,
    ).toBe('info')
    expect(
      one(state('ipvs', [], {randomFully: false}), 'nftables', 'MIGRATE_MASQUERADE_FULLY_RANDOM')
        .severity,
    ).toBe('info')
    expect(
      one(state('iptables'), 'nftables', 'MIGRATE_MASQUERADE_FULLY_RANDOM_UNVERIFIED').severity,
    ).toBe('info')
    expect(
      plan(
        state('iptables', [], {randomFully: true}),
        'nftables',
        'MIGRATE_MASQUERADE_FULLY_RANDOM',
      ),
    ).toEqual([])
    expect(
      plan(state('iptables', [], {randomFully: false}), 'ipvs', 'MIGRATE_MASQUERADE_FULLY_RANDOM'),
    ).toEqual([])
    expect(
      plan(
        state('nftables', [], {randomFully: true}),
        'iptables',
        'MIGRATE_MASQUERADE_FULLY_RANDOM',
      ),
    ).toEqual([])
  })
})
