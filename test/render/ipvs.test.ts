/**
 * The IPVS renderer against the corpus's generated IPVS scenario (fixtures/render/ipvs-generated,
 * provenance there): the scenario's cluster objects are read with the kube reader and rendered;
 * the virtual servers, ipsets and companion iptables rules must be the scenario's.
 *
 * Fixtures, not the kernel: the test machines' kernel has no IPVS, so no virtual server can be
 * created and listed here (docs/architecture.md, "Tests"); the listings are ipvsadm 1.31's formats (see PROVENANCE.md).
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {readState} from '../../src/readers/read-state.js'
import {renderIpvs} from '../../src/render/ipvs/render.js'
import {ipvsSetName} from '../../src/kube-proxy/ipvs-names.js'
import {emptyState} from '../../src/core/state.js'
import type {ProxyState, ServicePort} from '../../src/model/types.js'
import type {RenderResult} from '../../src/render/types.js'
import {ROOT} from '../helpers/run-cli.js'
import {endpoint, servicePort} from '../helpers/builders.js'

const DIR = join(ROOT, 'fixtures/render/ipvs-generated')
const YAML = join(
  ROOT,
  'fixtures/kube/ipvs-generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml',
)
const read = (name: string) => readFileSync(join(DIR, name), 'utf8')
const lines = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))
const file = (r: RenderResult, name: string) => r.files.find((f) => f.name === name)!.text

/** ipvsadm -Sn / restore lines as {virtual server line -> sorted real server lines}. */
function virtualServers(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const l of lines(text)) {
    if (l.startsWith('-A ')) out.set(l, out.get(l) ?? [])
    else if (l.startsWith('-a ')) {
      const svc = l.slice(3, l.indexOf(' -r '))
      const key = [...out.keys()].find((k) => k.startsWith(`-A ${svc} -s `))
      if (key === undefined) throw new Error(`real server before its service: ${l}`)
      out.get(key)!.push(l)
    }
  }
  for (const v of out.values()) v.sort()
  return out
}

/** ipset save / restore as {set name -> type and sorted members}. */
function ipsets(text: string): Map<string, {type: string; members: string[]}> {
  const out = new Map<string, {type: string; members: string[]}>()
  for (const l of lines(text)) {
    const [verb, name, rest] = l.split(' ', 3)
    if (verb === 'create') out.set(name!, {type: rest!.split(' ', 1)[0]!, members: []})
    else if (verb === 'add') out.get(name!)!.members.push(l.slice(`add ${name} `.length))
  }
  for (const s of out.values()) s.members.sort()
  return out
}

describe('renderIpvs reproduces the generated IPVS scenario of node-a', () => {
  let result: RenderResult
  beforeAll(async () => {
    const state = await readState(
      {sources: [{path: YAML, text: readFileSync(YAML, 'utf8')}]},
      {node: 'node-a'},
    )
    // Node settings of the scenario (fixtures/PROVENANCE.md, IPVS corpus): node IP 10.0.0.10, cluster CIDR
    // 10.244.0.0/16, mark written %#08x, MASQUERADE --random-fully.
    result = renderIpvs(state, {
      nodeIPs: ['10.0.0.10'],
      podCIDRs: ['10.244.0.0/16'],
      masqueradeMark: '0x004000',
      randomFully: true,
    })
  })

  it('virtual servers and their weight-1 real servers are ipvsadm -Sn’s', () => {
    const expected = read('ipvsadm-Sn.txt')
      .split('\n')
      .filter((l) => !l.endsWith(' -w 0')) // draining leftovers, not produced by the cluster objects
      .join('\n')
    expect(virtualServers(result.text)).toEqual(virtualServers(expected))
    expect(result.text).toBe(file(result, 'ipvsadm-restore.txt'))
  })

  it('ipset names, types and members are ipset save’s', () => {
    expect(ipsets(file(result, 'ipset-restore.txt'))).toEqual(
      ipsets(read('ipset-save.ipvs-mode.txt')),
    )
  })

  it('the IPv4 companion iptables rules are kube-proxy’s restore input, line for line', () => {
    expect(lines(file(result, 'ipvs-iptables-restore.v4.txt'))).toEqual(
      lines(read('iptables-restore-input.as-written-by-kube-proxy.txt')),
    )
  })

  it('binds exactly the KUBE-IPVS-IPS addresses to kube-ipvs0', () => {
    const sets = ipsets(file(result, 'ipset-restore.txt'))
    const bound = lines(file(result, 'kube-ipvs0.sh'))
      .filter((l) => l.startsWith('ip addr add '))
      .map((l) => l.split(' ')[3]!)
    const expected = [
      ...sets.get('KUBE-IPVS-IPS')!.members.map((ip) => `${ip}/32`),
      ...sets.get('KUBE-6-IPVS-IPS')!.members.map((ip) => `${ip}/128`),
    ]
    expect(bound.sort()).toEqual(expected.sort())
  })
})

describe('the node’s IPVS dumps -> IPVS reader -> renderIpvs gives them back', () => {
  let result: RenderResult
  beforeAll(async () => {
    const names = [
      'ipvsadm-Sn.txt',
      'ipset-save.ipvs-mode.txt',
      'iptables-save.ipvs-mode.nft-backend.txt',
    ]
    const state = await readState({
      sources: names.map((n) => ({path: join(DIR, n), text: read(n)})),
    })
    expect(state.mode).toBe('ipvs')
    // No option: every node setting comes from the dumps.
    result = renderIpvs(state)
  })

  it('virtual servers and weight-1 real servers', () => {
    const expected = read('ipvsadm-Sn.txt')
      .split('\n')
      .filter((l) => !l.endsWith(' -w 0'))
      .join('\n')
    expect(virtualServers(result.text)).toEqual(virtualServers(expected))
  })

  it('ipsets, except the health check NodePort the dumps cannot tie to a service', () => {
    const got = ipsets(file(result, 'ipset-restore.txt'))
    const want = ipsets(read('ipset-save.ipvs-mode.txt'))
    // KUBE-HEALTH-CHECK-NODE-PORT holds bare ports; nothing in IPVS mode's dumps says whose
    // port 32000 is, so the model has no service with that healthCheckNodePort.
    expect(want.get('KUBE-HEALTH-CHECK-NODE-PORT')!.members).toEqual(['32000'])
    want.get('KUBE-HEALTH-CHECK-NODE-PORT')!.members = []
    expect(got).toEqual(want)
  })

  it('the companion iptables rules, with the mark as iptables-save prints it', () => {
    // iptables-save prints kube-proxy's 0x004000 as 0x4000, and the model keeps what the dump shows.
    const want = lines(read('iptables-restore-input.as-written-by-kube-proxy.txt')).map((l) =>
      l.replaceAll('0x004000', '0x4000'),
    )
    expect(lines(file(result, 'ipvs-iptables-restore.v4.txt'))).toEqual(want)
  })
})

const svc = servicePort

const ep = (ip: string, port = 80, local: boolean | null = null) => endpoint(ip, port, {local})

function stateWith(services: ServicePort[]): ProxyState {
  const s = emptyState('ipvs')
  Object.assign(s.node, {
    podCIDRs: ['10.0.0.0/8'],
    localDetector: 'cidr',
    masqueradeMark: '0x4000',
    masqueradeAll: false,
    randomFully: true,
    nodePortAddresses: [],
  })
  s.services = services
  return s
}

describe('renderIpvs, rules of reference (a) the scenario does not exercise', () => {
  it('IPv6 set names get KUBE-6- and are cut to ipset’s 31 characters', () => {
    expect(ipvsSetName('LOAD-BALANCER-SOURCE-CIDR', 'IPv6')).toBe('KUBE-6-LOAD-BALANCER-SOURCE-CID')
    expect(ipvsSetName('NODE-PORT-LOCAL-SCTP-HASH', 'IPv6')).toBe('KUBE-6-NODE-PORT-LOCAL-SCTP-HAS')
    expect(ipvsSetName('CLUSTER-IP', 'IPv4')).toBe('KUBE-CLUSTER-IP')
  })

  it('a source range without the node IP blocks the node with KUBE-IPVS-OUT-FILTER', () => {
    const s = stateWith([
      svc({
        frontends: [
          {type: 'ClusterIP', ip: '172.30.0.41', port: 80, sourceRanges: [], action: 'forward'},
          {
            type: 'LoadBalancer',
            ip: '5.6.7.8',
            port: 80,
            sourceRanges: ['203.0.113.0/25'],
            action: 'forward',
          },
        ],
        endpoints: [ep('10.180.0.1')],
      }),
    ])
    const r = renderIpvs(s, {nodeIPs: ['192.168.0.2'], bare: true})
    expect(file(r, 'ipvs-iptables-restore.v4.txt')).toContain(
      '-A KUBE-IPVS-OUT-FILTER -s 5.6.7.8 -m ipvs --vaddr 5.6.7.8 --vproto tcp --vport 80 -j DROP',
    )
    expect(
      ipsets(file(r, 'ipset-restore.txt')).get('KUBE-LOAD-BALANCER-SOURCE-IP')!.members,
    ).toEqual([])
    const inside = renderIpvs(s, {nodeIPs: ['203.0.113.9'], bare: true})
    expect(file(inside, 'ipvs-iptables-restore.v4.txt')).not.toContain('KUBE-IPVS-OUT-FILTER -s')
    expect(
      ipsets(file(inside, 'ipset-restore.txt')).get('KUBE-LOAD-BALANCER-SOURCE-IP')!.members,
    ).toEqual(['5.6.7.8,tcp:80,5.6.7.8'])
  })

  it('ETP=Local without local endpoints falls back to the cluster endpoints (PR #97081)', () => {
    const s = stateWith([
      svc({
        externalTrafficPolicy: 'Local',
        frontends: [
          {type: 'ClusterIP', ip: '172.30.0.41', port: 80, sourceRanges: [], action: 'forward'},
          {type: 'NodePort', ip: null, port: 30080, sourceRanges: [], action: 'drop'},
        ],
        endpoints: [ep('10.180.0.2', 80, false)],
      }),
    ])
    const vs = virtualServers(renderIpvs(s, {nodeIPs: ['192.168.0.2']}).text)
    expect(vs.get('-A -t 192.168.0.2:30080 -s rr')).toEqual([
      '-a -t 192.168.0.2:30080 -r 10.180.0.2:80 -m -w 1',
    ])
  })

  it('NodePorts without known node IPs: sets written, virtual servers left out, and said', () => {
    const s = stateWith([
      svc({
        frontends: [
          {type: 'ClusterIP', ip: '172.30.0.41', port: 80, sourceRanges: [], action: 'forward'},
          {type: 'NodePort', ip: null, port: 30080, sourceRanges: [], action: 'forward'},
        ],
        endpoints: [ep('10.180.0.1')],
      }),
    ])
    const r = renderIpvs(s)
    expect([...virtualServers(r.text).keys()]).toEqual(['-A -t 172.30.0.41:80 -s rr'])
    expect(ipsets(file(r, 'ipset-restore.txt')).get('KUBE-NODE-PORT-TCP')!.members).toEqual([
      '30080',
    ])
    expect(r.findings.map((f) => f.id)).toContain('RENDER_MISSING_NODE_IPS')
  })

  it('keeps a state’s own scheduler and persistence; IPv6 addresses in brackets', () => {
    const s = stateWith([
      svc({
        family: 'IPv6',
        scheduler: 'sh',
        sessionAffinity: {type: 'ClientIP', timeoutSeconds: 60},
        frontends: [
          {type: 'ClusterIP', ip: 'fd00::41', port: 80, sourceRanges: [], action: 'forward'},
        ],
        endpoints: [ep('fd00:180::1')],
      }),
    ])
    const r = renderIpvs(s)
    expect(lines(r.text)).toEqual([
      '-A -t [fd00::41]:80 -s sh -p 60',
      '-a -t [fd00::41]:80 -r [fd00:180::1]:80 -m -w 1',
    ])
    expect(r.findings.map((f) => f.id)).not.toContain('RENDER_SCHEDULER_NOT_EXPRESSIBLE')
  })
})
