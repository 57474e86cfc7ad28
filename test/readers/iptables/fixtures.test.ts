/**
 * The hand-made and real-world fixtures that cover what the upstream corpus does not (IPv6,
 * 3+ endpoints, affinity over several endpoints, ITP=Local, the older generations, large-cluster
 * mode, a node with Docker and a CNI, a grep fragment). Every expectation here is written by hand
 * from docs/kube-proxy-layouts.md and the fixture's
 * PROVENANCE.md, not copied from the reader's output.
 */
import {describe, expect, it} from 'vitest'
import type {Endpoint} from '../../../src/model/types.js'
import {codes, readFixture, service, withoutRules} from './helpers.js'

const third = 1 / 3

/** Endpoints as ip:port -> {local, share}, so expectations do not depend on sort order. */
function endpointMap(
  endpoints: Endpoint[],
): Record<string, {local: boolean | null; share: number | null}> {
  return Object.fromEntries(
    endpoints.map((e) => [
      `${e.ip!.includes(':') ? `[${e.ip}]` : e.ip}:${e.port}`,
      {local: e.local, share: e.share},
    ]),
  )
}

function expectShares(endpoints: Endpoint[], expected: Record<string, number>): void {
  const got = Object.fromEntries(
    endpoints.map((e) => [`${e.ip!.includes(':') ? `[${e.ip}]` : e.ip}:${e.port}`, e.share]),
  )
  expect(Object.keys(got).sort()).toEqual(Object.keys(expected).sort())
  for (const [k, v] of Object.entries(expected)) expect(got[k]).toBeCloseTo(v, 6)
}

describe('handmade-ipv6 (and its real ip6tables-save twin)', async () => {
  for (const dir of ['handmade-ipv6', 'realsave-handmade-ipv6']) {
    const state = await readFixture(dir)
    describe(dir, () => {
      it('reads four IPv6 service ports without warnings', () => {
        expect(state.services.map((s) => s.family)).toEqual(['IPv6', 'IPv6', 'IPv6', 'IPv6'])
        expect(codes(state, 'warning')).toEqual([])
        expect(codes(state, 'error')).toEqual([])
      })
      it('ETP=Local LB + NodePort with three endpoints, one local', () => {
        const sp = service(state, 'ns7/svc7:p80/tcp')
        expect(sp.frontends).toEqual([
          {type: 'ClusterIP', ip: 'fd00:10:96::7', port: 80, sourceRanges: [], action: 'forward'},
          {
            type: 'LoadBalancer',
            ip: '2001:db8::7',
            port: 80,
            sourceRanges: ['2001:db8:1::/48'],
            action: 'forward',
          },
          {type: 'NodePort', ip: null, port: 30007, sourceRanges: [], action: 'forward'},
        ])
        expect(sp.externalTrafficPolicy).toBe('Local')
        expect(sp.internalTrafficPolicy).toBe('Cluster')
        expect(sp.healthCheckNodePort).toBe(30107)
        expect(sp.sessionAffinity).toBeNull()
        expectShares(sp.endpoints, {
          '[fd00:10:244::1]:8080': third,
          '[fd00:10:244:1::2]:8080': third,
          '[fd00:10:244:2::3]:8080': third,
        })
        expect(
          Object.fromEntries(
            Object.entries(endpointMap(sp.endpoints)).map(([k, v]) => [k, v.local]),
          ),
        ).toEqual({
          '[fd00:10:244::1]:8080': true,
          '[fd00:10:244:1::2]:8080': false,
          '[fd00:10:244:2::3]:8080': false,
        })
        // 2 KUBE-SERVICES + 1 KUBE-NODEPORTS + 4 EXT + 2 FW + 4 SVC + 1 SVL + 6 SEP + health check + firewall drop
        expect(new Set(sp.rules.map((r) => r.line)).size).toBe(22)
      })
      it('ClientIP affinity over four UDP endpoints', () => {
        const sp = service(state, 'ns8/svc8:dns/udp')
        expect(sp.protocol).toBe('UDP')
        expect(sp.sessionAffinity).toEqual({type: 'ClientIP', timeoutSeconds: 600})
        expect(sp.externalTrafficPolicy).toBeNull() // no external frontend: not observable
        expectShares(sp.endpoints, {
          '[fd00:10:244::11]:53': 0.25,
          '[fd00:10:244::12]:53': 0.25,
          '[fd00:10:244::13]:53': 0.25,
          '[fd00:10:244::14]:53': 0.25,
        })
        expect(sp.endpoints.every((e) => e.local === null)).toBe(true)
      })
      it('ITP=Local with local endpoints, unnamed port', () => {
        const sp = service(state, 'ns9/svc9/tcp')
        expect(sp.portName).toBe('')
        expect(sp.internalTrafficPolicy).toBe('Local')
        expect(sp.frontends).toEqual([
          {type: 'ClusterIP', ip: 'fd00:10:96::9', port: 443, sourceRanges: [], action: 'forward'},
        ])
        expectShares(sp.endpoints, {'[fd00:10:244::21]:8443': 0.5, '[fd00:10:244::22]:8443': 0.5})
        expect(sp.endpoints.map((e) => e.local)).toEqual([true, true])
      })
      it('ITP=Local without local endpoints: the ClusterIP drops', () => {
        expect(withoutRules(service(state, 'ns10/svc10:p80/tcp'))).toEqual({
          namespace: 'ns10',
          name: 'svc10',
          portName: 'p80',
          protocol: 'TCP',
          family: 'IPv6',
          frontends: [
            {type: 'ClusterIP', ip: 'fd00:10:96::10', port: 80, sourceRanges: [], action: 'drop'},
          ],
          healthCheckNodePort: null,
          internalTrafficPolicy: 'Local',
          externalTrafficPolicy: null,
          sessionAffinity: null,
          scheduler: null,
          endpoints: [],
        })
      })
      it('node settings', () => {
        expect(state.node).toMatchObject({
          podCIDRs: ['fd00:10:244::/48'],
          localDetector: 'cidr',
          masqueradeMark: '0x4000',
          masqueradeAll: false,
          randomFully: true,
          nodePortAddresses: [],
          conntrackInvalidDrop: true,
          localhostNodePorts: null,
        })
      })
    })
  }
})

describe('handmade-legacy-xlb: the ≈1.7-1.10 layout', async () => {
  const state = await readFixture('handmade-legacy-xlb')
  it('reads four service ports, with only the expected empty KUBE-SVC reported', () => {
    expect(state.services).toHaveLength(4)
    expect(codes(state, 'warning')).toEqual([])
    expect(codes(state, 'info')).toEqual(['IPT_EMPTY_CHAIN'])
    expect(state.foreign).toEqual([])
  })
  it('ETP=Cluster: externalIP through KUBE-SVC, masquerade in KUBE-SERVICES, %0.5f probabilities', () => {
    const sp = service(state, 'default/web:http/tcp')
    expect(sp.frontends.map((f) => [f.type, f.ip, f.port, f.action])).toEqual([
      ['ClusterIP', '10.96.0.20', 80, 'forward'],
      ['ExternalIP', '192.0.2.20', 80, 'forward'],
      ['NodePort', null, 30080, 'forward'],
    ])
    expect(sp.externalTrafficPolicy).toBe('Cluster')
    expectShares(sp.endpoints, {'10.244.1.5:8080': 0.5, '10.244.2.6:8080': 0.5})
  })
  it('externalIPs skip traffic from the node itself (`! --src-type LOCAL`): nodeSourceExcluded', () => {
    const external = state.services.flatMap((sp) =>
      sp.frontends.filter((f) => f.type === 'ExternalIP').map((f) => [f.ip, f.nodeSourceExcluded]),
    )
    expect(external).toEqual([
      ['192.0.2.30', true],
      ['192.0.2.20', true],
    ])
    // Other frontends carry no such exclusion, and say nothing.
    const others = state.services.flatMap((sp) =>
      sp.frontends.filter((f) => f.type !== 'ExternalIP'),
    )
    expect(others.every((f) => !('nodeSourceExcluded' in f))).toBe(true)
  })
  it('ETP=Local through KUBE-XLB, LB source range in KUBE-FW', () => {
    const sp = service(state, 'default/lb:https/tcp')
    expect(sp.externalTrafficPolicy).toBe('Local')
    expect(sp.frontends.find((f) => f.type === 'LoadBalancer')).toEqual({
      type: 'LoadBalancer',
      ip: '198.51.100.5',
      port: 443,
      sourceRanges: ['203.0.113.0/24'],
      action: 'forward',
      // KUBE-FW ends in nat KUBE-MARK-DROP: an outside source is only marked.
      outsideRangesMarkedForDrop: true,
    })
    expect(endpointMap(sp.endpoints)).toEqual({
      '10.244.1.7:8443': {local: true, share: 0.5},
      '10.244.2.8:8443': {local: false, share: 0.5},
    })
  })
  it('ETP=Local without local endpoints: KUBE-XLB -> KUBE-MARK-DROP drops the NodePort', () => {
    const sp = service(state, 'default/nolocal:p/tcp')
    expect(sp.frontends.map((f) => [f.type, f.port, f.action])).toEqual([
      ['ClusterIP', 80, 'forward'],
      ['NodePort', 30090, 'drop'],
    ])
    // Only a nat mark (KUBE-MARK-DROP): the kubelet's KUBE-FIREWALL drops it in INPUT, not FORWARD.
    expect(sp.frontends.map((f) => f.noLocalMarkedForDrop ?? null)).toEqual([null, true])
    expect(endpointMap(sp.endpoints)).toEqual({'10.244.2.9:80': {local: false, share: 1}})
  })
  it('no endpoints: every frontend rejected in filter KUBE-SERVICES', () => {
    const sp = service(state, 'default/empty:p/tcp')
    expect(sp.frontends.map((f) => [f.type, f.ip, f.port, f.action])).toEqual([
      ['ClusterIP', '10.96.0.23', 80, 'reject'],
      ['ExternalIP', '192.0.2.30', 80, 'reject'],
      ['NodePort', null, 30099, 'reject'],
    ])
    expect(sp.endpoints).toEqual([])
  })
  it('node settings: --set-xmark mark, pod CIDR from the KUBE-SERVICES masquerade rules', () => {
    expect(state.node).toMatchObject({
      masqueradeMark: '0x4000',
      podCIDRs: ['10.244.0.0/16'],
      localDetector: 'cidr',
      masqueradeAll: false,
      conntrackInvalidDrop: null,
    })
  })
})

describe('legacy-k8s-1.1: the 2015 layout from a real node', async () => {
  const state = await readFixture('legacy-k8s-1.1')
  it('names the unnamed port from `ns/name:` and checks the hashes over that spelling', () => {
    const sp = service(state, 'default/svc-nginx/tcp')
    expect(sp.portName).toBe('')
    expect(sp.frontends).toEqual([
      {type: 'ClusterIP', ip: '10.254.180.23', port: 80, sourceRanges: [], action: 'forward'},
    ])
    expectShares(sp.endpoints, {'172.16.8.2:80': 0.5, '172.16.8.4:80': 0.5})
    expect(codes(state, 'warning')).toEqual([])
  })
  it("reads the old mark from the SEP MARK rules, and the POSTROUTING rule as kube-proxy's own", () => {
    expect(state.node.masqueradeMark).toBe('0x4d415351')
    expect(state.foreign).toEqual([])
  })
})

describe('handmade-node-with-cni: large-cluster mode beside Docker and a CNI', async () => {
  const state = await readFixture('handmade-node-with-cni')
  it('follows the jumps when SEP and SVC->SEP rules carry no comments', () => {
    const sp = service(state, 'team/api:grpc/tcp')
    expect(sp.frontends.map((f) => [f.type, f.ip, f.port, f.action])).toEqual([
      ['ClusterIP', '10.96.5.5', 9000, 'forward'],
      ['NodePort', null, 31000, 'forward'],
    ])
    expect(sp.healthCheckNodePort).toBe(32000)
    expect(sp.externalTrafficPolicy).toBe('Local')
    // Five endpoints from 0.20000000019, 0.25, 0.33333333349, 0.5 and an unconditional rule: 1/5 each.
    expectShares(
      sp.endpoints,
      Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`10.244.${i}.10:9000`, 0.2])),
    )
    expect(
      sp.endpoints
        .filter((e) => e.local)
        .map((e) => e.ip)
        .sort(),
    ).toEqual(['10.244.2.10', '10.244.3.10'])
    expect(state.services).toHaveLength(1)
  })
  it('node settings: interface-prefix detector, per-IP NodePort addresses, random-fully', () => {
    expect(state.node).toMatchObject({
      localDetector: 'interface-prefix',
      localInterface: 'cali',
      podCIDRs: [],
      masqueradeAll: false,
      randomFully: true,
      nodePortAddresses: ['10.0.0.10', '192.168.1.10'],
      conntrackInvalidDrop: true,
    })
    expect(state.sources[0]?.tool).toBe('iptables-save v1.8.9 (nf_tables)')
  })
  it('lists the CNI jump into KUBE-MARK-MASQ and the rule on the masquerade mark as foreign, not Docker', () => {
    expect(state.foreign.map((f) => [f.kind, f.name])).toEqual([
      ['iptables-rule', 'filter/cali-FORWARD'],
      ['iptables-rule', 'nat/CNI-HOSTPORT-SETMARK -j KUBE-MARK-MASQ'],
    ])
    expect(codes(state, 'warning')).toEqual([])
  })
})

describe('fragment-grep-xlb: `iptables-save | grep` of one service', async () => {
  const state = await readFixture('fragment-grep-xlb')
  it('reads the fragment as nat and says so', () => {
    expect(codes(state)).toEqual(['IPT_TABLE_INFERRED', 'IPT_UNDECLARED_CHAIN'])
    expect(state.diagnostics.every((d) => d.severity === 'info')).toBe(true)
  })
  it('recovers the ETP=Local service whose node has no local endpoint', () => {
    const sp = service(state, 'default/test-svc/tcp')
    expect(sp.frontends.map((f) => [f.type, f.ip, f.port, f.action])).toEqual([
      ['ClusterIP', '10.96.115.88', 80, 'forward'],
      ['NodePort', null, 32070, 'drop'],
    ])
    expect(sp.externalTrafficPolicy).toBe('Local')
    expect(endpointMap(sp.endpoints)).toEqual({
      '10.244.1.3:80': {local: false, share: 0.5},
      '10.244.2.3:80': {local: false, share: 0.5},
    })
  })
})

describe("upstream-sortrules-transition: kube-proxy's own ≈1.24 sample (TestSortIPTablesRules)", async () => {
  const state = await readFixture('upstream-sortrules-transition')
  it('reads the 1.24 KUBE-EXT comments and KUBE-SVL -> KUBE-MARK-DROP as ETP=Local without local endpoints', () => {
    const sp = service(state, 'ns2/svc2:p80/tcp')
    expect(sp.externalTrafficPolicy).toBe('Local')
    expect(sp.healthCheckNodePort).toBe(30000)
    expect(sp.frontends.map((f) => [f.type, f.ip, f.port, f.sourceRanges, f.action])).toEqual([
      ['ClusterIP', '172.30.0.42', 80, [], 'forward'],
      ['ExternalIP', '192.168.99.11', 80, [], 'drop'],
      ['LoadBalancer', '1.2.3.4', 80, ['203.0.113.0/25'], 'drop'],
      // The sample's filter DROP names 192.168.99.22, which nat gives to ns4/svc4: kept, and flagged below.
      ['External', '192.168.99.22', 80, [], 'drop'],
      ['NodePort', null, 3001, [], 'drop'],
    ])
    expect(endpointMap(sp.endpoints)).toEqual({'10.180.0.2:80': {local: false, share: 1}})
  })
  it('an externalIP and a NodePort straight to KUBE-SVC are ETP=Cluster', () => {
    expect(service(state, 'ns3/svc3:p80/tcp').frontends.map((f) => [f.type, f.port])).toEqual([
      ['ClusterIP', 80],
      ['NodePort', 3002],
    ])
    expect(service(state, 'ns3/svc3:p80/tcp').externalTrafficPolicy).toBe('Cluster')
    const ns4 = service(state, 'ns4/svc4:p80/tcp')
    expect(ns4.frontends.map((f) => [f.type, f.ip])).toEqual([
      ['ClusterIP', '172.30.0.44'],
      ['ExternalIP', '192.168.99.22'],
    ])
    expect(ns4.externalTrafficPolicy).toBe('Cluster')
    expectShares(ns4.endpoints, {'10.180.0.4:80': 0.5, '10.180.0.5:80': 0.5})
  })
  it('reports what does not add up instead of inventing: the orphan firewall rule and the shared address', () => {
    expect(state.services.map((s) => s.name)).toEqual(['svc1', 'svc2', 'svc3', 'svc4'])
    expect(state.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['IPT_UNKNOWN_RULE', 16],
      ['IPT_FRONTEND_CONFLICT', expect.any(Number)],
    ])
    expect(state.diagnostics[1]!.message).toBe(
      '192.168.99.22:80/TCP belongs to both ns2/svc2:p80 and ns4/svc4:p80',
    )
  })
})
