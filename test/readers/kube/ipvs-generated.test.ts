/**
 * The generated IPVS scenario (fixtures/kube/ipvs-generated, node-a). Every expectation is read
 * by hand from the YAML and the scenario in fixtures/PROVENANCE.md (IPVS corpus, generated/), with the rules of
 * docs/ipvs-layouts.md a.3 and c.2-c.5; the weight-1 real servers of the corpus's
 * ipvsadm-Ln.txt show the same sets.
 */
import {beforeAll, describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {
  clusterState,
  codes,
  endpointsOf,
  errors,
  fixtureText,
  frontendsOf,
  portOf,
} from './helpers.js'

const YAML = fixtureText('ipvs-generated', 'cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml')

describe('ipvs-generated scenario, node-a, mode ipvs', () => {
  let state: ProxyState
  beforeAll(async () => {
    state = await clusterState(YAML, {
      node: 'node-a',
      mode: 'ipvs',
      path: 'fixtures/kube/ipvs-generated/cluster.yaml',
    })
  })

  it('is a cluster state for node-a without errors or warnings', () => {
    expect(state.mode).toBe('cluster')
    expect(state.node.name).toBe('node-a')
    expect(state.node.podCIDRs).toEqual([])
    expect(state.node.masqueradeMark).toBeNull()
    expect(state.sources).toEqual([
      {path: 'fixtures/kube/ipvs-generated/cluster.yaml', format: 'kube', tool: null},
    ])
    expect(errors(state)).toEqual([])
    expect(state.diagnostics.filter((d) => d.severity === 'warning')).toEqual([])
  })

  it('has one service port per port and family; headless and ExternalName are left out', () => {
    // kubernetes(1) + lb(1) + sctp(1) + sticky(1) + web(1) + kube-dns(3 ports x 2 families).
    expect(
      state.services.map((s) => `${s.namespace}/${s.name}:${s.portName}/${s.protocol} ${s.family}`),
    ).toEqual([
      'default/kubernetes:https/TCP IPv4',
      'default/lb:https/TCP IPv4',
      'default/sctp:s/SCTP IPv4',
      'default/sticky:redis/TCP IPv4',
      'default/web:http/TCP IPv4',
      'kube-system/kube-dns:dns/UDP IPv4',
      'kube-system/kube-dns:dns/UDP IPv6',
      'kube-system/kube-dns:dns-tcp/TCP IPv4',
      'kube-system/kube-dns:dns-tcp/TCP IPv6',
      'kube-system/kube-dns:metrics/TCP IPv4',
      'kube-system/kube-dns:metrics/TCP IPv6',
    ])
    const ignored = state.diagnostics
      .filter((d) => d.code === 'KUBE_SERVICE_IGNORED')
      .map((d) => d.message)
    expect(ignored).toHaveLength(2)
    expect(ignored.some((m) => m.includes('default/db-headless') && m.includes('headless'))).toBe(
      true,
    )
    expect(ignored.some((m) => m.includes('default/ext') && m.includes('ExternalName'))).toBe(true)
    // The headless Service's slice carries service.kubernetes.io/headless and is skipped too.
    expect(codes(state)).toContain('KUBE_HEADLESS')
  })

  it('default/kubernetes: apiserver endpoint 10.0.0.10:6443 (no nodeName: never local)', () => {
    const sp = portOf(state, 'default', 'kubernetes', 'https')
    expect(frontendsOf(sp)).toEqual(['ClusterIP 10.96.0.1:443 forward'])
    expect(sp.endpoints).toEqual([
      {ip: '10.0.0.10', port: 6443, local: false, share: 1, weight: 1, state: 'ready'},
    ])
    expect(sp.sessionAffinity).toBeNull()
    expect(sp.scheduler).toBeNull()
  })

  it('default/lb: ETP=Local LoadBalancer with source ranges and healthCheckNodePort', () => {
    const sp = portOf(state, 'default', 'lb', 'https')
    expect(frontendsOf(sp)).toEqual([
      'ClusterIP 10.96.200.30:443 forward',
      'LoadBalancer 10.0.100.10:443 forward',
      'NodePort *:31443 forward',
    ])
    // Source ranges only on the LB frontend, sorted; NodePorts are not subject to them.
    expect(sp.frontends.map((f) => f.sourceRanges)).toEqual([
      [],
      ['10.0.0.0/24', '192.0.2.0/24'],
      [],
    ])
    expect(sp.externalTrafficPolicy).toBe('Local')
    expect(sp.internalTrafficPolicy).toBe('Cluster')
    expect(sp.healthCheckNodePort).toBe(32000)
    // Targets from the slice (8443), not the Service's port; lb-0 is on node-a.
    expect(sp.endpoints).toEqual([
      {ip: '10.244.1.6', port: 8443, local: true, share: 0.5, weight: 1, state: 'ready'},
      {ip: '10.244.2.8', port: 8443, local: false, share: 0.5, weight: 1, state: 'ready'},
    ])
  })

  it('default/sctp: SCTP NodePort 30999', () => {
    const sp = portOf(state, 'default', 'sctp', 's')
    expect(sp.protocol).toBe('SCTP')
    expect(frontendsOf(sp)).toEqual([
      'ClusterIP 10.96.50.5:9999 forward',
      'NodePort *:30999 forward',
    ])
    expect(endpointsOf(sp)).toEqual(['10.244.1.9:9999'])
  })

  it('default/sticky: ClientIP affinity 10800 s over two endpoints', () => {
    const sp = portOf(state, 'default', 'sticky', 'redis')
    expect(sp.sessionAffinity).toEqual({type: 'ClientIP', timeoutSeconds: 10800})
    expect(endpointsOf(sp)).toEqual(['10.244.1.8:6379', '10.244.2.9:6379'])
    expect(sp.endpoints.map((e) => e.local)).toEqual([true, false])
  })

  it('default/web: the terminating endpoint on node-b is not used while a ready one exists', () => {
    const sp = portOf(state, 'default', 'web', 'http')
    expect(frontendsOf(sp)).toEqual([
      'ClusterIP 10.96.100.20:80 forward',
      'ExternalIP 10.0.200.5:80 forward',
      'NodePort *:30080 forward',
    ])
    // targetPort is the name "http"; the port comes from the slice: 8080.
    expect(sp.endpoints).toEqual([
      {ip: '10.244.1.5', port: 8080, local: true, share: 1, weight: 1, state: 'ready'},
    ])
    const unused = state.diagnostics.find((d) => d.code === 'KUBE_ENDPOINTS_UNUSED')
    expect(unused?.severity).toBe('info')
    expect(unused?.message).toContain('default/web')
  })

  it('kube-system/kube-dns: dual-stack, each family with its own cluster IP and slice', () => {
    const v4 = portOf(state, 'kube-system', 'kube-dns', 'dns', 'IPv4')
    const v6 = portOf(state, 'kube-system', 'kube-dns', 'dns', 'IPv6')
    expect(frontendsOf(v4)).toEqual(['ClusterIP 10.96.0.10:53 forward'])
    expect(frontendsOf(v6)).toEqual(['ClusterIP fd00:10:96::a:53 forward'])
    expect(endpointsOf(v4)).toEqual(['10.244.1.3:53', '10.244.2.4:53'])
    expect(endpointsOf(v6)).toEqual(['fd00:10:244:1::3:53', 'fd00:10:244:2::4:53'])
    const metrics6 = portOf(state, 'kube-system', 'kube-dns', 'metrics', 'IPv6')
    expect(endpointsOf(metrics6)).toEqual(['fd00:10:244:1::3:9153', 'fd00:10:244:2::4:9153'])
  })

  it('points each service port at its Service and the slices that fed it', () => {
    const sp = portOf(state, 'kube-system', 'kube-dns', 'dns', 'IPv6')
    const lines = YAML.split('\n')
    // The Service item starts at "- apiVersion: v1" before "name: kube-dns"; the IPv6 slice at its "- addressType: IPv6".
    const svcLine =
      lines.findIndex(
        (l, i) =>
          l === '- apiVersion: v1' &&
          lines[i + 1] === '  kind: Service' &&
          lines.slice(i, i + 15).some((x) => x === '    name: kube-dns'),
      ) + 1
    const v6SliceLine = lines.indexOf('- addressType: IPv6') + 1
    expect(sp.rules.map((r) => r.line)).toEqual([svcLine, v6SliceLine])
  })
})

describe('ipvs-generated scenario: the modes differ for a Local policy without local endpoints', () => {
  // node-c has none of the endpoints; default/lb is ETP=Local.
  it('iptables and nftables drop external traffic to default/lb', async () => {
    for (const mode of ['iptables', 'nftables'] as const) {
      const state = await clusterState(YAML, {node: 'node-c', mode})
      const sp = portOf(state, 'default', 'lb', 'https')
      expect(frontendsOf(sp)).toEqual([
        'ClusterIP 10.96.200.30:443 forward',
        'LoadBalancer 10.0.100.10:443 drop',
        'NodePort *:31443 drop',
      ])
      expect(sp.endpoints.map((e) => e.local)).toEqual([false, false])
      expect(sp.endpoints.map((e) => e.weight)).toEqual([null, null])
    }
  })

  it('ipvs falls back to the cluster endpoints', async () => {
    const state = await clusterState(YAML, {node: 'node-c', mode: 'ipvs'})
    const sp = portOf(state, 'default', 'lb', 'https')
    expect(frontendsOf(sp)).toEqual([
      'ClusterIP 10.96.200.30:443 forward',
      'LoadBalancer 10.0.100.10:443 forward',
      'NodePort *:31443 forward',
    ])
  })

  it('defaults to nftables when no mode is given', async () => {
    const state = await clusterState(YAML, {node: 'node-c'})
    expect(frontendsOf(portOf(state, 'default', 'lb', 'https'))[1]).toBe(
      'LoadBalancer 10.0.100.10:443 drop',
    )
  })
})
