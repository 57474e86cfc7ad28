import {describe, expect, it} from 'vitest'
import {fe, one, plan, sp, state} from './states.js'

const nodePortSvc = (name: string, ips: (string | null)[], extra = {}) =>
  sp(name, {
    frontends: [fe('ClusterIP', '10.96.0.20', 80), ...ips.map((ip) => fe('NodePort', ip, 30080))],
    rules: [{path: 'ipvsadm.txt', line: 4}],
    ...extra,
  })

describe('NodePort listen addresses (caveat 2)', () => {
  it('MIGRATE_NODEPORT_ADDRESSES lists the addresses IPVS serves NodePorts on', () => {
    const f = one(
      state('ipvs', [nodePortSvc('web', ['10.0.0.10', '172.17.0.1'])]),
      'nftables',
      'MIGRATE_NODEPORT_ADDRESSES',
    )
    expect(f.severity).toBe('warning')
    expect(f.addresses).toEqual(['10.0.0.10', '172.17.0.1'])
    expect(f.services).toEqual(['ns/web:http/tcp'])
    expect(f.evidence).toEqual([{path: 'ipvsadm.txt', line: 4}])
  })

  it('also when the reader lists the IPVS NodePort addresses in node.nodePortAddresses', () => {
    const s = state('ipvs', [nodePortSvc('web', [null])], {
      nodePortAddresses: ['10.0.0.10', '192.168.50.4'],
    })
    expect(one(s, 'nftables', 'MIGRATE_NODEPORT_ADDRESSES').addresses).toEqual([
      '10.0.0.10',
      '192.168.50.4',
    ])
  })

  it('iptables with nodePortAddresses [] (every address) is a verified finding; null is unverified', () => {
    expect(
      one(
        state('iptables', [nodePortSvc('web', [null])], {nodePortAddresses: []}),
        'nftables',
        'MIGRATE_NODEPORT_ADDRESSES',
      ).addresses,
    ).toEqual([])
    expect(
      one(
        state('iptables', [nodePortSvc('web', [null])]),
        'nftables',
        'MIGRATE_NODEPORT_ADDRESSES_UNVERIFIED',
      ).severity,
    ).toBe('warning')
  })

  it('nothing when nodePortAddresses is set, when there are no NodePorts, or when the target is not nftables', () => {
    const ids = ['MIGRATE_NODEPORT_ADDRESSES', 'MIGRATE_NODEPORT_ADDRESSES_UNVERIFIED']
    for (const id of ids) {
      expect(
        plan(
          state('iptables', [nodePortSvc('web', [null])], {nodePortAddresses: ['10.0.0.0/24']}),
          'nftables',
          id,
        ),
      ).toEqual([])
      expect(
        plan(state('iptables', [sp('plain')], {nodePortAddresses: []}), 'nftables', id),
      ).toEqual([])
      expect(plan(state('iptables', [nodePortSvc('web', [null])]), 'ipvs', id)).toEqual([])
    }
  })

  it('nothing when the operator already sets nodePortAddresses for the target (--nodeport-addresses)', () => {
    const target = {nodePortAddresses: ['0.0.0.0/0']}
    expect(
      plan(
        state('ipvs', [nodePortSvc('web', ['10.0.0.10', '172.17.0.1'])]),
        'nftables',
        'MIGRATE_NODEPORT_ADDRESSES',
        {target},
      ),
    ).toEqual([])
    expect(
      plan(
        state('nftables', [nodePortSvc('web', [null])]),
        'iptables',
        'MIGRATE_NODEPORT_ADDRESSES_WIDEN',
        {target},
      ),
    ).toEqual([])
  })

  it('MIGRATE_NODEPORT_ADDRESSES_WIDEN from nftables to the other modes', () => {
    expect(
      one(
        state('nftables', [nodePortSvc('web', [null])]),
        'iptables',
        'MIGRATE_NODEPORT_ADDRESSES_WIDEN',
      ).severity,
    ).toBe('info')
    expect(
      plan(state('nftables', [sp('plain')]), 'iptables', 'MIGRATE_NODEPORT_ADDRESSES_WIDEN'),
    ).toEqual([])
  })
})

describe('NodePorts on 127.0.0.1 (caveat 3)', () => {
  const web = nodePortSvc('web', [null])

  it('MIGRATE_LOCALHOST_NODEPORTS when the iptables rules accept localhost NodePorts', () => {
    const f = one(
      state('iptables', [web], {localhostNodePorts: true}),
      'nftables',
      'MIGRATE_LOCALHOST_NODEPORTS',
    )
    expect(f.severity).toBe('warning')
    expect(f.addresses).toEqual(['127.0.0.1:30080'])
    expect(
      one(
        state('iptables', [web], {localhostNodePorts: true}),
        'ipvs',
        'MIGRATE_LOCALHOST_NODEPORTS',
      ).title,
    ).toContain('ipvs')
  })

  it('falls back to the route_localnet sysctl of a bundle when the rules do not say', () => {
    const s = state('iptables', [web])
    expect(
      one(s, 'nftables', 'MIGRATE_LOCALHOST_NODEPORTS', {
        sysctls: {'net.ipv4.conf.all.route_localnet': '1'},
      }).message,
    ).toContain('route_localnet=1')
    expect(
      plan(s, 'nftables', 'MIGRATE_LOCALHOST_NODEPORTS', {
        sysctls: {'net.ipv4.conf.all.route_localnet': '0'},
      }),
    ).toEqual([])
    expect(
      plan(s, 'nftables', 'MIGRATE_LOCALHOST_NODEPORTS_UNVERIFIED', {
        sysctls: {'net.ipv4.conf.all.route_localnet': '0'},
      }),
    ).toEqual([])
    expect(one(s, 'nftables', 'MIGRATE_LOCALHOST_NODEPORTS_UNVERIFIED').severity).toBe('info')
  })

  it('nothing when localhost NodePorts are off, or for IPv6-only NodePorts', () => {
    expect(
      plan(
        state('iptables', [web], {localhostNodePorts: false}),
        'nftables',
        'MIGRATE_LOCALHOST_NODEPORTS',
      ),
    ).toEqual([])
    const v6 = sp('v6', {
      family: 'IPv6',
      frontends: [fe('ClusterIP', 'fd00::20', 80), fe('NodePort', null, 30080)],
    })
    expect(
      plan(
        state('iptables', [v6], {localhostNodePorts: true}),
        'nftables',
        'MIGRATE_LOCALHOST_NODEPORTS',
      ),
    ).toEqual([])
  })

  it("IPVS: only an old kube-proxy's 127.0.0.1 virtual server is a regression (issue 89923)", () => {
    expect(
      one(
        state('ipvs', [nodePortSvc('old', ['10.0.0.10', '127.0.0.1'])]),
        'nftables',
        'MIGRATE_LOCALHOST_NODEPORTS',
      ).addresses,
    ).toEqual(['127.0.0.1:30080'])
    expect(
      plan(
        state('ipvs', [nodePortSvc('new', ['10.0.0.10'])]),
        'nftables',
        'MIGRATE_LOCALHOST_NODEPORTS',
      ),
    ).toEqual([])
    const listed = state('ipvs', [nodePortSvc('old', [null])], {
      nodePortAddresses: ['10.0.0.10', '127.0.0.1'],
    })
    expect(one(listed, 'nftables', 'MIGRATE_LOCALHOST_NODEPORTS').addresses).toEqual([
      '127.0.0.1:30080',
    ])
    expect(
      plan(
        state('ipvs', [nodePortSvc('new', [null])], {nodePortAddresses: ['10.0.0.10']}),
        'nftables',
        'MIGRATE_LOCALHOST_NODEPORTS',
      ),
    ).toEqual([])
  })

  it('MIGRATE_LOCALHOST_NODEPORTS_ENABLED when iptables mode would open them', () => {
    expect(
      one(
        state('ipvs', [nodePortSvc('web', ['10.0.0.10'])]),
        'iptables',
        'MIGRATE_LOCALHOST_NODEPORTS_ENABLED',
      ).severity,
    ).toBe('info')
    expect(
      plan(state('ipvs', [sp('plain')]), 'iptables', 'MIGRATE_LOCALHOST_NODEPORTS_ENABLED'),
    ).toEqual([])
    expect(
      plan(
        state('ipvs', [nodePortSvc('web', ['10.0.0.10'])]),
        'iptables',
        'MIGRATE_LOCALHOST_NODEPORTS_ENABLED',
        {target: {localhostNodePorts: false}},
      ),
    ).toEqual([])
  })
})

describe('host firewall (caveat 4)', () => {
  it('MIGRATE_HOST_FIREWALL with the dropping foreign rules as evidence, the NodePorts and the health-check ports', () => {
    const s = state('iptables', [nodePortSvc('lb', [null], {healthCheckNodePort: 32000})])
    s.foreign.push({
      kind: 'iptables-rule',
      name: 'INPUT',
      reason: '-A INPUT -p tcp --dport 30000:32767 -j DROP',
      source: {path: 'iptables-save.txt', line: 9},
    })
    const f = one(s, 'nftables', 'MIGRATE_HOST_FIREWALL')
    expect(f.evidence[0]).toEqual({path: 'iptables-save.txt', line: 9})
    // Was ['*:32000'] alone: the NodePort the finding is about was not among its addresses.
    expect(f.addresses).toEqual(['*:30080', '*:32000'])
    expect(f.action).toBe(
      'Allow the NodePort range (default 30000-32767; in use here: 30080) and the healthCheckNodePorts 32000 in the host firewall, and check the INPUT and FORWARD policies (`iptables-save`, `nft list ruleset`).',
    )
  })

  it('MIGRATE_HOST_FIREWALL_UNVERIFIED names the NodePorts in use, also outside the default range', () => {
    const low = sp('low', {
      frontends: [fe('ClusterIP', '10.96.0.21', 80), fe('NodePort', null, 3001)],
      rules: [{path: 'ipvsadm.txt', line: 5}],
    })
    const f = one(
      state('ipvs', [nodePortSvc('web', ['10.0.0.10']), low]),
      'nftables',
      'MIGRATE_HOST_FIREWALL_UNVERIFIED',
    )
    expect(f.addresses).toEqual(['10.0.0.10:30080', '*:3001'])
    expect(f.action).toContain('(default 30000-32767; in use here: 3001-30080)')
  })

  it('MIGRATE_HOST_FIREWALL_UNVERIFIED when no such rule is seen; nothing without NodePorts', () => {
    expect(
      one(
        state('ipvs', [nodePortSvc('web', ['10.0.0.10'])]),
        'nftables',
        'MIGRATE_HOST_FIREWALL_UNVERIFIED',
      ).message,
    ).toContain('FORWARD')
    expect(
      plan(state('ipvs', [sp('plain')]), 'nftables', 'MIGRATE_HOST_FIREWALL_UNVERIFIED'),
    ).toEqual([])
    expect(
      plan(
        state('iptables', [nodePortSvc('web', [null])]),
        'ipvs',
        'MIGRATE_HOST_FIREWALL_UNVERIFIED',
      ),
    ).toEqual([])
  })
})

describe("the node's own connections to externalIPs (old iptables layouts)", () => {
  it('MIGRATE_NODE_TO_EXTERNAL_IPS names the externalIPs an old layout left un-NATed for the node', () => {
    const svc = sp('web', {
      frontends: [
        fe('ClusterIP', '10.96.0.20', 80),
        {...fe('ExternalIP', '192.0.2.20', 80), nodeSourceExcluded: true},
      ],
      rules: [{path: 'iptables-save.txt', line: 67}],
    })
    const f = one(state('iptables', [svc]), 'nftables', 'MIGRATE_NODE_TO_EXTERNAL_IPS')
    expect(f.severity).toBe('warning')
    expect(f.addresses).toEqual(['192.0.2.20:80'])
    expect(f.evidence).toEqual([{path: 'iptables-save.txt', line: 67}])
  })

  it('says nothing when no frontend shows the exclusion', () => {
    const svc = sp('web', {frontends: [fe('ExternalIP', '192.0.2.20', 80)]})
    expect(plan(state('iptables', [svc]), 'nftables', 'MIGRATE_NODE_TO_EXTERNAL_IPS')).toEqual([])
  })
})

describe("the node's own connections to externalTrafficPolicy=Local services (KUBE-XLB before ≈1.15)", () => {
  const local = (externalFromNode?: 'cluster' | 'policy') =>
    sp('web', {
      externalTrafficPolicy: 'Local',
      ...(externalFromNode ? {externalFromNode} : {}),
      frontends: [
        fe('ClusterIP', '10.96.0.20', 80),
        fe('NodePort', null, 30080),
        fe('LoadBalancer', '198.51.100.6', 80),
      ],
      rules: [{path: 'iptables-save.txt', line: 12}],
    })

  it('MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS names the services and their external frontends', () => {
    for (const to of ['iptables', 'nftables'] as const) {
      const f = one(
        state('iptables', [local('policy')]),
        to,
        'MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS',
      )
      expect(f.severity).toBe('info')
      expect(f.services).toEqual(['ns/web:http/tcp'])
      expect(f.addresses).toEqual(['127.0.0.1:30080', '198.51.100.6:80'])
      expect(f.evidence).toEqual([{path: 'iptables-save.txt', line: 12}])
    }
  })

  it('says nothing for layouts that short-circuit the node (cluster), or that do not show it', () => {
    for (const s of [local('cluster'), local()])
      expect(
        plan(state('iptables', [s]), 'nftables', 'MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS'),
      ).toEqual([])
  })
})
