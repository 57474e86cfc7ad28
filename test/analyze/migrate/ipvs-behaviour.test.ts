import {describe, expect, it} from 'vitest'
import {ep, fe, one, plan, sp, state} from './states.js'

describe('IPVS schedulers and weights (caveat 7)', () => {
  it('MIGRATE_IPVS_SCHEDULER_STICKY: warning for sh without affinity, info when all have ClientIP affinity', () => {
    const f = one(
      state('ipvs', [sp('a', {scheduler: 'sh'}), sp('b', {scheduler: 'rr'})]),
      'nftables',
      'MIGRATE_IPVS_SCHEDULER_STICKY',
    )
    expect(f.severity).toBe('warning')
    expect(f.services).toEqual(['ns/a:http/tcp'])
    expect(
      one(
        state('ipvs', [
          sp('a', {scheduler: 'mh', sessionAffinity: {type: 'ClientIP', timeoutSeconds: 10800}}),
        ]),
        'iptables',
        'MIGRATE_IPVS_SCHEDULER_STICKY',
      ).severity,
    ).toBe('info')
    expect(
      plan(
        state('ipvs', [sp('a', {scheduler: 'rr'})]),
        'nftables',
        'MIGRATE_IPVS_SCHEDULER_STICKY',
      ),
    ).toEqual([])
  })

  it('MIGRATE_IPVS_SCHEDULER_LOAD_AWARE for lc and friends, not for rr or wrr', () => {
    expect(
      one(
        state('ipvs', [sp('a', {scheduler: 'lc'})]),
        'nftables',
        'MIGRATE_IPVS_SCHEDULER_LOAD_AWARE',
      ).title,
    ).toContain('lc')
    expect(
      plan(
        state('ipvs', [sp('a', {scheduler: 'wrr'}), sp('b', {scheduler: 'rr'})]),
        'nftables',
        'MIGRATE_IPVS_SCHEDULER_LOAD_AWARE',
      ),
    ).toEqual([])
  })

  it("MIGRATE_IPVS_WEIGHTS for hand-set weights; kube-proxy's 1 and draining 0 are not", () => {
    const weighted = sp('a', {
      endpoints: [ep('10.244.1.5', 8080, {weight: 3}), ep('10.244.2.7', 8080, {weight: 1})],
    })
    expect(one(state('ipvs', [weighted]), 'nftables', 'MIGRATE_IPVS_WEIGHTS').addresses).toEqual([
      '10.244.1.5:8080 weight 3',
    ])
    const normal = sp('b', {
      endpoints: [
        ep('10.244.1.5', 8080, {weight: 1}),
        ep('10.244.2.7', 8080, {weight: 0, state: 'draining'}),
      ],
    })
    expect(plan(state('ipvs', [normal]), 'nftables', 'MIGRATE_IPVS_WEIGHTS')).toEqual([])
  })
})

describe('session affinity (caveat 8)', () => {
  const sticky = (t: number) => sp('s', {sessionAffinity: {type: 'ClientIP', timeoutSeconds: t}})
  it('MIGRATE_SESSION_AFFINITY_SCOPE: warning under 120 s, info otherwise, both ways across IPVS', () => {
    expect(
      one(state('ipvs', [sticky(60)]), 'nftables', 'MIGRATE_SESSION_AFFINITY_SCOPE').severity,
    ).toBe('warning')
    expect(
      one(state('ipvs', [sticky(10800)]), 'nftables', 'MIGRATE_SESSION_AFFINITY_SCOPE').severity,
    ).toBe('info')
    expect(
      one(state('iptables', [sticky(10800)]), 'ipvs', 'MIGRATE_SESSION_AFFINITY_SCOPE').services,
    ).toEqual(['ns/s:http/tcp'])
  })
  it('not between iptables and nftables (same semantics), nor without affinity', () => {
    expect(
      plan(state('iptables', [sticky(60)]), 'nftables', 'MIGRATE_SESSION_AFFINITY_SCOPE'),
    ).toEqual([])
    expect(plan(state('ipvs', [sp('a')]), 'nftables', 'MIGRATE_SESSION_AFFINITY_SCOPE')).toEqual([])
  })
})

describe('service IPs as local addresses (caveats 9, 10, 14)', () => {
  const lb = sp('lb', {
    frontends: [fe('ClusterIP', '10.96.0.30', 443), fe('LoadBalancer', '203.0.113.10', 443)],
  })

  it('MIGRATE_IPVS_VIPS_NOT_LOCAL: warning with external addresses, strictARP read from the sysctls', () => {
    const f = one(state('ipvs', [lb]), 'nftables', 'MIGRATE_IPVS_VIPS_NOT_LOCAL', {
      sysctls: {'net.ipv4.conf.all.arp_ignore': '1', 'net.ipv4.conf.all.arp_announce': '2'},
    })
    expect(f.severity).toBe('warning')
    expect(f.addresses).toEqual(['10.96.0.30', '203.0.113.10'])
    expect(f.message).toContain('strictARP is on')
    expect(one(state('ipvs', [sp('a')]), 'nftables', 'MIGRATE_IPVS_VIPS_NOT_LOCAL').severity).toBe(
      'info',
    )
    expect(plan(state('iptables', [lb]), 'nftables', 'MIGRATE_IPVS_VIPS_NOT_LOCAL')).toEqual([])
  })

  it('MIGRATE_VIPS_BECOME_LOCAL when moving to ipvs', () => {
    expect(one(state('nftables', [lb]), 'ipvs', 'MIGRATE_VIPS_BECOME_LOCAL').severity).toBe(
      'warning',
    )
    expect(plan(state('nftables', [lb]), 'iptables', 'MIGRATE_VIPS_BECOME_LOCAL')).toEqual([])
  })

  it('MIGRATE_IPVS_VIP_OTHER_PORTS and MIGRATE_IPVS_CONFIG when leaving ipvs', () => {
    expect(one(state('ipvs', [sp('a')]), 'nftables', 'MIGRATE_IPVS_VIP_OTHER_PORTS').severity).toBe(
      'info',
    )
    expect(plan(state('ipvs'), 'nftables', 'MIGRATE_IPVS_VIP_OTHER_PORTS')).toEqual([])
    expect(
      one(state('ipvs'), 'iptables', 'MIGRATE_IPVS_CONFIG', {
        sysctls: {'net.ipv4.vs.conntrack': '1'},
      }).message,
    ).toContain('net.ipv4.vs.conntrack=1')
    expect(plan(state('iptables'), 'nftables', 'MIGRATE_IPVS_CONFIG')).toEqual([])
  })
})

describe('Local traffic policies without local endpoints (caveat 12)', () => {
  const etpLocal = (local: boolean | null) =>
    sp('web', {
      frontends: [fe('ClusterIP', '10.96.0.40', 80), fe('NodePort', '10.0.0.10', 30040)],
      externalTrafficPolicy: 'Local',
      internalTrafficPolicy: 'Cluster',
      endpoints: [ep('10.244.2.7', 8080, {local: false}), ep('10.244.3.9', 8080, {local})],
    })

  it('MIGRATE_IPVS_LOCAL_FALLBACK: IPVS serves remote endpoints today, nftables will drop', () => {
    const f = one(state('ipvs', [etpLocal(false)]), 'nftables', 'MIGRATE_IPVS_LOCAL_FALLBACK')
    expect(f.severity).toBe('error')
    expect(f.addresses).toEqual(['10.0.0.10:30040'])
    expect(
      plan(state('ipvs', [etpLocal(true)]), 'nftables', 'MIGRATE_IPVS_LOCAL_FALLBACK'),
    ).toEqual([])
  })

  it('internalTrafficPolicy Local counts only for an externally reachable service', () => {
    const itp = (
      frontends = [fe('ClusterIP', '10.96.0.41', 80), fe('ExternalIP', '192.168.99.22', 80)],
    ) =>
      sp('itp', {
        frontends,
        internalTrafficPolicy: 'Local',
        externalTrafficPolicy: 'Cluster',
        endpoints: [ep('10.244.2.7', 8080, {local: false})],
      })
    expect(
      one(state('cluster', [itp()]), 'nftables', 'MIGRATE_IPVS_LOCAL_FALLBACK', {from: 'ipvs'})
        .addresses,
    ).toEqual(['10.96.0.41:80'])
    expect(
      plan(
        state('cluster', [itp([fe('ClusterIP', '10.96.0.41', 80)])]),
        'nftables',
        'MIGRATE_IPVS_LOCAL_FALLBACK',
        {from: 'ipvs'},
      ),
    ).toEqual([])
  })

  it('MIGRATE_IPVS_LOCAL_FALLBACK_UNVERIFIED when policies or locality are unknown (IPVS without cluster objects)', () => {
    const bare = sp('web', {
      namespace: null,
      name: null,
      portName: null,
      frontends: [fe('ClusterIP', '10.96.0.40', 80), fe('NodePort', '10.0.0.10', 30040)],
    })
    const f = one(state('ipvs', [bare]), 'nftables', 'MIGRATE_IPVS_LOCAL_FALLBACK_UNVERIFIED')
    expect(f.severity).toBe('warning')
    expect(f.services).toEqual(['10.96.0.40:80/TCP'])
    expect(
      one(state('ipvs', [etpLocal(null)]), 'nftables', 'MIGRATE_IPVS_LOCAL_FALLBACK_UNVERIFIED')
        .services,
    ).toEqual(['ns/web:http/tcp'])
    expect(
      plan(state('ipvs', [sp('plain')]), 'nftables', 'MIGRATE_IPVS_LOCAL_FALLBACK_UNVERIFIED'),
    ).toEqual([])
  })

  it("MIGRATE_LOCAL_POLICY_FALLBACK_ADDED: today's Local-policy drops become forwards in ipvs", () => {
    const dropping = sp('web', {
      frontends: [fe('ClusterIP', '10.96.0.40', 80), fe('NodePort', null, 30040, {action: 'drop'})],
      externalTrafficPolicy: 'Local',
    })
    expect(
      one(state('iptables', [dropping]), 'ipvs', 'MIGRATE_LOCAL_POLICY_FALLBACK_ADDED').addresses,
    ).toEqual(['*:30040'])
    expect(
      plan(state('iptables', [sp('a')]), 'ipvs', 'MIGRATE_LOCAL_POLICY_FALLBACK_ADDED'),
    ).toEqual([])
  })
})

describe('draining and dual-stack (caveats 13, 16)', () => {
  it('MIGRATE_IPVS_DRAINING lists weight-0 real servers', () => {
    const s = state('ipvs', [
      sp('a', {
        endpoints: [
          ep('10.244.1.5', 8080, {weight: 1}),
          ep('10.244.2.7', 8080, {weight: 0, state: 'draining'}),
        ],
      }),
    ])
    expect(one(s, 'nftables', 'MIGRATE_IPVS_DRAINING').addresses).toEqual(['10.244.2.7:8080'])
    expect(plan(state('ipvs', [sp('a')]), 'nftables', 'MIGRATE_IPVS_DRAINING')).toEqual([])
  })

  it('MIGRATE_IPVS_DUAL_STACK only with IPv6 service ports', () => {
    const v6 = sp('a', {family: 'IPv6', frontends: [fe('ClusterIP', 'fd00:10:96::a', 53)]})
    expect(one(state('ipvs', [v6]), 'nftables', 'MIGRATE_IPVS_DUAL_STACK').message).toContain(
      'table ip6 kube-proxy',
    )
    expect(plan(state('ipvs', [sp('b')]), 'nftables', 'MIGRATE_IPVS_DUAL_STACK')).toEqual([])
  })
})

describe('IPVS frontends that disagree (kubernetes #89923)', () => {
  const four = [ep('10.244.1.5', 8080), ep('10.244.2.7', 8080), ep('10.244.3.3', 8080)]
  const disagreeing = (own: ReturnType<typeof ep>[]) =>
    sp('web', {
      scheduler: 'rr',
      frontends: [
        fe('ClusterIP', '10.96.0.10', 80),
        fe('NodePort', null, 30080),
        fe('NodePort', '127.0.0.1', 30080, {endpoints: own}),
      ],
      endpoints: four,
    })

  it('MIGRATE_IPVS_FRONTENDS_DISAGREE lists both endpoint lists, for every target mode', () => {
    const s = state('ipvs', [disagreeing(four.slice(0, 2)), sp('other', {scheduler: 'rr'})])
    for (const to of ['nftables', 'iptables', 'ipvs'] as const) {
      const f = one(s, to, 'MIGRATE_IPVS_FRONTENDS_DISAGREE')
      expect(f.severity).toBe('warning')
      expect(f.services).toEqual(['ns/web:http/tcp'])
      expect(f.addresses).toEqual([
        `NodePort 127.0.0.1:30080 has ${four
          .slice(0, 2)
          .map((e) => `${e.ip}:${e.port}`)
          .join(
            ', ',
          )} (lacks 10.244.3.3:8080); the service port has ${four.map((e) => `${e.ip}:${e.port}`).join(', ')}`,
      ])
      expect(f.title).toContain(`${to} mode gives them one set`)
      expect(f.message).not.toContain('may be stale')
    }
  })

  it('a real server only one frontend has is said to be rendered for every frontend', () => {
    const s = state('ipvs', [disagreeing([...four, ep('10.244.9.9', 8080)])])
    const f = one(s, 'nftables', 'MIGRATE_IPVS_FRONTENDS_DISAGREE')
    expect(f.addresses[0]).toContain('(alone has 10.244.9.9:8080)')
    expect(f.message).toContain('may be stale')
  })

  it('no finding when every frontend uses the service port`s endpoints', () => {
    const s = state('ipvs', [sp('web', {scheduler: 'rr', endpoints: four})])
    expect(plan(s, 'nftables', 'MIGRATE_IPVS_FRONTENDS_DISAGREE')).toEqual([])
  })
})
