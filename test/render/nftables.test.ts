/**
 * The nftables renderer against kube-proxy's own expectations (fixtures/render/upstream,
 * copied from the corpus), after the upstream tests' ordering normalisation (normalise.ts).
 * Inputs are states built by hand from the matching expect.json (corpus-states.ts).
 */
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {readState} from '../../src/readers/read-state.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import {emptyState} from '../../src/core/state.js'
import type {RenderOptions} from '../../src/render/types.js'
import {
  readDump,
  readExpect,
  stateFromExpect,
  UPSTREAM,
  type CorpusExtras,
} from './corpus-states.js'
import {sortNftablesTransaction} from './normalise.js'
import {endpoint, servicePort} from '../helpers/builders.js'

/**
 * The nftables harness: NodePorts on the node IP 192.168.0.2 only (the dumps' nodeport-ips
 * element) and the service CIDR 172.30.0.0/16 (the dumps' "unallocated ClusterIPs" rule).
 */
const NFT_NODE = {nodePortAddresses: ['192.168.0.2']}
const NFT_OPTS: RenderOptions = {serviceCIDRs: ['172.30.0.0/16'], kubeProxyVersion: '1.35'}

const cases: {name: string; extras: CorpusExtras}[] = [
  // Source ranges from fixtures/PROVENANCE.md (outside the JSON).
  {
    name: 'nftables-overall',
    extras: {sourceRanges: {'ns5/svc5': ['203.0.113.0/25']}, node: NFT_NODE},
  },
  {
    name: 'nftables-badips',
    extras: {sourceRanges: {'ns1/svc1': ['203.0.113.0/25']}, node: NFT_NODE},
  },
  {name: 'nftables-startup', extras: {node: NFT_NODE}},
  {name: 'nftables-syncrepeated-initial', extras: {node: NFT_NODE}},
  {name: 'nftables-syncrepeated-stalechains', extras: {node: NFT_NODE}},
  {name: 'nftables-syncrepeated-noendpoints', extras: {node: NFT_NODE}},
  {name: 'nftables-syncrepeated-twoendpoints', extras: {node: NFT_NODE}},
  {name: 'nftables-syncrepeated-emptied', extras: {node: NFT_NODE}},
]

/** `ns/svc` of a per-service chain name `prefix-HASH8-ns/svc/proto/port[__ep]`. */
function serviceOfChain(chain: string): string {
  const base = chain.split('-').slice(2).join('-')
  return base.split('/').slice(0, 2).join('/')
}

// The corpus is kube-proxy's tests at 81810de: the layout of 1.34 and 1.35 (docs/kube-proxy-layouts.md §3.10).
describe.each(['1.34', '1.35'] as const)(
  'renderNftables reproduces kube-proxy %s’s expected transaction',
  (kubeProxyVersion) => {
    for (const c of cases) {
      it(c.name, () => {
        const state = stateFromExpect(c.name, 'nftables', c.extras)
        const result = renderNftables(state, {...NFT_OPTS, kubeProxyVersion, bare: true})
        const expected = sortNftablesTransaction(readDump(c.name), {dropEmptyServiceChains: true})
        expect(sortNftablesTransaction(result.text).text).toBe(expected.text)
        expect(
          result.findings.filter(
            (f) => f.id.startsWith('RENDER_DEFAULT_') || f.id.startsWith('RENDER_MISSING_'),
          ),
        ).toEqual([])
        // The only chains left out of the comparison are flushed leftovers of services that are
        // gone or have no endpoints any more in this step (docs/kube-proxy-layouts.md §3.5).
        const withEndpoints = new Set(
          readExpect(c.name)
            .filter((e) => e.endpoints.length > 0)
            .map((e) => `${e.namespace}/${e.name}`),
        )
        for (const chain of expected.droppedChains)
          expect(withEndpoints.has(serviceOfChain(chain))).toBe(false)
      })
    }
  },
)

describe('renderNftables on the corpus', () => {
  it('the stale-chain dumps do hold empty chains (so the exclusion above is exercised)', () => {
    expect(
      sortNftablesTransaction(readDump('nftables-syncrepeated-stalechains'), {
        dropEmptyServiceChains: true,
      }).droppedChains.length,
    ).toBeGreaterThan(0)
    expect(
      sortNftablesTransaction(readDump('nftables-syncrepeated-emptied'), {
        dropEmptyServiceChains: true,
      }).droppedChains.length,
    ).toBeGreaterThan(0)
    expect(
      sortNftablesTransaction(readDump('nftables-overall'), {dropEmptyServiceChains: true})
        .droppedChains,
    ).toEqual([])
  })

  it('iptables-overall rendered into nftables reproduces nftables-overall', () => {
    // The state of the iptables scenario, with the iptables harness's node settings; the nftables
    // harness differs only in what nftables needs and iptables does not show: NodePorts on
    // 192.168.0.2 only and the service CIDR.
    const state = stateFromExpect('iptables-overall', 'iptables', {
      sourceRanges: {'ns5/svc5': ['203.0.113.0/25']},
      healthCheckNodePorts: {'ns2/svc2': 30000},
      node: {randomFully: false, localhostNodePorts: true, nodePortAddresses: []},
    })
    const result = renderNftables(state, {
      ...NFT_OPTS,
      nodePortAddresses: ['192.168.0.2'],
      bare: true,
    })
    expect(sortNftablesTransaction(result.text).text).toBe(
      sortNftablesTransaction(readDump('nftables-overall')).text,
    )
    // What nftables cannot carry over from this iptables state is said, not dropped.
    expect(result.findings.map((f) => f.id)).toContain('RENDER_HEALTH_CHECK_NODEPORT_NO_RULE')
    // Was "iptables mode accepts ...": IPVS mode accepts it too (KUBE-HEALTH-CHECK-NODE-PORT, docs/ipvs-layouts.md), and migrations from IPVS show this finding.
    expect(
      result.findings.find((f) => f.id === 'RENDER_HEALTH_CHECK_NODEPORT_NO_RULE')!.message,
    ).toMatch(/^iptables and IPVS modes accept the healthCheckNodePort/)
  })

  it('the full script replaces the table: add + delete first, then the definitions', () => {
    const state = stateFromExpect('nftables-overall', 'nftables', cases[0]!.extras)
    const lines = renderNftables(state, NFT_OPTS)
      .text.split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
    expect(lines.slice(0, 3)).toEqual([
      'add table ip kube-proxy',
      'delete table ip kube-proxy',
      'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
    ])
    expect(sortNftablesTransaction(lines.slice(2).join('\n')).text).toBe(
      sortNftablesTransaction(renderNftables(state, {...NFT_OPTS, bare: true}).text).text,
    )
  })
})

describe('nft dump -> nftables reader -> renderNftables gives the dump back', () => {
  const read = async (name: string) =>
    readState({sources: [{path: join(UPSTREAM, `${name}.dump`), text: readDump(name)}]})

  for (const c of cases) {
    it(c.name, async () => {
      const state = await read(c.name)
      expect(state.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
      // The model has no field for the service CIDRs, so they come as an option (--service-cidr).
      const result = renderNftables(state, {...NFT_OPTS, bare: true})
      expect(sortNftablesTransaction(result.text).text).toBe(
        sortNftablesTransaction(readDump(c.name), {dropEmptyServiceChains: true}).text,
      )
      expect(
        result.findings.filter(
          (f) => f.id.startsWith('RENDER_DEFAULT_') || f.id.startsWith('RENDER_MISSING_'),
        ),
      ).toEqual([])
    })
  }

  it('iptables-overall, read by the iptables reader, rendered into nftables is nftables-overall', async () => {
    const state = await read('iptables-overall')
    expect(state.mode).toBe('iptables')
    // What iptables mode does not show and nftables needs: the NodePort address and the service CIDR.
    const result = renderNftables(state, {
      ...NFT_OPTS,
      nodePortAddresses: ['192.168.0.2'],
      bare: true,
    })
    expect(sortNftablesTransaction(result.text).text).toBe(
      sortNftablesTransaction(readDump('nftables-overall')).text,
    )
  })
})

const svc = servicePort

const ep = (ip: string, port = 80, local: boolean | null = null) => endpoint(ip, port, {local})

describe('renderNftables, shapes the corpus has no dump for (docs/kube-proxy-layouts.md §3)', () => {
  const node = {
    podCIDRs: ['10.0.0.0/8', 'fd00:10::/64'],
    localDetector: 'cidr' as const,
    masqueradeMark: '0x4000',
    masqueradeAll: false,
    nodePortAddresses: [],
  }

  it('IPv6: table ip6, ipv6_addr sets, ::1 guard for "every address" NodePorts, bracketed DNAT, dotted endpoint chain names', () => {
    const s = emptyState('nftables')
    Object.assign(s.node, node)
    s.services = [
      svc({
        family: 'IPv6',
        frontends: [
          {type: 'ClusterIP', ip: 'fd00::41', port: 80, sourceRanges: [], action: 'forward'},
        ],
        endpoints: [ep('fd00:180::1')],
      }),
    ]
    const t = renderNftables(s, {kubeProxyVersion: '1.35', bare: true}).text
    expect(t).toContain(
      'add set ip6 kube-proxy cluster-ips { type ipv6_addr ; comment "Active ClusterIPs" ; }',
    )
    expect(t).toContain(
      'add rule ip6 kube-proxy services fib daddr type local ip6 daddr != ::1 meta l4proto . th dport vmap @service-nodeports',
    )
    expect(t).toContain(
      'add rule ip6 kube-proxy nodeport-endpoints-check ip6 daddr != ::1 meta l4proto . th dport vmap @no-endpoint-nodeports',
    )
    expect(t).not.toContain('nodeport-ips')
    expect(t).toMatch(
      /add rule ip6 kube-proxy endpoint-[A-Z2-7]{8}-ns1\/svc1\/tcp\/p80__fd00\.180\.\.1\/80 meta l4proto tcp dnat to \[fd00:180::1\]:80/,
    )
    expect(t).toContain('ip6 daddr fd00::41 ip6 saddr != fd00:10::/64 jump mark-for-masquerade')
  })

  it('a dual-stack state gives both tables in one script, ip first', () => {
    const s = emptyState('nftables')
    Object.assign(s.node, node)
    s.services = [
      svc({}),
      svc({
        family: 'IPv6',
        frontends: [
          {type: 'ClusterIP', ip: 'fd00::41', port: 80, sourceRanges: [], action: 'forward'},
        ],
      }),
    ]
    const t = renderNftables(s, {kubeProxyVersion: '1.35'}).text
    expect(t.indexOf('delete table ip kube-proxy')).toBeGreaterThan(-1)
    expect(t.indexOf('delete table ip6 kube-proxy')).toBeGreaterThan(
      t.indexOf('delete table ip kube-proxy'),
    )
  })

  it('ITP=Local routes the ClusterIP to local-B; without local endpoints the ClusterIP gets a drop element', () => {
    const s = emptyState('nftables')
    Object.assign(s.node, node)
    s.services = [
      svc({
        internalTrafficPolicy: 'Local',
        endpoints: [ep('10.180.0.1', 80, true), ep('10.180.0.2', 80, false)],
      }),
    ]
    const t = renderNftables(s, {kubeProxyVersion: '1.35', bare: true}).text
    expect(t).toContain(
      'add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto local-ULMVA6XW-ns1/svc1/tcp/p80 }',
    )
    expect(t).toContain(
      'add rule ip kube-proxy local-ULMVA6XW-ns1/svc1/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 }',
    )
    s.services = [svc({internalTrafficPolicy: 'Local', endpoints: [ep('10.180.0.2', 80, false)]})]
    expect(renderNftables(s, {kubeProxyVersion: '1.35', bare: true}).text).toContain(
      'add element ip kube-proxy no-endpoint-services { 172.30.0.41 . tcp . 80 comment "ns1/svc1:p80" : drop }',
    )
  })

  it('interface detectors use iifname (current localdetector.go); masqueradeAll drops the detector', () => {
    const s = emptyState('nftables')
    Object.assign(s.node, node, {localDetector: 'interface-prefix', localInterface: 'veth'})
    s.services = [svc({endpoints: [ep('10.180.0.1')]})]
    expect(renderNftables(s, {kubeProxyVersion: '1.35', bare: true}).text).toContain(
      'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 iifname != veth* jump mark-for-masquerade',
    )
    s.node.masqueradeAll = true
    expect(renderNftables(s, {kubeProxyVersion: '1.35', bare: true}).text).toContain(
      'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 jump mark-for-masquerade',
    )
  })

  it('ClientIP affinity with two endpoints: one affinity check per endpoint before numgen', () => {
    const s = emptyState('nftables')
    Object.assign(s.node, node)
    s.services = [
      svc({
        sessionAffinity: {type: 'ClientIP', timeoutSeconds: 60},
        endpoints: [ep('10.180.0.1'), ep('10.180.0.2')],
      }),
    ]
    const rules = renderNftables(s, {kubeProxyVersion: '1.35', bare: true})
      .text.split('\n')
      .filter((l) => l.startsWith('add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 '))
    expect(rules.map((l) => l.split(' ')[5])).toEqual(['ip', 'ip', 'ip', 'numgen'])
    expect(rules[1]).toBe(
      'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip saddr @affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 goto endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
    )
    expect(rules[3]).toMatch(
      /numgen random mod 2 vmap \{ 0 : goto endpoint-5OJB2KTY-\S+ , 1 : goto endpoint-[A-Z2-7]{8}-ns1\/svc1\/tcp\/p80__10\.180\.0\.2\/80 \}$/,
    )
    expect(renderNftables(s, {kubeProxyVersion: '1.35', bare: true}).text).toContain(
      'add set ip kube-proxy affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80 { type ipv4_addr ; flags dynamic,timeout ; timeout 60s ; }',
    )
  })

  it('the older layout (proxier.go @b0f823e): other filter base chains and priorities, dport in the masquerade rule', () => {
    const s = emptyState('nftables')
    Object.assign(s.node, node)
    s.services = [svc({endpoints: [ep('10.180.0.1')]})]
    const t = renderNftables(s, {
      kubeProxyVersion: '1.35',
      bare: true,
      nftablesLayout: 'older',
    }).text
    expect(t).toContain(
      'add chain ip kube-proxy filter-output-post-dnat { type filter hook output priority -90 ; }',
    )
    expect(t).toContain(
      'add chain ip kube-proxy filter-input { type filter hook input priority -110 ; }',
    )
    expect(t).toContain(
      'add rule ip kube-proxy filter-output-post-dnat ct state new jump cluster-ips-check',
    )
    expect(t).toContain('add rule ip kube-proxy filter-output ct state new jump firewall-check')
    expect(t).not.toContain('pre-dnat')
    expect(t).toContain(
      'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade',
    )
  })

  it('the firewall chain is written even without endpoints, unlike iptables', () => {
    const s = emptyState('nftables')
    Object.assign(s.node, node)
    s.services = [
      svc({
        frontends: [
          {type: 'ClusterIP', ip: '172.30.0.41', port: 80, sourceRanges: [], action: 'reject'},
          {
            type: 'LoadBalancer',
            ip: '5.6.7.8',
            port: 80,
            sourceRanges: ['203.0.113.0/25', '198.51.100.0/24'],
            action: 'reject',
          },
        ],
      }),
    ]
    const t = renderNftables(s, {
      kubeProxyVersion: '1.35',
      bare: true,
      nodeIPs: ['198.51.100.7'],
    }).text
    // The node IP is inside a source range, so the LB IP is allowed too.
    expect(t).toContain(
      'add rule ip kube-proxy firewall-ULMVA6XW-ns1/svc1/tcp/p80 ip saddr != { 203.0.113.0/25 , 198.51.100.0/24 , 5.6.7.8 } drop',
    )
    expect(t).toContain(
      'add element ip kube-proxy firewall-ips { 5.6.7.8 . tcp . 80 : goto firewall-ULMVA6XW-ns1/svc1/tcp/p80 }',
    )
    expect(t).toContain(
      'add element ip kube-proxy no-endpoint-services { 5.6.7.8 . tcp . 80 comment "ns1/svc1:p80" : goto reject-chain }',
    )
  })
})
