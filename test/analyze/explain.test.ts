/**
 * explainService on the model. States are built by hand here; the expectations follow
 * kube-proxy's behaviour as restated in docs/kube-proxy-layouts.md
 * §1 (endpoint categorisation, traffic classes) and §2.4 (masquerade, REJECT, DROP, short-circuit).
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {formatShare} from '../../src/analyze/addresses.js'
import {type ExplainResult, explainService} from '../../src/analyze/explain.js'
import {parseServiceQuery, type ServiceQuery} from '../../src/analyze/explain-query.js'
import {emptyState} from '../../src/core/state.js'
import type {Endpoint, Frontend, NodeInfo, ProxyState, ServicePort} from '../../src/model/types.js'
import {parse} from '../../src/readers/kp-json/parse.js'
import {ROOT} from '../helpers/run-cli.js'

function fe(
  type: Frontend['type'],
  ip: string | null,
  port: number,
  extra: Partial<Frontend> = {},
): Frontend {
  return {type, ip, port, sourceRanges: [], action: 'forward', ...extra}
}

function ep(ip: string, share: number | null, local: boolean | null = null): Endpoint {
  return {ip, port: 8080, local, share, weight: null, state: null}
}

function svc(ns: string, name: string, extra: Partial<ServicePort> = {}): ServicePort {
  return {
    namespace: ns,
    name,
    portName: 'http',
    protocol: 'TCP',
    family: 'IPv4',
    frontends: [],
    healthCheckNodePort: null,
    internalTrafficPolicy: 'Cluster',
    externalTrafficPolicy: null,
    sessionAffinity: null,
    scheduler: null,
    endpoints: [],
    rules: [],
    ...extra,
  }
}

function state(
  services: ServicePort[],
  node: Partial<NodeInfo> = {podCIDRs: ['10.0.0.0/8'], localDetector: 'cidr', masqueradeAll: false},
): ProxyState {
  const s = emptyState('iptables')
  s.services = services
  s.node = {...s.node, ...node}
  return s
}

function q(text: string, ns?: string): ServiceQuery {
  const query = parseServiceQuery(text, ns)
  if ('invalid' in query) throw new Error(query.invalid)
  return query
}

function found(s: ProxyState, text: string, ns?: string): ExplainResult {
  const r = explainService(s, q(text, ns))
  if (r.kind !== 'ExplainResult') throw new Error(`not found: ${text}`)
  return r
}

const web = svc('shop', 'web', {
  frontends: [
    fe('ClusterIP', '172.30.1.10', 80),
    fe('LoadBalancer', '5.6.7.8', 80, {sourceRanges: ['203.0.113.0/25']}),
    fe('NodePort', null, 30080),
  ],
  externalTrafficPolicy: 'Cluster',
  endpoints: [ep('10.1.0.1', 1 / 3), ep('10.1.0.2', 1 / 3), ep('10.1.0.3', 1 / 3)],
  sessionAffinity: {type: 'ClientIP', timeoutSeconds: 10800},
  rules: [
    {path: 'b.rules', line: 3},
    {path: 'a.rules', line: 9},
    {path: 'a.rules', line: 2},
  ],
})
const webUdp = svc('shop', 'web', {
  protocol: 'UDP',
  portName: 'dns',
  frontends: [fe('ClusterIP', '172.30.1.10', 53)],
  endpoints: [ep('10.1.0.1', 1)],
})
const otherWeb = svc('blog', 'web', {
  frontends: [fe('ClusterIP', '172.30.2.10', 80)],
  endpoints: [ep('10.2.0.1', 1)],
})
const nodeState = state([otherWeb, web, webUdp])

describe('explainService: matching', () => {
  it('matches ns/name to every port of the service, and only that namespace', () => {
    const r = found(nodeState, 'shop/web')
    expect(r.matches.map((m) => m.service.displayName)).toEqual([
      'shop/web:http/tcp',
      'shop/web:dns/udp',
    ])
    expect(r).toMatchObject({schemaVersion: 1, kind: 'ExplainResult', mode: 'iptables'})
  })
  it('matches a bare name in every namespace, or the one -n names', () => {
    expect(found(nodeState, 'web').matches).toHaveLength(3)
    expect(found(nodeState, 'web', 'blog').matches.map((m) => m.service.namespace)).toEqual([
      'blog',
    ])
  })
  it('matches a port by name or by number, and a protocol', () => {
    expect(found(nodeState, 'shop/web:dns').matches.map((m) => m.service.protocol)).toEqual(['UDP'])
    expect(found(nodeState, 'shop/web:53').matches.map((m) => m.service.protocol)).toEqual(['UDP'])
    expect(found(nodeState, 'shop/web:30080').matches.map((m) => m.service.portName)).toEqual([
      'http',
    ])
    expect(found(nodeState, 'shop/web/udp').matches.map((m) => m.service.portName)).toEqual(['dns'])
  })
  it('matches a VIP to the frontends on it only', () => {
    const r = found(nodeState, '172.30.1.10')
    expect(
      r.matches.map((m) => [m.service.displayName, m.frontends.map((f) => f.address)]),
    ).toEqual([
      ['shop/web:http/tcp', ['172.30.1.10:80']],
      ['shop/web:dns/udp', ['172.30.1.10:53']],
    ])
    expect(found(nodeState, '172.30.1.10:53/udp').matches).toHaveLength(1)
    expect(found(nodeState, '5.6.7.8:80').matches[0]!.frontends.map((f) => f.type)).toEqual([
      'LoadBalancer',
    ])
  })
  it('matches an IPv6 VIP however it is spelled', () => {
    const v6 = svc('ns', 'v6', {
      family: 'IPv6',
      frontends: [fe('ClusterIP', 'fd00:172:30::47', 80)],
      endpoints: [],
    })
    expect(found(state([v6]), '[fd00:172:30:0:0::47]:80').matches[0]!.frontends[0]!.address).toBe(
      '[fd00:172:30::47]:80',
    )
  })
  it('matches :PORT and node-IP:PORT to a NodePort on every node address, saying what it assumes', () => {
    expect(found(nodeState, ':30080').matches[0]!.frontends.map((f) => f.address)).toEqual([
      '*:30080',
    ])
    const r = found(nodeState, '192.168.1.5:30080/tcp')
    expect(r.matches[0]!.frontends.map((f) => f.type)).toEqual(['NodePort'])
    expect(r.matches[0]!.frontends[0]!.notes.join(' ')).toContain(
      "192.168.1.5 is not a service IP; this assumes it is one of this node's addresses",
    )
  })
  it('does not take a ClusterIP for a node address', () => {
    expect(explainService(nodeState, q('172.30.1.10:30080')).kind).toBe('NotFound')
  })
  it('names the three closest service ports when nothing matches', () => {
    const r = explainService(nodeState, q('shop/wbe'))
    expect(r).toEqual({
      kind: 'NotFound',
      query: q('shop/wbe'),
      suggestions: ['shop/web:dns/udp', 'shop/web:http/tcp', 'blog/web:http/tcp'],
    })
    expect(explainService(state([]), q('x/y'))).toMatchObject({kind: 'NotFound', suggestions: []})
  })
})

describe('explainService: what a new connection gets', () => {
  const r = found(nodeState, 'shop/web:http')
  const match = r.matches[0]!
  const [clusterIp, lb, nodePort] = match.frontends

  it('lists the endpoints with their effective shares, and rules in source order', () => {
    expect(match.endpoints.map((e) => [e.address, formatShare(e.share)])).toEqual([
      ['10.1.0.1:8080', '33.3 %'],
      ['10.1.0.2:8080', '33.3 %'],
      ['10.1.0.3:8080', '33.3 %'],
    ])
    expect(match.rules).toEqual([
      {path: 'a.rules', line: 2},
      {path: 'a.rules', line: 9},
      {path: 'b.rules', line: 3},
    ])
    expect(match.affinity).toMatchObject({type: 'ClientIP', timeoutSeconds: 10800})
    expect(match.affinity!.text).toContain('10800 s')
  })
  it('ClusterIP: forwarded to one of the endpoints, masqueraded unless from the pod CIDR', () => {
    expect(clusterIp).toMatchObject({
      action: 'forward',
      trafficPolicy: 'Cluster',
      masquerade: {when: 'conditional'},
    })
    expect(clusterIp!.verdict).toContain('one of 3 endpoints')
    expect(clusterIp!.masquerade.reason).toContain('10.0.0.0/8')
    expect(clusterIp!.reaches).toHaveLength(3)
  })
  it('external frontends with ETP=Cluster: always masqueraded', () => {
    expect(lb!.masquerade.when).toBe('always')
    expect(nodePort!.masquerade.when).toBe('always')
    expect(lb!.masquerade.reason).toContain('externalTrafficPolicy=Cluster')
  })
  it('source ranges filter the LB, not the NodePort', () => {
    expect(lb!.sourceRanges).toEqual(['203.0.113.0/25'])
    expect(lb!.notes.join(' ')).toContain('Only clients from 203.0.113.0/25')
    expect(nodePort!.notes.join(' ')).not.toContain('Only clients')
  })

  it('no endpoints: rejected, nothing masqueraded', () => {
    const s = state([
      svc('ns6', 'svc6', {
        frontends: [fe('ClusterIP', '172.30.0.46', 80, {action: 'reject'})],
        internalTrafficPolicy: null,
      }),
    ])
    const f = found(s, 'ns6/svc6').matches[0]!.frontends[0]!
    expect(f).toMatchObject({action: 'reject', masquerade: {when: 'never'}, reaches: []})
    expect(f.verdict).toContain('no endpoints')
  })

  it('ETP=Local without local endpoints: dropped for outside clients, short-circuited for pods and the node', () => {
    const s = state([
      svc('ns2', 'svc2', {
        frontends: [
          fe('ClusterIP', '172.30.0.42', 80),
          fe('NodePort', null, 3001, {action: 'drop'}),
        ],
        externalTrafficPolicy: 'Local',
        endpoints: [ep('10.180.0.2', 1, false)],
      }),
    ])
    const [cip, np] = found(s, 'ns2/svc2').matches[0]!.frontends
    expect(cip!.action).toBe('forward')
    expect(np).toMatchObject({
      action: 'drop',
      trafficPolicy: 'Local',
      masquerade: {when: 'conditional'},
      reaches: [],
    })
    expect(np!.verdict).toContain(
      'externalTrafficPolicy=Local and no endpoint of this service runs on this node',
    )
    expect(np!.notes.join(' ')).toContain('from pods and from this node itself are not dropped')
  })

  it('ETP=Local with a local endpoint: outside clients reach only it; the client address is kept', () => {
    const s = state([
      svc('ns', 'local', {
        frontends: [fe('ExternalIP', '192.168.99.22', 80)],
        externalTrafficPolicy: 'Local',
        endpoints: [
          ep('10.1.0.1', 1 / 3, false),
          ep('10.1.0.2', 1 / 3, true),
          ep('10.1.0.3', 1 / 3, false),
        ],
      }),
    ])
    const f = found(s, 'ns/local').matches[0]!.frontends[0]!
    expect(f.reaches).toEqual([{ip: '10.1.0.2', port: 8080, share: 1}])
    expect(f.verdict).toContain('on this node (externalTrafficPolicy=Local)')
    expect(f.masquerade.reason).toContain("keeps the client's source address")
    expect(f.notes.join(' ')).toContain('short-circuited to all 3 endpoints')
  })

  it('ETP=Local where the source cannot tell locality: no share is claimed, and it says so', () => {
    const s = state([
      svc('ns', 'unknown', {
        frontends: [fe('NodePort', null, 30001)],
        externalTrafficPolicy: 'Local',
        endpoints: [ep('10.1.0.1', 0.5), ep('10.1.0.2', 0.5)],
      }),
    ])
    const f = found(s, 'ns/unknown').matches[0]!.frontends[0]!
    expect(f.reaches.map((r) => r.share)).toEqual([null, null])
    expect(f.verdict).toContain('this source does not show which of the 2 endpoints run here')
  })

  it('claims the ETP=Local short-circuit only for the iptables and nftables layouts', () => {
    const services = [
      svc('ns2', 'svc2', {
        frontends: [fe('NodePort', null, 3001, {action: 'drop'})],
        externalTrafficPolicy: 'Local',
        endpoints: [ep('10.180.0.2', 1, false)],
      }),
    ]
    const notes = (mode: ProxyState['mode']) => {
      const s = {...state(structuredClone(services)), mode}
      const f = found(s, 'ns2/svc2').matches[0]!.frontends[0]!
      return [...f.notes, f.masquerade.reason].join(' ')
    }
    expect(notes('nftables')).toContain('short-circuited')
    expect(notes('ipvs')).not.toContain('short-circuited')
    expect(notes('cluster')).not.toContain('short-circuited')
  })

  it('ITP=Local without local endpoints drops ClusterIP traffic', () => {
    const s = state([
      svc('ns', 'itp', {
        frontends: [fe('ClusterIP', '172.30.0.9', 80, {action: 'drop'})],
        internalTrafficPolicy: 'Local',
        endpoints: [ep('10.1.0.1', 1, false)],
      }),
    ])
    expect(found(s, 'ns/itp').matches[0]!.frontends[0]!.verdict).toContain(
      'internalTrafficPolicy=Local',
    )
  })

  it("ITP=Local with a NodePort (ETP=Cluster): the NodePort picks every endpoint alike, not by the ClusterIP's local shares", () => {
    // The shares are the ClusterIP's path (the local endpoint, 100 %); renormalised over all
    // endpoints they gave the NodePort 100 % / 0 % / 0 %.
    const s = state([
      svc('ns', 'itp', {
        frontends: [fe('ClusterIP', '172.30.0.9', 80), fe('NodePort', null, 30080)],
        internalTrafficPolicy: 'Local',
        externalTrafficPolicy: 'Cluster',
        endpoints: [ep('10.1.0.1', 1, true), ep('10.1.0.2', 0, false), ep('10.1.0.3', 0, false)],
      }),
    ])
    const [clusterIP, nodePort] = found(s, 'ns/itp').matches[0]!.frontends
    expect(clusterIP!.reaches.map((r) => `${r.ip} ${r.share}`)).toEqual(['10.1.0.1 1'])
    expect(nodePort!.reaches.map((r) => `${r.ip} ${r.share}`)).toEqual([
      '10.1.0.1 0.3333333333333333',
      '10.1.0.2 0.3333333333333333',
      '10.1.0.3 0.3333333333333333',
    ])
    // Cluster objects: only the ready endpoints are on the cluster path.
    const c = state(
      s.services.map((sp) => ({
        ...sp,
        endpoints: [
          {...ep('10.1.0.1', 1, true), state: 'serving-terminating' as const},
          {...ep('10.1.0.2', 0, false), state: 'ready' as const},
        ],
      })),
    )
    c.mode = 'cluster'
    expect(
      found(c, 'ns/itp').matches[0]!.frontends[1]!.reaches.map((r) => `${r.ip} ${r.share}`),
    ).toEqual(['10.1.0.2 1'])
    // Read from rules: the terminating fallback is said, the others have no state (not "ready").
    const r = state(
      s.services.map((sp) => ({
        ...sp,
        endpoints: [
          {...ep('10.1.0.1', 1, true), state: 'serving-terminating' as const},
          ep('10.1.0.2', 0, false),
          ep('10.1.0.3', 0, false),
        ],
      })),
    )
    expect(
      found(r, 'ns/itp').matches[0]!.frontends[1]!.reaches.map((x) => `${x.ip} ${x.share}`),
    ).toEqual(['10.1.0.2 0.5', '10.1.0.3 0.5'])
  })

  it('an old-layout externalIP says what a connection from the node itself gets', async () => {
    const {readFiles} = await import('../../src/readers/read-state.js')
    const {state: old} = await readFiles({
      files: [`${ROOT}fixtures/iptables/handmade-legacy-xlb/input.rules`],
    })
    const r = explainService(old, q('192.0.2.20:80')) as ExplainResult
    const [external] = r.matches[0]!.frontends
    expect(external!.action).toBe('forward')
    expect(external!.notes).toEqual([
      expect.stringMatching(
        /^From this node itself .*not forwarded unless 192\.0\.2\.20 is one of this node's addresses.*! --src-type LOCAL/,
      ),
    ])
    // The same frontend without the exclusion (current layouts) says nothing of the kind.
    const now = state([
      svc('ns', 'web', {
        frontends: [fe('ExternalIP', '192.0.2.20', 80)],
        endpoints: [ep('10.1.0.1', 1)],
        externalTrafficPolicy: 'Cluster',
      }),
    ])
    const plain = explainService(now, q('192.0.2.20:80')) as ExplainResult
    expect(plain.matches[0]!.frontends[0]!.notes).toEqual([])
  })

  it("an old KUBE-XLB without 'route LOCAL traffic' does not short-circuit the node's own connection", async () => {
    // ≤≈1.14 (handmade-legacy-xlb): only pods are sent to KUBE-SVC; the node's own connection is
    // any client's (the kernel showed it: kp verify's localhost probes). ≈1.15–1.23 add the rule.
    const {readFiles} = await import('../../src/readers/read-state.js')
    const {state: old} = await readFiles({
      files: [`${ROOT}fixtures/iptables/handmade-legacy-xlb/input.rules`],
    })
    const notesOf = (name: string, type: string) =>
      (explainService(old, q(name)) as ExplainResult).matches[0]!.frontends.find(
        (f) => f.type === type,
      )!.notes
    const lb = notesOf('default/lb', 'NodePort')
    expect(lb).toContain(
      'Connections from pods are short-circuited to all 2 endpoints, not only the local ones.',
    )
    expect(lb.join(' ')).not.toMatch(/from this node itself are short-circuited/)
    expect(lb).toContainEqual(
      expect.stringMatching(
        /^From this node itself \(127\.0\.0\.1 included\): only to the endpoints on this node/,
      ),
    )
    const nolocal = notesOf('default/nolocal', 'NodePort')
    expect(nolocal).toContain(
      'Connections from pods are not dropped: they are short-circuited to the 1 endpoint elsewhere in the cluster.',
    )
    expect(nolocal).toContainEqual(expect.stringMatching(/^From this node itself .*: dropped too/))
    const {state: newer} = await readFiles({
      files: [`${ROOT}fixtures/iptables/fragment-grep-xlb/input.rules`],
    })
    expect(newer.services[0]!.externalFromNode).toBe('cluster')
    const np = (
      explainService(newer, q('default/test-svc')) as ExplainResult
    ).matches[0]!.frontends.find((f) => f.type === 'NodePort')!
    expect(np.notes.join(' ')).not.toMatch(/^From this node itself/)
  })

  it('an old-layout LB source range only marks an outside source for drop: forwarded, it leaves un-NATed', async () => {
    // ≤1.24 KUBE-FW ends in nat KUBE-MARK-DROP; the kubelet's KUBE-FIREWALL is jumped to from filter
    // INPUT and OUTPUT only (as in the fixture), so kp trace --from 192.0.2.9 says "forwarded unchanged".
    const {readFiles} = await import('../../src/readers/read-state.js')
    const {state: old} = await readFiles({
      files: [`${ROOT}fixtures/iptables/handmade-legacy-xlb/input.rules`],
    })
    const r = explainService(old, q('198.51.100.5:443')) as ExplainResult
    const lb = r.matches[0]!.frontends.find((f) => f.type === 'LoadBalancer')!
    const ranges = lb.notes.filter((n) => n.includes('loadBalancerSourceRanges'))
    expect(ranges).toEqual([
      "Only clients from 203.0.113.0/24 are load-balanced (loadBalancerSourceRanges). A connection from any other source is not load-balanced: marked for drop, but the kubelet drops marked packets only for the node itself; forwarded, it leaves toward 198.51.100.5 unchanged. It is dropped only if 198.51.100.5 is one of this node's addresses.",
    ])
    expect(lb.notes.join(' ')).not.toMatch(/any other source is dropped/)
    // Current layouts drop it in filter KUBE-PROXY-FIREWALL (INPUT, FORWARD, OUTPUT): plainly dropped.
    const now = state([
      svc('ns', 'web', {
        frontends: [fe('LoadBalancer', '198.51.100.5', 443, {sourceRanges: ['203.0.113.0/24']})],
        endpoints: [ep('10.1.0.1', 1)],
        externalTrafficPolicy: 'Cluster',
      }),
    ])
    const plain = explainService(now, q('198.51.100.5:443')) as ExplainResult
    expect(plain.matches[0]!.frontends[0]!.notes).toEqual([
      'Only clients from 203.0.113.0/24 are let in (loadBalancerSourceRanges); a connection from any other source is dropped.',
    ])
  })

  it('an old-layout "no local endpoints" drop is only a mark: a forwarded LB IP leaves un-NATed, a NodePort is dropped', async () => {
    // handmade-legacy-xlb's default/nolocal (KUBE-XLB -> KUBE-MARK-DROP) given an LB IP the ≤1.23 way
    // (KUBE-SERVICES -> KUBE-FW -> KUBE-XLB, the FW chain ending in KUBE-MARK-DROP): the fixture the
    // kernel test of kp verify runs (test/live/verify.test.ts).
    const {readFiles} = await import('../../src/readers/read-state.js')
    const file = `${ROOT}fixtures/verify/legacy-xlb-lb-nolocal/input.rules`
    const {state: old} = await readFiles({files: [file]})
    const r = explainService(old, q('default/nolocal')) as ExplainResult
    const byType = new Map(r.matches[0]!.frontends.map((f) => [f.type, f]))
    const lbFe = byType.get('LoadBalancer')!
    expect(lbFe.action).toBe('drop')
    expect(lbFe.noLocalMarkedForDrop).toBe(true)
    expect(lbFe.verdict).toBe(
      "No local endpoint (externalTrafficPolicy=Local): marked for drop, but the kubelet drops marked packets only for the node itself; forwarded, it leaves toward 198.51.100.6 unchanged; dropped only if 198.51.100.6 is one of this node's addresses.",
    )
    // A NodePort is delivered to the node itself: KUBE-FIREWALL in filter INPUT drops it.
    const np = byType.get('NodePort')!
    expect(np.verdict).toMatch(/^Dropped: externalTrafficPolicy=Local and no endpoint/)
  })

  it('says a NodePort kube-proxy 1.37 rejects on 127.0.0.1 is not served on localhost', async () => {
    const {readFiles} = await import('../../src/readers/read-state.js')
    const {state: s} = await readFiles({
      files: [`${ROOT}fixtures/verify/nft-localhost-reject/ruleset.nft`],
    })
    const np = (name: string) =>
      (explainService(s, q(name)) as ExplainResult).matches[0]!.frontends.find(
        (f) => f.type === 'NodePort',
      )!
    expect(np('gen/api').localhostRejected).toBe(true)
    expect(np('gen/api').notes).toContain(
      'On 127.0.0.1:30443 from this node itself: rejected (kube-proxy 1.37+ localhost NodePorts, map localhost-nodeport-reject-ports); not served on localhost.',
    )
    expect(np('gen/shop').localhostRejected).toBeUndefined()
    expect(np('gen/shop').notes.join(' ')).not.toMatch(/127\.0\.0\.1/)
  })

  it('masquerade follows --masquerade-all and the local-traffic detector', () => {
    const one = [
      svc('ns', 's', {
        frontends: [fe('ClusterIP', '172.30.0.9', 80)],
        endpoints: [ep('10.1.0.1', 1)],
      }),
    ]
    const when = (node: Partial<NodeInfo>) =>
      found(state(one, node), 'ns/s').matches[0]!.frontends[0]!.masquerade.when
    expect(when({masqueradeAll: true, localDetector: 'cidr', podCIDRs: ['10.0.0.0/8']})).toBe(
      'always',
    )
    expect(when({masqueradeAll: false, localDetector: 'none'})).toBe('never')
    expect(when({masqueradeAll: false, localDetector: 'interface', localInterface: 'cbr0'})).toBe(
      'conditional',
    )
    expect(when({masqueradeAll: null, localDetector: null})).toBe('unknown')
  })

  it('shares stay unknown where a scheduler decides (IPVS)', () => {
    const s = state([
      svc('ns', 'ipvs', {
        frontends: [fe('ClusterIP', '172.30.0.9', 80)],
        scheduler: 'rr',
        endpoints: [ep('10.1.0.1', null), ep('10.1.0.2', null)],
      }),
    ])
    const m = found(s, 'ns/ipvs').matches[0]!
    expect(m.frontends[0]!.reaches.map((x) => x.share)).toEqual([null, null])
    expect(m.notes.join(' ')).toContain('"rr" scheduler')
  })
})

describe('explainService on the hand-made overall state (fixtures/kp-json/overall)', () => {
  const path = `${ROOT}fixtures/kp-json/overall/state.json`
  const overall = parse({path, text: readFileSync(path, 'utf8')}).data!

  it('ns5/svc5: LB behind 203.0.113.0/25, ClientIP affinity 10800 s (iptables-overall.dump lines 65, 89)', () => {
    const m = found(overall, 'ns5/svc5').matches[0]!
    expect(m.frontends.map((f) => [f.type, f.address, f.action])).toEqual([
      ['ClusterIP', '172.30.0.45:80', 'forward'],
      ['LoadBalancer', '5.6.7.8:80', 'forward'],
      ['NodePort', '*:3002', 'forward'],
    ])
    expect(m.frontends[1]!.sourceRanges).toEqual(['203.0.113.0/25'])
    expect(m.affinity?.timeoutSeconds).toBe(10800)
    expect(m.rules[0]).toEqual({path: 'fixtures/iptables/upstream-overall/input.rules', line: 17})
  })
  it('ns4/svc4: the 0.5 cascade (dump line 84) is 50 % each', () => {
    expect(
      found(overall, 'ns4/svc4').matches[0]!.endpoints.map((e) => formatShare(e.share)),
    ).toEqual(['50 %', '50 %'])
  })
  it('the unnamed UDP port is shown as ns8/svc8/udp', () => {
    expect(found(overall, '172.30.0.48:53/udp').matches[0]!.service.displayName).toBe(
      'ns8/svc8/udp',
    )
  })
})
