import {describe, expect, it} from 'vitest'
import {fe, one, plan, sp, state} from './states.js'

describe('drops an old layout only marks (≤1.24 KUBE-MARK-DROP in nat)', () => {
  const lb = (extra: Record<string, boolean>) =>
    sp('web', {
      frontends: [
        fe('ClusterIP', '10.96.0.20', 80),
        {...fe('LoadBalancer', '198.51.100.5', 443), ...extra},
      ],
      rules: [{path: 'iptables-save.txt', line: 40}],
    })

  it('MIGRATE_MARKED_DROPS_ENFORCED names the LB IP whose outside sources leave un-NATed today', () => {
    const f = one(
      state('iptables', [lb({outsideRangesMarkedForDrop: true})]),
      'nftables',
      'MIGRATE_MARKED_DROPS_ENFORCED',
    )
    expect(f.severity).toBe('warning')
    expect(f.addresses).toEqual(['198.51.100.5:443'])
    expect(f.services).toEqual(['ns/web:http/tcp'])
    expect(f.evidence).toEqual([{path: 'iptables-save.txt', line: 40}])
  })

  it('also for an externalTrafficPolicy=Local address with no local endpoint, and to iptables', () => {
    const f = one(
      state('iptables', [lb({noLocalMarkedForDrop: true})]),
      'iptables',
      'MIGRATE_MARKED_DROPS_ENFORCED',
    )
    expect(f.addresses).toEqual(['198.51.100.5:443'])
  })

  it('says nothing for current layouts, nor toward IPVS', () => {
    expect(plan(state('iptables', [lb({})]), 'nftables', 'MIGRATE_MARKED_DROPS_ENFORCED')).toEqual(
      [],
    )
    expect(
      plan(
        state('iptables', [lb({outsideRangesMarkedForDrop: true})]),
        'ipvs',
        'MIGRATE_MARKED_DROPS_ENFORCED',
      ),
    ).toEqual([])
  })
})
