import {describe, expect, it} from 'vitest'
import type {ForeignObject} from '../../../src/model/types.js'
import {one, plan, sp, state} from './states.js'

const rule = (text: string, line: number): ForeignObject => ({
  kind: 'iptables-rule',
  name: text.split(' ')[1] ?? text,
  reason: text,
  source: {path: 'iptables-save.txt', line},
})

describe('other components that use kube-proxy objects (caveat 6)', () => {
  it('MIGRATE_FOREIGN_REFERENCES: jumps to KUBE-* chains and the masquerade mark, leaving iptables', () => {
    const s = state('iptables', [sp('a')], {masqueradeMark: '0x00004000'})
    s.foreign.push(
      rule('-A cali-FORWARD -m comment --comment "cali:x" -j KUBE-SERVICES', 20),
      rule('-A CILIUM_POST_nat -m mark --mark 0x4000/0x4000 -j ACCEPT', 31),
      rule('-A DOCKER -i docker0 -j RETURN', 40),
    )
    const f = one(s, 'nftables', 'MIGRATE_FOREIGN_REFERENCES')
    expect(f.severity).toBe('warning')
    expect(f.evidence).toEqual([
      {path: 'iptables-save.txt', line: 20},
      {path: 'iptables-save.txt', line: 31},
    ])
  })

  it('iptables to ipvs: only the per-service chains vanish; KUBE-SERVICES and the mark stay', () => {
    const s = state('iptables', [sp('a')])
    s.foreign.push(
      rule('-A cali-FORWARD -j KUBE-SERVICES', 20),
      rule('-A X -m mark --mark 0x4000/0x4000 -j ACCEPT', 21),
    )
    expect(plan(s, 'ipvs', 'MIGRATE_FOREIGN_REFERENCES')).toEqual([])
    s.foreign.push(rule('-A monitor -j KUBE-SVC-ERIFXISQEP7F7OF4', 22))
    expect(one(s, 'ipvs', 'MIGRATE_FOREIGN_REFERENCES').evidence).toEqual([
      {path: 'iptables-save.txt', line: 22},
    ])
  })

  it('ipvs to iptables: rules matching KUBE-* ipsets or kube-ipvs0 are hit', () => {
    const s = state('ipvs', [sp('a')])
    s.foreign.push(rule('-A nodelocaldns -m set --match-set KUBE-CLUSTER-IP dst,dst -j NOTRACK', 5))
    expect(one(s, 'iptables', 'MIGRATE_FOREIGN_REFERENCES').evidence).toEqual([
      {path: 'iptables-save.txt', line: 5},
    ])
  })

  it('MIGRATE_FOREIGN_REFERENCES_UNVERIFIED when the input is cluster objects', () => {
    expect(
      one(state('cluster', [sp('a')]), 'nftables', 'MIGRATE_FOREIGN_REFERENCES_UNVERIFIED', {
        from: 'iptables',
      }).severity,
    ).toBe('info')
    expect(
      plan(state('iptables', [sp('a')]), 'nftables', 'MIGRATE_FOREIGN_REFERENCES_UNVERIFIED'),
    ).toEqual([])
  })

  it('MIGRATE_IPVS_AWARE_AGENTS_UNVERIFIED when leaving ipvs only', () => {
    expect(one(state('ipvs'), 'nftables', 'MIGRATE_IPVS_AWARE_AGENTS_UNVERIFIED').severity).toBe(
      'info',
    )
    expect(plan(state('iptables'), 'nftables', 'MIGRATE_IPVS_AWARE_AGENTS_UNVERIFIED')).toEqual([])
  })

  it('MIGRATE_LEFTOVERS lists objects of another mode', () => {
    const s = state('iptables')
    s.foreign.push({
      kind: 'leftover',
      name: 'KUBE-IPVS-FILTER',
      reason: 'ipvs mode chain in an iptables-mode node',
      source: {path: 'iptables-save.txt', line: 3},
    })
    expect(one(s, 'nftables', 'MIGRATE_LEFTOVERS').evidence).toEqual([
      {path: 'iptables-save.txt', line: 3},
    ])
    expect(plan(state('iptables'), 'nftables', 'MIGRATE_LEFTOVERS')).toEqual([])
  })
})
