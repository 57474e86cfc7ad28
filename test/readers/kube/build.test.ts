/**
 * kube-proxy's endpoint selection and frontend actions, case by case, from hand-written objects.
 * Each expectation cites the rule it comes from: docs/ipvs-layouts.md a.3, c.2-c.4 and
 * docs/kube-proxy-layouts.md §1, §2.4, §3.4 (CategorizeEndpoints, endpointslicecache.go).
 */
import {hostname} from 'node:os'
import {describe, expect, it} from 'vitest'
import type {Mode} from '../../../src/model/types.js'
import {frontendEndpoints} from '../../../src/kube-proxy/endpoints.js'
import {frontendKey, indexFrontends, readClusterSources} from '../../../src/readers/kube/build.js'
import {clusterState, codes, endpointsOf, frontendsOf, portOf} from './helpers.js'

type Obj = Record<string, unknown>
interface Ep {
  ip: string | string[]
  node?: string
  ready?: boolean
  serving?: boolean
  terminating?: boolean
  /** The endpoint's own zone, and its zone / node hints. */
  zone?: string
  zones?: string[]
  nodes?: string[]
}

function service(name: string, spec: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {name, namespace: 'ns', ...(extra.metadata as Obj | undefined)},
    spec: {ports: [{name: 'p', port: 80, protocol: 'TCP'}], ...spec},
    ...(extra.status ? {status: extra.status} : {}),
  }
}

function slice(
  name: string,
  svcName: string,
  endpoints: Ep[],
  opts: {addressType?: string; ports?: Obj[]; labels?: Record<string, string>} = {},
): Obj {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'ns',
      labels: {'kubernetes.io/service-name': svcName, ...opts.labels},
    },
    addressType: opts.addressType ?? 'IPv4',
    endpoints: endpoints.map((e) => ({
      addresses: Array.isArray(e.ip) ? e.ip : [e.ip],
      ...(e.node ? {nodeName: e.node} : {}),
      conditions: {
        ...(e.ready === undefined ? {} : {ready: e.ready}),
        ...(e.serving === undefined ? {} : {serving: e.serving}),
        ...(e.terminating === undefined ? {} : {terminating: e.terminating}),
      },
      ...(e.zone ? {zone: e.zone} : {}),
      ...(e.zones || e.nodes
        ? {
            hints: {
              ...(e.zones ? {forZones: e.zones.map((z) => ({name: z}))} : {}),
              ...(e.nodes ? {forNodes: e.nodes.map((n) => ({name: n}))} : {}),
            },
          }
        : {}),
    })),
    ports: opts.ports ?? [{name: 'p', port: 8080, protocol: 'TCP'}],
  }
}

const list = (...items: Obj[]) => JSON.stringify({apiVersion: 'v1', kind: 'List', items})
const build = (mode: Mode | undefined, ...items: Obj[]) =>
  clusterState(list(...items), {node: 'me', mode})

describe('endpoint selection (c.4, CategorizeEndpoints)', () => {
  it('uses ready endpoints; nil conditions count as ready', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', [{ip: '10.0.0.1'}, {ip: '10.0.0.2', ready: false, serving: false}]),
    )
    const sp = portOf(state, 'ns', 's', 'p')
    expect(sp.endpoints).toEqual([
      {ip: '10.0.0.1', port: 8080, local: false, share: 1, weight: null, state: 'ready'},
    ])
    expect(codes(state)).toContain('KUBE_ENDPOINTS_UNUSED')
  })

  it('falls back to serving+terminating endpoints when none is ready', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', [
        {ip: '10.0.0.1', ready: false, serving: true, terminating: true},
        {ip: '10.0.0.2', ready: false, serving: false, terminating: true},
      ]),
    )
    const sp = portOf(state, 'ns', 's', 'p')
    expect(sp.endpoints.map((e) => `${e.ip} ${e.state} ${e.share}`)).toEqual([
      '10.0.0.1 serving-terminating 1',
    ])
    expect(frontendsOf(sp)).toEqual(['ClusterIP 10.96.0.1:80 forward'])
  })

  it('terminating endpoints that are not serving leave the service without endpoints: reject', async () => {
    const state = await build(
      'iptables',
      service('s', {
        clusterIP: '10.96.0.1',
        type: 'NodePort',
        ports: [{name: 'p', port: 80, nodePort: 30001}],
      }),
      slice('s-1', 's', [{ip: '10.0.0.2', ready: false, serving: false, terminating: true}]),
    )
    expect(frontendsOf(portOf(state, 'ns', 's', 'p'))).toEqual([
      'ClusterIP 10.96.0.1:80 reject',
      'NodePort *:30001 reject',
    ])
  })

  it('uses addresses[0] only', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', [{ip: ['10.0.0.1', '10.0.0.9']}]),
    )
    expect(endpointsOf(portOf(state, 'ns', 's', 'p'))).toEqual(['10.0.0.1:8080'])
  })

  it('merges slices and keeps one copy of an ip:port, preferring the non-terminating one', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', [
        {ip: '10.0.0.1', ready: false, serving: true, terminating: true},
        {ip: '10.0.0.2'},
      ]),
      slice('s-2', 's', [{ip: '10.0.0.1'}, {ip: '10.0.0.3'}]),
    )
    const sp = portOf(state, 'ns', 's', 'p')
    expect(sp.endpoints.map((e) => `${e.ip}:${e.port} ${e.state}`)).toEqual([
      '10.0.0.1:8080 ready',
      '10.0.0.2:8080 ready',
      '10.0.0.3:8080 ready',
    ])
    expect(sp.endpoints.map((e) => e.share)).toEqual([1 / 3, 1 / 3, 1 / 3])
    expect(sp.rules).toHaveLength(3)
  })

  it('joins slice ports to Service ports by name and protocol', async () => {
    const state = await build(
      undefined,
      service('dns', {
        clusterIP: '10.96.0.10',
        ports: [
          {name: 'dns', port: 53, protocol: 'UDP'},
          {name: 'dns-tcp', port: 53, protocol: 'TCP'},
        ],
      }),
      slice('dns-1', 'dns', [{ip: '10.0.0.1'}], {
        ports: [
          {name: 'dns', port: 5353, protocol: 'TCP'},
          {name: 'dns-tcp', port: 53, protocol: 'TCP'},
          {name: 'dns', port: 53, protocol: 'UDP'},
        ],
      }),
    )
    expect(endpointsOf(portOf(state, 'ns', 'dns', 'dns'))).toEqual(['10.0.0.1:53'])
    expect(endpointsOf(portOf(state, 'ns', 'dns', 'dns-tcp'))).toEqual(['10.0.0.1:53'])
    // dns/TCP matches no Service port.
    expect(
      state.diagnostics.filter((d) => d.code === 'KUBE_SLICE_PORT_UNMATCHED').map((d) => d.message),
    ).toEqual([expect.stringContaining('"dns"/TCP')])
  })

  it('joins an unnamed Service port to the slice port named ""; a slice port without a name is ignored with a warning', async () => {
    const svc = service('s', {clusterIP: '10.96.0.1', ports: [{port: 80}]})
    const named = await build(
      undefined,
      svc,
      slice('s-1', 's', [{ip: '10.0.0.1'}], {ports: [{name: '', port: 8080}]}),
    )
    expect(portOf(named, 'ns', 's', '').endpoints).toHaveLength(1)
    const nameless = await build(
      undefined,
      svc,
      slice('s-1', 's', [{ip: '10.0.0.1'}], {ports: [{port: 8080}]}),
    )
    expect(portOf(nameless, 'ns', 's', '').endpoints).toEqual([])
    expect(nameless.diagnostics.map((d) => `${d.severity} ${d.code}`)).toContain(
      'warning KUBE_SLICE_PORT_NO_NAME',
    )
  })

  it('skips slices labelled headless, with a service-proxy-name, or without the service-name label', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('h', 's', [{ip: '10.0.0.1'}], {labels: {'service.kubernetes.io/headless': ''}}),
      slice('o', 's', [{ip: '10.0.0.2'}], {
        labels: {'service.kubernetes.io/service-proxy-name': 'cilium'},
      }),
      {...slice('n', 's', [{ip: '10.0.0.3'}]), metadata: {name: 'n', namespace: 'ns'}},
      slice('ok', 's', [{ip: '10.0.0.4'}]),
    )
    expect(endpointsOf(portOf(state, 'ns', 's', 'p'))).toEqual(['10.0.0.4:8080'])
    expect(state.diagnostics.map((d) => `${d.severity} ${d.code}`)).toEqual(
      expect.arrayContaining([
        'info KUBE_HEADLESS',
        'info KUBE_OTHER_PROXY',
        'warning KUBE_SLICE_NO_SERVICE_LABEL',
      ]),
    )
  })

  it('skips Services of another proxy, headless and ExternalName Services (info)', async () => {
    const state = await build(
      undefined,
      service(
        'other',
        {clusterIP: '10.96.0.1'},
        {metadata: {labels: {'service.kubernetes.io/service-proxy-name': 'x'}}},
      ),
      service('headless', {clusterIP: 'None'}),
      service('ext', {type: 'ExternalName', externalName: 'example.com', clusterIP: '10.96.0.3'}),
      slice('s-1', 'other', [{ip: '10.0.0.1'}]),
    )
    expect(state.services).toEqual([])
    expect(
      state.diagnostics.filter((d) => d.code === 'KUBE_SERVICE_IGNORED').map((d) => d.severity),
    ).toEqual(['info', 'info', 'info'])
  })

  it('drops an endpoint whose address is not of the slice family, with a warning', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', [{ip: 'fd00::1'}, {ip: '10.0.0.1'}]),
    )
    expect(endpointsOf(portOf(state, 'ns', 's', 'p'))).toEqual(['10.0.0.1:8080'])
    expect(codes(state)).toContain('KUBE_ENDPOINT_WRONG_FAMILY')
  })

  it('marks endpoints local by nodeName against --node, and defaults --node to this host', async () => {
    const me = hostname().trim().toLowerCase()
    const objs = [
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', [
        {ip: '10.0.0.1', node: me},
        {ip: '10.0.0.2', node: 'elsewhere'},
      ]),
    ]
    const state = await clusterState(list(...objs), {node: undefined})
    expect(state.node.name).toBe(me)
    expect(portOf(state, 'ns', 's', 'p').endpoints.map((e) => e.local)).toEqual([true, false])
  })

  it('zone hints: applied for the zone of this node, told by an endpoint running on it', async () => {
    const eps: Ep[] = [
      {ip: '10.0.0.1', node: 'me', zone: 'a', zones: ['a']},
      {ip: '10.0.0.2', node: 'n2', zone: 'a', zones: ['a']},
      {ip: '10.0.0.3', node: 'n3', zone: 'b', zones: ['b']},
    ]
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', eps),
    )
    const sp = portOf(state, 'ns', 's', 'p')
    expect(sp.endpoints.map((e) => `${e.ip} ${e.share}`)).toEqual(['10.0.0.1 0.5', '10.0.0.2 0.5'])
    expect(state.diagnostics.map((d) => `${d.severity} ${d.code}`)).toContain(
      'info KUBE_TOPOLOGY_HINTS',
    )
  })

  it('zone hints: not applied when not every ready endpoint has one, as in kube-proxy', async () => {
    const eps: Ep[] = [
      {ip: '10.0.0.1', node: 'me', zone: 'a', zones: ['a']},
      {ip: '10.0.0.2', node: 'n2', zone: 'b'},
    ]
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', eps),
    )
    expect(endpointsOf(portOf(state, 'ns', 's', 'p'))).toEqual(['10.0.0.1:8080', '10.0.0.2:8080'])
    expect(state.diagnostics.filter((d) => d.code.startsWith('KUBE_TOPOLOGY'))).toEqual([])
  })

  it('zone hints: a warning when the zone of this node is unknown, and every ready endpoint is shown', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      slice('s-1', 's', [
        {ip: '10.0.0.1', zones: ['a']},
        {ip: '10.0.0.2', zones: ['b']},
      ]),
    )
    expect(endpointsOf(portOf(state, 'ns', 's', 'p'))).toEqual(['10.0.0.1:8080', '10.0.0.2:8080'])
    expect(state.diagnostics.map((d) => `${d.severity} ${d.code}`)).toContain(
      'warning KUBE_TOPOLOGY_ZONE_UNKNOWN',
    )
  })

  it('node hints (PreferSameNode): only the endpoints hinted for this node', async () => {
    const eps: Ep[] = [
      {ip: '10.0.0.1', node: 'me', nodes: ['me']},
      {ip: '10.0.0.2', node: 'n2', nodes: ['n2']},
    ]
    const sp = portOf(
      await build(undefined, service('s', {clusterIP: '10.96.0.1'}), slice('s-1', 's', eps)),
      'ns',
      's',
      'p',
    )
    expect(endpointsOf(sp)).toEqual(['10.0.0.1:8080'])
  })
})

describe('traffic policies and the modes (§2.4, §3.4, a.3)', () => {
  const itpLocal = (type: 'ClusterIP' | 'NodePort') =>
    service('s', {
      clusterIP: '10.96.0.1',
      internalTrafficPolicy: 'Local',
      type,
      ports: [{name: 'p', port: 80, ...(type === 'NodePort' ? {nodePort: 30001} : {})}],
    })
  const remoteOnly = slice('s-1', 's', [{ip: '10.0.0.1', node: 'other'}])

  it('ITP=Local without local endpoints: iptables/nftables drop ClusterIP traffic', async () => {
    for (const mode of ['iptables', 'nftables'] as const) {
      const sp = portOf(await build(mode, itpLocal('ClusterIP'), remoteOnly), 'ns', 's', 'p')
      expect(frontendsOf(sp)).toEqual(['ClusterIP 10.96.0.1:80 drop'])
      expect(sp.internalTrafficPolicy).toBe('Local')
      // A ClusterIP-only Service with ITP=Local never uses the cluster path: nothing is reachable.
      expect(sp.endpoints).toEqual([])
    }
  })

  it('ITP=Local without any endpoint: reject', async () => {
    const sp = portOf(
      await build('nftables', itpLocal('ClusterIP'), slice('s-1', 's', [])),
      'ns',
      's',
      'p',
    )
    expect(frontendsOf(sp)).toEqual(['ClusterIP 10.96.0.1:80 reject'])
  })

  it('ITP=Local on a ClusterIP-only Service: IPVS has no cluster set to fall back to, so no real server', async () => {
    const sp = portOf(await build('ipvs', itpLocal('ClusterIP'), remoteOnly), 'ns', 's', 'p')
    expect(frontendsOf(sp)).toEqual(['ClusterIP 10.96.0.1:80 reject'])
  })

  it('ITP=Local on an externally accessible Service: IPVS falls back to the cluster endpoints', async () => {
    const ipvs = portOf(await build('ipvs', itpLocal('NodePort'), remoteOnly), 'ns', 's', 'p')
    expect(frontendsOf(ipvs)).toEqual([
      'ClusterIP 10.96.0.1:80 forward',
      'NodePort *:30001 forward',
    ])
    expect(ipvs.frontends.map((f) => frontendEndpoints(ipvs, f, 'ipvs').map((e) => e.ip))).toEqual([
      ['10.0.0.1'],
      ['10.0.0.1'],
    ])
    const nft = portOf(await build('nftables', itpLocal('NodePort'), remoteOnly), 'ns', 's', 'p')
    expect(frontendsOf(nft)).toEqual(['ClusterIP 10.96.0.1:80 drop', 'NodePort *:30001 forward'])
    expect(
      nft.frontends.map((f) => frontendEndpoints(nft, f, 'nftables').map((e) => e.ip)),
    ).toEqual([[], ['10.0.0.1']])
  })

  it('ITP=Local with local endpoints: shares over the local endpoints only', async () => {
    const sp = portOf(
      await build(
        'iptables',
        itpLocal('ClusterIP'),
        slice('s-1', 's', [
          {ip: '10.0.0.1', node: 'me'},
          {ip: '10.0.0.2', node: 'me'},
          {ip: '10.0.0.3', node: 'other'},
        ]),
      ),
      'ns',
      's',
      'p',
    )
    expect(sp.endpoints.map((e) => `${e.ip} ${e.local} ${e.share}`)).toEqual([
      '10.0.0.1 true 0.5',
      '10.0.0.2 true 0.5',
    ])
    expect(frontendsOf(sp)).toEqual(['ClusterIP 10.96.0.1:80 forward'])
  })

  it("ITP=Local on a NodePort Service: shares over the local endpoints, as the node's rules show them", async () => {
    // The ClusterIP goes to KUBE-SVL- / the local chain, and the iptables and nftables readers give
    // shares over it; over the cluster set, `kp diff cluster.yaml node-dump` called every endpoint changed.
    const eps = slice('s-1', 's', [
      {ip: '10.0.0.1', node: 'me'},
      {ip: '10.0.0.2', node: 'other'},
      {ip: '10.0.0.3', node: 'other'},
    ])
    for (const mode of ['iptables', 'nftables'] as const) {
      const sp = portOf(await build(mode, itpLocal('NodePort'), eps), 'ns', 's', 'p')
      expect(
        sp.endpoints.map((e) => `${e.ip} ${e.local} ${e.share}`),
        mode,
      ).toEqual(['10.0.0.1 true 1', '10.0.0.2 false 0', '10.0.0.3 false 0'])
      // The NodePort (ETP=Cluster) still takes all three.
      expect(
        sp.frontends.map((f) => `${f.type} ${frontendEndpoints(sp, f, mode).map((e) => e.ip)}`),
        mode,
      ).toEqual(['ClusterIP 10.0.0.1', 'NodePort 10.0.0.1,10.0.0.2,10.0.0.3'])
    }
    // Without a local endpoint the ClusterIP has no local chain (it drops): the readers of the
    // rules give the cluster chain's shares then.
    for (const mode of ['iptables', 'nftables'] as const) {
      expect(
        portOf(await build(mode, itpLocal('NodePort'), remoteOnly), 'ns', 's', 'p').endpoints.map(
          (e) => e.share,
        ),
        mode,
      ).toEqual([1])
    }
    // IPVS: the ClusterIP's virtual server has the local endpoint; without one it falls back to all.
    const ipvs = portOf(await build('ipvs', itpLocal('NodePort'), eps), 'ns', 's', 'p')
    expect(ipvs.endpoints.map((e) => e.share)).toEqual([1, 0, 0])
    const fallback = portOf(await build('ipvs', itpLocal('NodePort'), remoteOnly), 'ns', 's', 'p')
    expect(fallback.endpoints.map((e) => e.share)).toEqual([1])
  })

  it('IPVS lists only the endpoints some virtual server has: none of the cluster set when every policy is Local', async () => {
    // IPVS has no short-circuit of pod traffic under ETP=Local; listing the remote endpoints made
    // \`kp diff cluster.yaml\` against the node's (or kp's own) ipvsadm listing call them removed.
    const both = service('s', {
      clusterIP: '10.96.0.1',
      type: 'NodePort',
      internalTrafficPolicy: 'Local',
      externalTrafficPolicy: 'Local',
      ports: [{name: 'p', port: 80, nodePort: 30001}],
    })
    const eps = slice('s-1', 's', [
      {ip: '10.0.0.1', node: 'me'},
      {ip: '10.0.0.2', node: 'other'},
    ])
    expect(
      portOf(await build('ipvs', both, eps), 'ns', 's', 'p').endpoints.map((e) => e.ip),
    ).toEqual(['10.0.0.1'])
    // iptables and nftables keep the remote one: the ETP=Local short-circuit sends pod traffic to it.
    expect(
      portOf(await build('nftables', both, eps), 'ns', 's', 'p').endpoints.map((e) => e.ip),
    ).toEqual(['10.0.0.1', '10.0.0.2'])
    // A Cluster policy on either path takes the cluster set into IPVS as well.
    const etpOnly = service('s', {
      clusterIP: '10.96.0.1',
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      ports: [{name: 'p', port: 80, nodePort: 30001}],
    })
    expect(
      portOf(await build('ipvs', etpOnly, eps), 'ns', 's', 'p').endpoints.map((e) => e.ip),
    ).toEqual(['10.0.0.1', '10.0.0.2'])
  })

  it('ETP=Local counts only for externally accessible Services (ExternalPolicyLocal)', async () => {
    const sp = portOf(
      await build(
        undefined,
        service('s', {clusterIP: '10.96.0.1', externalTrafficPolicy: 'Local'}),
        remoteOnly,
      ),
      'ns',
      's',
      'p',
    )
    expect(sp.externalTrafficPolicy).toBe('Cluster')
    expect(frontendsOf(sp)).toEqual(['ClusterIP 10.96.0.1:80 forward'])
  })

  it('ETP=Local with a local serving-terminating endpoint and remote ready ones: local path uses the terminating one', async () => {
    const svc = service('s', {
      clusterIP: '10.96.0.1',
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      ports: [{name: 'p', port: 80, nodePort: 30001}],
    })
    const sp = portOf(
      await build(
        'nftables',
        svc,
        slice('s-1', 's', [
          {ip: '10.0.0.1', node: 'me', ready: false, serving: true, terminating: true},
          {ip: '10.0.0.2', node: 'other'},
        ]),
      ),
      'ns',
      's',
      'p',
    )
    // Cluster path: the ready remote one (share 1); the local terminating one is reachable from the NodePort only.
    expect(sp.endpoints.map((e) => `${e.ip} ${e.state} ${e.local} ${e.share}`)).toEqual([
      '10.0.0.1 serving-terminating true 0',
      '10.0.0.2 ready false 1',
    ])
    expect(
      sp.frontends.map((f) => `${f.type} ${frontendEndpoints(sp, f, 'nftables').map((e) => e.ip)}`),
    ).toEqual(['ClusterIP 10.0.0.2', 'NodePort 10.0.0.1'])
  })

  it('healthCheckNodePort only for a LoadBalancer with ETP=Local; affinity timeout defaults to 10800', async () => {
    const lb = service('lb', {
      clusterIP: '10.96.0.1',
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32000,
      sessionAffinity: 'ClientIP',
      ports: [{name: 'p', port: 80, nodePort: 30001}],
    })
    const np = service('np', {
      clusterIP: '10.96.0.2',
      type: 'NodePort',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 32001,
      ports: [{name: 'p', port: 80, nodePort: 30002}],
    })
    const state = await build(undefined, lb, np)
    expect(portOf(state, 'ns', 'lb', 'p').healthCheckNodePort).toBe(32000)
    expect(portOf(state, 'ns', 'lb', 'p').sessionAffinity).toEqual({
      type: 'ClientIP',
      timeoutSeconds: 10800,
    })
    expect(portOf(state, 'ns', 'np', 'p').healthCheckNodePort).toBeNull()
  })
})

describe('frontends (c.3)', () => {
  it('LoadBalancer ingress: ipMode Proxy and hostname-only entries are not programmed; IPs are normalised', async () => {
    const svc = service(
      'lb',
      {
        clusterIP: '10.96.0.1',
        type: 'LoadBalancer',
        externalIPs: ['192.168.099.022'],
        loadBalancerSourceRanges: [' 203.0.113.000/025 ', '10.1.2.3/8'],
        ports: [{name: 'p', port: 443, nodePort: 31443}],
      },
      {
        status: {
          loadBalancer: {
            ingress: [
              {ip: '1.2.3.4'},
              {ip: '5.6.7.8', ipMode: 'Proxy'},
              {hostname: 'lb.example.com'},
              {ip: '9.9.9.9', ipMode: 'VIP'},
            ],
          },
        },
      },
    )
    const sp = portOf(
      await build(undefined, svc, slice('lb-1', 'lb', [{ip: '10.0.0.1'}])),
      'ns',
      'lb',
      'p',
    )
    expect(frontendsOf(sp)).toEqual([
      'ClusterIP 10.96.0.1:443 forward',
      'ExternalIP 192.168.99.22:443 forward',
      'LoadBalancer 1.2.3.4:443 forward',
      'LoadBalancer 9.9.9.9:443 forward',
      'NodePort *:31443 forward',
    ])
    expect(sp.frontends.find((f) => f.ip === '1.2.3.4')?.sourceRanges).toEqual([
      '10.0.0.0/8',
      '203.0.113.0/25',
    ])
  })

  it("dual-stack: one service port per family, each with that family's IPs, ranges and slices", async () => {
    const svc = service(
      'ds',
      {
        clusterIP: '10.96.0.1',
        clusterIPs: ['10.96.0.1', 'FD00::0001'],
        type: 'LoadBalancer',
        externalIPs: ['192.0.2.1', '2001:db8::1'],
        loadBalancerSourceRanges: ['198.51.100.0/24', '2001:db8:1::/48'],
        ports: [{name: 'p', port: 80, nodePort: 30080}],
      },
      {status: {loadBalancer: {ingress: [{ip: '203.0.113.9'}, {ip: '2001:db8:ffff::9'}]}}},
    )
    const state = await build(
      undefined,
      svc,
      slice('v4', 'ds', [{ip: '10.0.0.1'}]),
      slice('v6', 'ds', [{ip: 'fd00:10::1'}], {addressType: 'IPv6'}),
    )
    const v4 = portOf(state, 'ns', 'ds', 'p', 'IPv4')
    const v6 = portOf(state, 'ns', 'ds', 'p', 'IPv6')
    expect(frontendsOf(v4)).toEqual([
      'ClusterIP 10.96.0.1:80 forward',
      'ExternalIP 192.0.2.1:80 forward',
      'LoadBalancer 203.0.113.9:80 forward',
      'NodePort *:30080 forward',
    ])
    expect(frontendsOf(v6)).toEqual([
      'ClusterIP fd00::1:80 forward',
      'ExternalIP 2001:db8::1:80 forward',
      'LoadBalancer 2001:db8:ffff::9:80 forward',
      'NodePort *:30080 forward',
    ])
    expect(v4.frontends[2]?.sourceRanges).toEqual(['198.51.100.0/24'])
    expect(v6.frontends[2]?.sourceRanges).toEqual(['2001:db8:1::/48'])
    expect(endpointsOf(v4)).toEqual(['10.0.0.1:8080'])
    expect(endpointsOf(v6)).toEqual(['fd00:10::1:8080'])
  })
})

describe('legacy v1 Endpoints', () => {
  const endpointsObj = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {name: 's', namespace: 'ns'},
    subsets: [
      {
        addresses: [{ip: '10.0.0.1', nodeName: 'me'}],
        notReadyAddresses: [{ip: '10.0.0.2'}],
        ports: [{name: 'p', port: 8080, protocol: 'TCP'}],
      },
    ],
  }

  it('are used, with a warning, when a Service has no EndpointSlice', async () => {
    const state = await build(undefined, service('s', {clusterIP: '10.96.0.1'}), endpointsObj)
    const sp = portOf(state, 'ns', 's', 'p')
    expect(sp.endpoints.map((e) => `${e.ip}:${e.port} ${e.local} ${e.state}`)).toEqual([
      '10.0.0.1:8080 true ready',
    ])
    expect(state.diagnostics.map((d) => `${d.severity} ${d.code}`)).toContain(
      'warning KUBE_LEGACY_ENDPOINTS',
    )
  })

  it('are not used when the Service has slices', async () => {
    const state = await build(
      undefined,
      service('s', {clusterIP: '10.96.0.1'}),
      endpointsObj,
      slice('s-1', 's', [{ip: '10.0.0.9'}]),
    )
    expect(endpointsOf(portOf(state, 'ns', 's', 'p'))).toEqual(['10.0.0.9:8080'])
    expect(codes(state)).not.toContain('KUBE_LEGACY_ENDPOINTS')
  })
})

describe('helpers for the IPVS builder', () => {
  it('indexes frontends by address, port and protocol; NodePorts by port alone', () => {
    const objs = [
      service('s', {
        clusterIP: '10.96.0.1',
        type: 'NodePort',
        ports: [{name: 'p', port: 80, protocol: 'UDP', nodePort: 30053}],
      }),
      slice('s-1', 's', [{ip: '10.0.0.1'}], {ports: [{name: 'p', port: 53, protocol: 'UDP'}]}),
    ]
    const state = readClusterSources([{path: 'c.json', text: list(...objs)}], {
      node: 'me',
      mode: 'ipvs',
    })
    const index = indexFrontends(state.services)
    expect([...index.keys()].sort()).toEqual(['*|30053|UDP', '10.96.0.1|80|UDP'])
    expect(index.get(frontendKey('10.96.0.1', 80, 'UDP'))?.[0]?.service.name).toBe('s')
    expect(index.get(frontendKey(null, 30053, 'UDP'))?.[0]?.frontend.type).toBe('NodePort')
    expect(frontendKey('FD00:0::1', 80, 'TCP')).toBe('fd00::1|80|TCP')
  })

  it('refuses a node dump given as cluster objects, saying what it looks like', () => {
    const state = readClusterSources(
      [{path: 'rules.txt', text: '*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n'}],
      {node: 'me', mode: 'ipvs'},
    )
    expect(
      state.diagnostics.map((d) => `${d.severity} ${d.code} ${d.source?.path}:${d.source?.line}`),
    ).toEqual(['error KUBE_NOT_CLUSTER_OBJECTS rules.txt:1'])
    expect(state.services).toEqual([])
  })

  it('refuses binary data given as cluster objects as any input is refused (was "found a string": YAML read the NULs as one)', () => {
    const state = readClusterSources([{path: '/dev/zero', text: '\u0000'.repeat(1000)}], {
      node: 'me',
      mode: 'ipvs',
    })
    expect(state.diagnostics.map((d) => [d.severity, d.code, d.message, d.source?.line])).toEqual([
      ['error', 'INPUT_BINARY', 'binary data (NUL bytes), not a text dump', 1],
    ])
  })
})
