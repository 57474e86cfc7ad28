import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import {emptyState} from '../../src/core/state.js'
import type {Endpoint, Frontend, Mode, ProxyState, ServicePort} from '../../src/model/types.js'
import {ROOT} from '../helpers/run-cli.js'
import {upstreamOverallStates} from './diff-upstream-states.js'
import {frontend, proxyState} from '../helpers/builders.js'

const FIXTURES = `${ROOT}fixtures/diff/upstream-overall/`

const fixture = (name: string): ProxyState =>
  JSON.parse(readFileSync(FIXTURES + name, 'utf8')) as ProxyState

const fe = frontend

function ep(ip: string, port: number, extra: Partial<Endpoint> = {}): Endpoint {
  return {ip, port, local: null, share: null, weight: null, state: null, ...extra}
}

function sp(extra: Partial<ServicePort> = {}): ServicePort {
  return {
    namespace: 'ns1',
    name: 'svc1',
    portName: 'http',
    protocol: 'TCP',
    family: 'IPv4',
    frontends: [fe('ClusterIP', '10.96.0.10', 80)],
    healthCheckNodePort: null,
    internalTrafficPolicy: null,
    externalTrafficPolicy: null,
    sessionAffinity: null,
    scheduler: null,
    endpoints: [ep('10.244.1.5', 8080)],
    rules: [],
    ...extra,
  }
}

const state = (mode: Mode, services: ServicePort[]): ProxyState => proxyState(mode, services)

describe('diffStates on the upstream overall scenario (fixtures/diff/upstream-overall)', () => {
  it('the fixtures are still what the generator makes from the corpus', () => {
    for (const [name, s] of Object.entries(upstreamOverallStates()))
      expect(fixture(name), name).toEqual(s)
  })

  it('iptables and nftables of the same scenario are equal (External matches ExternalIP and LoadBalancer)', () => {
    const r = diffStates(fixture('iptables.state.json'), fixture('nftables.state.json'))
    expect(r.services).toEqual([])
    expect(r.node).toEqual([])
    expect(r.equal).toBe(true)
    expect(r.a.mode).toBe('iptables')
    expect(r.b.mode).toBe('nftables')
  })

  it('the older iptables test differs only by ns5/svc5 session affinity (fixtures/PROVENANCE.md)', () => {
    const r = diffStates(fixture('iptables.state.json'), fixture('iptables-older.state.json'))
    expect(r.equal).toBe(false)
    expect(r.services).toEqual([
      {
        service: 'ns5/svc5:p80/tcp',
        change: 'changed',
        differences: [{field: 'sessionAffinity', a: 'ClientIP 10800s', b: 'None'}],
      },
    ])
  })

  it('a state equals itself', () => {
    const s = fixture('iptables.state.json')
    expect(diffStates(s, s).equal).toBe(true)
  })
})

describe('diffStates: matching service ports', () => {
  it('reports ports only in A as removed and only in B as added, with what they have', () => {
    const a = state('iptables', [sp()])
    const b = state('iptables', [
      sp({name: 'svc2', frontends: [fe('ClusterIP', '10.96.0.11', 80)]}),
    ])
    const r = diffStates(a, b)
    expect(r.services).toEqual([
      {
        service: 'ns1/svc1:http/tcp',
        change: 'removed',
        differences: [
          {field: 'frontend', a: 'ClusterIP 10.96.0.10:80', b: null},
          {field: 'endpoint', a: '10.244.1.5:8080', b: null},
        ],
      },
      {
        service: 'ns1/svc2:http/tcp',
        change: 'added',
        differences: [
          {field: 'frontend', a: null, b: 'ClusterIP 10.96.0.11:80'},
          {field: 'endpoint', a: null, b: '10.244.1.5:8080'},
        ],
      },
    ])
  })

  it('matches a nameless IPVS port to the named port with the same ClusterIP, either way round', () => {
    const named = sp({endpoints: [ep('10.244.1.5', 8080)]})
    const nameless = sp({
      namespace: null,
      name: null,
      portName: null,
      scheduler: 'rr',
      endpoints: [ep('10.244.1.6', 8080, {weight: 1})],
    })
    for (const [a, b] of [
      [named, nameless],
      [nameless, named],
    ] as const) {
      const r = diffStates(state('cluster', [a]), state('ipvs', [b]))
      expect(r.services).toHaveLength(1)
      expect(r.services[0]!.service).toBe('ns1/svc1:http/tcp')
      expect(r.services[0]!.change).toBe('changed')
    }
    const r = diffStates(state('cluster', [named]), state('ipvs', [nameless]))
    expect(r.services[0]!.differences).toEqual([
      {field: 'endpoint', a: '10.244.1.5:8080', b: null},
      {field: 'endpoint', a: null, b: '10.244.1.6:8080'},
    ])
  })

  it('does not match a nameless port on a different protocol', () => {
    const nameless = sp({namespace: null, name: null, portName: null, protocol: 'UDP'})
    const r = diffStates(state('cluster', [sp()]), state('ipvs', [nameless]))
    expect(r.services.map((s) => s.change).sort()).toEqual(['added', 'removed'])
  })

  it('keeps the two families of a dual-stack port apart and labels the IPv6 one', () => {
    const v6 = sp({
      family: 'IPv6',
      frontends: [fe('ClusterIP', 'fd00::a', 80)],
      endpoints: [ep('fd00:10::5', 8080)],
    })
    const r = diffStates(state('iptables', [sp(), v6]), state('iptables', [sp()]))
    expect(r.services).toEqual([
      expect.objectContaining({service: 'ns1/svc1:http/tcp (IPv6)', change: 'removed'}),
    ])
  })
})

describe('diffStates: repeated identities, nameless ports, near shares', () => {
  const x = sp({endpoints: [ep('10.244.1.5', 8080)]})
  const y = sp({endpoints: [ep('10.244.1.6', 8080)]})

  it('pairs as diffStates does when A repeats an identity (the first A port takes the B port, even if the second is the same as it)', () => {
    const r = diffStates(state('iptables', [x, y]), state('iptables', [y]))
    expect(r.services.map((s) => s.change).sort()).toEqual(['changed', 'removed'])
  })

  it('pairs as diffStates does when B repeats an identity', () => {
    const r = diffStates(state('iptables', [y]), state('iptables', [x, y]))
    expect(r.services.map((s) => s.change).sort()).toEqual(['added', 'changed'])
  })

  it('leaves out a pair that is the same and still compares the rest, nameless ports included', () => {
    const nameless = sp({
      namespace: null,
      name: null,
      portName: null,
      frontends: [fe('ClusterIP', '10.96.0.20', 53)],
      endpoints: [ep('10.244.2.1', 53)],
    })
    const named = sp({
      name: 'dns',
      frontends: [fe('ClusterIP', '10.96.0.20', 53)],
      endpoints: [ep('10.244.2.2', 53)],
    })
    const r = diffStates(state('iptables', [x, named]), state('ipvs', [x, nameless]))
    expect(r.services).toEqual([
      {
        service: 'ns1/dns:http/tcp',
        change: 'changed',
        differences: [
          {field: 'endpoint', a: '10.244.2.2:53', b: null},
          {field: 'endpoint', a: null, b: '10.244.2.1:53'},
        ],
      },
    ])
  })

  it('counts shares within 1e-6 as equal though their codes differ', () => {
    const r = diffStates(
      state('iptables', [sp({endpoints: [ep('10.244.1.5', 8080, {share: 1 / 3})]})]),
      state('nftables', [sp({endpoints: [ep('10.244.1.5', 8080, {share: 0.3333334})]})]),
    )
    expect(r.equal).toBe(true)
  })
})

describe('diffStates: compared fields', () => {
  const one = (a: ServicePort, b: ServicePort) =>
    diffStates(state('iptables', [a]), state('nftables', [b]))

  it('frontend action and source ranges', () => {
    const a = sp({
      frontends: [
        fe('ClusterIP', '10.96.0.10', 80),
        fe('LoadBalancer', '1.2.3.4', 80, {sourceRanges: ['203.0.113.0/25']}),
      ],
    })
    const b = sp({
      frontends: [
        fe('ClusterIP', '10.96.0.10', 80, {action: 'reject'}),
        fe('External', '1.2.3.4', 80),
      ],
    })
    expect(one(a, b).services[0]!.differences).toEqual([
      {field: 'frontends[ClusterIP 10.96.0.10:80].action', a: 'forward', b: 'reject'},
      {field: 'frontends[LoadBalancer 1.2.3.4:80].sourceRanges', a: ['203.0.113.0/25'], b: []},
    ])
  })

  it('not the source ranges of a frontend both sides reject (no KUBE-FW chain without endpoints)', () => {
    // A LoadBalancer Service with ranges and no endpoint, against its own iptables rendering.
    const lb = (action: Frontend['action'], sourceRanges: string[]) =>
      sp({frontends: [fe('LoadBalancer', '5.6.0.1', 80, {action, sourceRanges})], endpoints: []})
    expect(one(lb('reject', ['203.0.113.0/24']), lb('reject', [])).equal).toBe(true)
    expect(
      one(lb('forward', ['203.0.113.0/24']), lb('forward', [])).services[0]!.differences,
    ).toEqual([
      {field: 'frontends[LoadBalancer 5.6.0.1:80].sourceRanges', a: ['203.0.113.0/24'], b: []},
    ])
    expect(
      one(lb('reject', ['203.0.113.0/24']), lb('drop', [])).services[0]!.differences.map(
        (d) => d.field,
      ),
    ).toEqual([
      'frontends[LoadBalancer 5.6.0.1:80].action',
      'frontends[LoadBalancer 5.6.0.1:80].sourceRanges',
    ])
  })

  it('frontend differences are the same whether the two lists line up or not (the lined-up case skips the matching)', () => {
    const a = sp({
      frontends: [
        fe('ClusterIP', '10.96.0.10', 80),
        fe('ExternalIP', '1.2.3.4', 80, {action: 'drop'}),
        fe('LoadBalancer', '5.6.7.8', 443, {sourceRanges: ['10.0.0.0/8']}),
        fe('NodePort', null, 30080),
      ],
    })
    const lined = sp({
      frontends: [
        fe('ClusterIP', '10.96.0.10', 80, {action: 'reject'}),
        fe('ExternalIP', '1.2.3.4', 80),
        fe('LoadBalancer', '5.6.7.8', 443, {sourceRanges: ['10.0.0.0/16']}),
        fe('NodePort', null, 30080),
      ],
    })
    const shuffled = sp({frontends: [...lined.frontends].reverse()})
    const expected = [
      {field: 'frontends[ClusterIP 10.96.0.10:80].action', a: 'forward', b: 'reject'},
      {field: 'frontends[ExternalIP 1.2.3.4:80].action', a: 'drop', b: 'forward'},
      {
        field: 'frontends[LoadBalancer 5.6.7.8:443].sourceRanges',
        a: ['10.0.0.0/8'],
        b: ['10.0.0.0/16'],
      },
    ]
    expect(one(a, lined).services[0]!.differences).toEqual(expected)
    expect(one(a, shuffled).services[0]!.differences).toEqual(expected)
    expect(one(a, a).equal).toBe(true)
  })

  it('External does not match a ClusterIP or a different address', () => {
    const a = sp({
      frontends: [fe('ClusterIP', '10.96.0.10', 80), fe('ExternalIP', '192.168.99.22', 80)],
    })
    const b = sp({
      frontends: [fe('ClusterIP', '10.96.0.10', 80), fe('External', '192.168.99.23', 80)],
    })
    expect(one(a, b).services[0]!.differences).toEqual([
      {field: 'frontend', a: 'ExternalIP 192.168.99.22:80', b: null},
      {field: 'frontend', a: null, b: 'External 192.168.99.23:80'},
    ])
  })

  it('a NodePort on every address covers per-address NodePorts (IPVS), but not another port', () => {
    const all = sp({frontends: [fe('ClusterIP', '10.96.0.10', 80), fe('NodePort', null, 30080)]})
    const perIp = sp({
      frontends: [
        fe('ClusterIP', '10.96.0.10', 80),
        fe('NodePort', '10.0.0.10', 30080),
        fe('NodePort', '172.17.0.1', 30080),
      ],
    })
    expect(one(all, perIp).equal).toBe(true)
    expect(one(perIp, all).equal).toBe(true)
    const other = sp({
      frontends: [fe('ClusterIP', '10.96.0.10', 80), fe('NodePort', '10.0.0.10', 30081)],
    })
    expect(one(all, other).services[0]!.differences).toEqual([
      {field: 'frontend', a: 'NodePort *:30080', b: null},
      {field: 'frontend', a: null, b: 'NodePort 10.0.0.10:30081'},
    ])
  })

  it('endpoints as a set: order does not matter, draining real servers take no new connections', () => {
    const a = sp({endpoints: [ep('10.244.1.5', 8080), ep('10.244.2.7', 8080)]})
    const b = sp({endpoints: [ep('10.244.2.7', 8080), ep('10.244.1.5', 8080)]})
    expect(one(a, b).equal).toBe(true)
    const draining = sp({
      endpoints: [ep('10.244.1.5', 8080), ep('10.244.2.7', 8080, {weight: 0, state: 'draining'})],
    })
    expect(one(a, draining).services[0]!.differences).toEqual([
      {field: 'endpoint', a: '10.244.2.7:8080', b: null},
    ])
  })

  it('locality, share, weight and state only where both sides know them; shares within 1e-6', () => {
    const a = sp({
      endpoints: [
        ep('10.244.1.5', 8080, {share: 1 / 3, local: true}),
        ep('10.244.2.7', 8080, {share: 2 / 3}),
      ],
    })
    // The kernel rounds kube-proxy's 0.3333333333 to 0.33333333349 (docs/model.md): not a difference.
    const rounded = sp({
      endpoints: [
        ep('10.244.1.5', 8080, {share: 0.33333333349, local: null}),
        ep('10.244.2.7', 8080, {share: null}),
      ],
    })
    expect(one(a, rounded).equal).toBe(true)
    const b = sp({
      endpoints: [
        ep('10.244.1.5', 8080, {share: 0.5, local: false}),
        ep('10.244.2.7', 8080, {share: 0.5}),
      ],
    })
    expect(one(a, b).services[0]!.differences).toEqual([
      {field: 'endpoints[10.244.1.5:8080].local', a: true, b: false},
      {field: 'endpoints[10.244.1.5:8080].share', a: 1 / 3, b: 0.5},
      {field: 'endpoints[10.244.2.7:8080].share', a: 2 / 3, b: 0.5},
    ])
  })

  it('an endpoint listed twice counts once, as its last entry (the lists are not compared pair by pair)', () => {
    const a = sp({
      endpoints: [ep('10.244.1.5', 8080, {local: true}), ep('10.244.1.5', 8080, {local: false})],
    })
    const b = sp({
      endpoints: [ep('10.244.1.5', 8080, {local: false}), ep('10.244.1.5', 8080, {local: true})],
    })
    expect(one(a, b).services[0]!.differences).toEqual([
      {field: 'endpoints[10.244.1.5:8080].local', a: false, b: true},
    ])
  })

  it('policies: null is unknown, not a difference', () => {
    expect(one(sp({externalTrafficPolicy: 'Local'}), sp({externalTrafficPolicy: null})).equal).toBe(
      true,
    )
    expect(
      one(sp({internalTrafficPolicy: 'Cluster'}), sp({internalTrafficPolicy: 'Local'})).services[0]!
        .differences,
    ).toEqual([{field: 'internalTrafficPolicy', a: 'Cluster', b: 'Local'}])
  })

  it('affinity: None vs ClientIP always; the timeout only where both show it', () => {
    const sticky = (t: number | null) =>
      sp({sessionAffinity: {type: 'ClientIP', timeoutSeconds: t}})
    expect(one(sticky(10800), sticky(null)).equal).toBe(true)
    expect(one(sticky(10800), sticky(60)).services[0]!.differences).toEqual([
      {field: 'sessionAffinity', a: 'ClientIP 10800s', b: 'ClientIP 60s'},
    ])
    expect(one(sp(), sticky(null)).services[0]!.differences).toEqual([
      {field: 'sessionAffinity', a: 'None', b: 'ClientIP'},
    ])
    // Without endpoints on either side the rules cannot show it (a ClusterIP dropped under
    // internalTrafficPolicy=Local with no local endpoint, against its own rendering), nor would it matter.
    expect(one({...sticky(10), endpoints: []}, {...sp(), endpoints: []}).equal).toBe(true)
    expect(one({...sticky(10), endpoints: []}, sp()).services[0]!.differences).toEqual([
      {field: 'endpoint', a: null, b: '10.244.1.5:8080'},
      {field: 'sessionAffinity', a: 'ClientIP 10s', b: 'None'},
    ])
  })

  it('healthCheckNodePort and scheduler where both know them', () => {
    expect(one(sp({healthCheckNodePort: 30000, scheduler: 'rr'}), sp()).equal).toBe(true)
    expect(
      one(
        sp({healthCheckNodePort: 30000, scheduler: 'rr'}),
        sp({healthCheckNodePort: 30001, scheduler: 'sh'}),
      ).services[0]!.differences,
    ).toEqual([
      {field: 'healthCheckNodePort', a: 30000, b: 30001},
      {field: 'scheduler', a: 'rr', b: 'sh'},
    ])
  })

  it('ignores rule positions, sources and diagnostics', () => {
    const a = state('iptables', [sp({rules: [{path: 'a.rules', line: 10}]})])
    const b = state('nftables', [sp({rules: [{path: 'b.nft', line: 99}]})])
    b.sources.push({path: 'b.nft', format: 'nft', tool: null})
    b.diagnostics.push({severity: 'warning', code: 'NFT_X', message: 'x', source: null})
    expect(diffStates(a, b).equal).toBe(true)
  })
})

describe('diffStates: node settings', () => {
  it('compares what both know; the mark by value (0x4000 = 0x00004000); not the machine facts', () => {
    const a = emptyState('iptables')
    const b = emptyState('nftables')
    Object.assign(a.node, {
      name: 'n1',
      kernel: '6.1.0',
      masqueradeMark: '0x00004000',
      localhostNodePorts: true,
      podCIDRs: ['10.244.0.0/16'],
    })
    Object.assign(b.node, {
      name: 'n2',
      kernel: '5.10.0',
      masqueradeMark: '0x4000',
      localhostNodePorts: null,
      podCIDRs: [],
    })
    expect(diffStates(a, b).equal).toBe(true)
    Object.assign(b.node, {
      masqueradeMark: '0x8000',
      localhostNodePorts: false,
      nodePortAddresses: ['10.0.0.10/32'],
    })
    a.node.nodePortAddresses = []
    expect(diffStates(a, b).node).toEqual([
      {field: 'masqueradeMark', a: '0x00004000', b: '0x8000'},
      {field: 'localhostNodePorts', a: true, b: false},
      {field: 'nodePortAddresses', a: [], b: ['10.0.0.10/32']},
    ])
    expect(diffStates(a, b).equal).toBe(false)
  })
})
