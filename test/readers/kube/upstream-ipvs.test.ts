/**
 * kube-proxy's own IPVS unit-test expectations (fixtures/kube/upstream-ipvs-proxier-test,
 * pkg/proxy/ipvs/proxier_test.go). Each case's Services and EndpointSlices are written as
 * Kubernetes objects (one JSON List per case, so the JSON path of the reader runs too), read for
 * mode ipvs from the point of view of the case's node, and turned into virtual servers:
 *
 *   * only service ports of the case's proxier family (one proxier per family, a.1);
 *   * ClusterIP / ExternalIP / LoadBalancer frontend ip:port  -> one VS at that address;
 *   * NodePort frontend (ip null, port nodePort)               -> one VS per node IP of that family,
 *     limited by nodePortAddresses when set (the fake proxier is handed its node IPs);
 *   * real servers of a VS = frontendEndpoints(servicePort, frontend, 'ipvs'), weight 1;
 *   * flags 0 / timeout 0 <-> no session affinity (flag 1 would be ClientIP persistence).
 * The scheduler is configuration ("rr" is the default), so the cluster state leaves it null.
 */
import {describe, expect, it} from 'vitest'
import type {Family} from '../../../src/model/types.js'
import {frontendEndpoints} from '../../../src/kube-proxy/endpoints.js'
import {clusterState, errors, fixtureText} from './helpers.js'

interface CaseService {
  namespace: string
  name: string
  type: string
  clusterIP: string
  ports: Array<{name: string; port: number; protocol: string; nodePort?: number}>
  externalTrafficPolicy?: string
}
interface CaseSlice {
  namespace: string
  name: string
  labels: Record<string, string>
  addressType: string
  endpoints: Array<{addresses: string[]; nodeName?: string}>
  ports: Array<{name: string; port: number; protocol: string}>
}
interface VirtualServer {
  address: string
  port: number
  protocol: string
  scheduler: string
  flags: number
  timeout: number
  realServers: Array<{address: string; port: number; weight: number}>
}
interface Case {
  test: string
  case: string
  proxierFamily: Family
  services: CaseService[]
  endpointSlices: CaseSlice[]
  nodeIPs?: string[]
  nodePortAddresses?: string[]
  expected: {virtualServers: VirtualServer[]}
}

const corpus = JSON.parse(fixtureText('upstream-ipvs-proxier-test', 'expectations.json')) as {
  cases: Case[]
}
const NODE = 'test-node'
/** How the JSON transcription writes the proxier's own node name. */
const THIS_NODE = '<this node>'

function toKubeList(c: Case): string {
  const items: unknown[] = []
  for (const s of c.services) {
    items.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {namespace: s.namespace, name: s.name},
      spec: {
        type: s.type,
        clusterIP: s.clusterIP,
        clusterIPs: [s.clusterIP],
        ports: s.ports,
        ...(s.externalTrafficPolicy ? {externalTrafficPolicy: s.externalTrafficPolicy} : {}),
      },
    })
  }
  for (const e of c.endpointSlices) {
    items.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {namespace: e.namespace, name: e.name, labels: e.labels},
      addressType: e.addressType,
      // The tests leave conditions unset: nil ready counts as ready (c.4).
      endpoints: e.endpoints.map((ep) => ({
        addresses: ep.addresses,
        ...(ep.nodeName ? {nodeName: ep.nodeName === THIS_NODE ? NODE : ep.nodeName} : {}),
      })),
      ports: e.ports,
    })
  }
  return JSON.stringify({apiVersion: 'v1', kind: 'List', items}, null, 2)
}

const familyOf = (ip: string): Family => (ip.includes(':') ? 'IPv6' : 'IPv4')

function nodePortAddressesFor(c: Case, fam: Family): string[] {
  const ips = (c.nodeIPs ?? []).filter((ip) => familyOf(ip) === fam)
  const cidrs = c.nodePortAddresses ?? []
  if (cidrs.length === 0) return ips
  // The corpus uses only "all addresses of a family" CIDRs; anything else needs real matching here.
  for (const cidr of cidrs)
    if (cidr !== '0.0.0.0/0' && cidr !== '::/0')
      throw new Error(`test does not handle nodePortAddresses ${cidr}`)
  return cidrs.some((cidr) => familyOf(cidr) === fam) ? ips : []
}

function vsLine(
  address: string,
  port: number,
  protocol: string,
  flags: number,
  timeout: number,
  rs: string[],
): string {
  return `${address}:${port}/${protocol} flags=${flags} timeout=${timeout} -> ${[...rs].sort().join(' ')}`
}

describe('upstream IPVS proxier tests: virtual servers derived from cluster objects', () => {
  it('has the 11 cases of the corpus', () => {
    expect(corpus.cases).toHaveLength(11)
  })

  for (const c of corpus.cases) {
    it(`${c.test}: ${c.case}`, async () => {
      const state = await clusterState(toKubeList(c), {node: NODE, mode: 'ipvs', path: 'case.json'})
      expect(errors(state)).toEqual([])
      const derived: string[] = []
      for (const sp of state.services.filter((s) => s.family === c.proxierFamily)) {
        const flags = sp.sessionAffinity ? 1 : 0
        const timeout = sp.sessionAffinity?.timeoutSeconds ?? 0
        for (const fe of sp.frontends) {
          const rs = frontendEndpoints(sp, fe, 'ipvs').map((e) => {
            expect(e.weight).toBe(1)
            return `${e.ip}:${e.port}`
          })
          const addresses = fe.ip === null ? nodePortAddressesFor(c, sp.family) : [fe.ip]
          for (const address of addresses)
            derived.push(vsLine(address, fe.port!, sp.protocol, flags, timeout, rs))
        }
      }
      const expected = c.expected.virtualServers.map((vs) => {
        expect(vs.scheduler).toBe('rr')
        return vsLine(
          vs.address,
          vs.port,
          vs.protocol,
          vs.flags,
          vs.timeout,
          vs.realServers.map((r) => `${r.address}:${r.port}`),
        )
      })
      expect(derived.sort()).toEqual(expected.sort())
    })
  }

  it('says so when a slice is of a family the Service has no cluster IP in', async () => {
    // "1 UDP service with node port, has endpoints (no action on IPv6 Proxier)": an IPv4-only
    // Service whose only slice is IPv6 (and even holds an IPv4 address).
    const c = corpus.cases.find(
      (x) => x.case.startsWith('1 UDP service') && x.proxierFamily === 'IPv6',
    )!
    const state = await clusterState(toKubeList(c), {node: NODE, mode: 'ipvs'})
    expect(state.diagnostics.map((d) => `${d.severity} ${d.code}`)).toContain(
      'info KUBE_SLICE_FAMILY_UNUSED',
    )
    // The IPv4 proxier gets the service but no endpoint from an IPv6 slice: it rejects.
    expect(
      state.services.map(
        (s) => `${s.family} ${s.frontends.map((f) => f.action).join(',')} ${s.endpoints.length}`,
      ),
    ).toEqual(['IPv4 reject,reject 0'])
  })
})
