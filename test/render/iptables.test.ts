/**
 * The iptables renderer against kube-proxy's own expectations (fixtures/render/upstream,
 * copied from the corpus), after the upstream tests' ordering normalisation (normalise.ts).
 * Inputs are states built by hand from the matching expect.json (corpus-states.ts).
 */
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {renderIptables} from '../../src/render/iptables/render.js'
import {cascadeProbability} from '../../src/kube-proxy/shares.js'
import {emptyState} from '../../src/core/state.js'
import type {ProxyState, ServicePort} from '../../src/model/types.js'
import type {RenderOptions} from '../../src/render/types.js'
import {readState} from '../../src/readers/read-state.js'
import {readDump, stateFromExpect, UPSTREAM, type CorpusExtras} from './corpus-states.js'
import {sortIptablesRules} from './normalise.js'
import {endpoint, servicePort} from '../helpers/builders.js'

/** Node settings of the upstream iptables harness: random-fully off, localhost NodePorts on, every address for NodePorts. */
const IPT_NODE = {randomFully: false, localhostNodePorts: true, nodePortAddresses: []}

interface Case {
  name: string
  extras: CorpusExtras
  opts: RenderOptions
}

// Source ranges and the health check NodePort are listed in fixtures/PROVENANCE.md (outside the JSON).
const cases: Case[] = [
  {
    name: 'iptables-overall',
    extras: {
      sourceRanges: {'ns5/svc5': ['203.0.113.0/25']},
      healthCheckNodePorts: {'ns2/svc2': 30000},
      node: IPT_NODE,
    },
    opts: {nfacct: true},
  },
  // The ≈1.28 version of the same test: no nfacct counters (so no localhost NodePort counting rules).
  {
    name: 'iptables-multipleservices-older',
    extras: {
      sourceRanges: {'ns5/svc5': ['203.0.113.0/25']},
      healthCheckNodePorts: {'ns2/svc2': 30000},
      node: IPT_NODE,
    },
    opts: {nfacct: false},
  },
  {
    name: 'iptables-badips',
    extras: {sourceRanges: {'ns1/svc1': ['203.0.113.0/25']}, node: IPT_NODE},
    opts: {nfacct: true},
  },
  {name: 'iptables-syncrepeated-initial', extras: {node: IPT_NODE}, opts: {nfacct: true}},
  {name: 'iptables-syncrepeated-fullresync', extras: {node: IPT_NODE}, opts: {nfacct: true}},
]

describe('renderIptables reproduces kube-proxy’s expected restore input', () => {
  for (const c of cases) {
    it(c.name, () => {
      const state = stateFromExpect(c.name, 'iptables', c.extras)
      const result = renderIptables(state, {...c.opts, bare: true})
      const expected = sortIptablesRules(readDump(c.name), {dropDeletedChains: true})
      expect(sortIptablesRules(result.text).text).toBe(expected.text)
      // The harness gives every setting, so nothing was assumed.
      expect(
        result.findings.filter(
          (f) => f.id.startsWith('RENDER_DEFAULT_') || f.id.startsWith('RENDER_MISSING_'),
        ),
      ).toEqual([])
    })
  }

  it('leaves out only the chains the full resync deletes (history, not state)', () => {
    const {droppedChains} = sortIptablesRules(readDump('iptables-syncrepeated-fullresync'), {
      dropDeletedChains: true,
    })
    // ns4/svc4 was deleted before the resync (fixtures/PROVENANCE.md); its chains are the -X lines.
    expect(droppedChains).toEqual([
      'nat/KUBE-SEP-AYCN5HPXMIRJNJXU',
      'nat/KUBE-SVC-4SW47YFZTEDKD3PK',
    ])
  })

  it('the header comment block is accepted by the normaliser and the bare form has none', () => {
    const state = stateFromExpect('iptables-overall', 'iptables', cases[0]!.extras)
    const withHeader = renderIptables(state, {nfacct: true})
    expect(withHeader.text.startsWith('# kube-proxy iptables mode, IPv4')).toBe(true)
    expect(sortIptablesRules(withHeader.text).text).toBe(
      sortIptablesRules(renderIptables(state, {nfacct: true, bare: true}).text).text,
    )
    expect(renderIptables(state, {nfacct: true, bare: true}).text.includes('#')).toBe(false)
  })
})

describe('iptables dump -> iptables reader -> renderIptables gives the dump back', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const text = readDump(c.name)
      const state = await readState({sources: [{path: join(UPSTREAM, `${c.name}.dump`), text}]})
      expect(state.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
      // Every node setting comes from the dump itself; only the nfacct counters are a kernel
      // capability the model does not carry.
      const result = renderIptables(state, {nfacct: c.opts.nfacct, bare: true})
      expect(sortIptablesRules(result.text).text).toBe(
        sortIptablesRules(text, {dropDeletedChains: true}).text,
      )
      expect(
        result.findings.filter(
          (f) => f.id.startsWith('RENDER_DEFAULT_') || f.id.startsWith('RENDER_MISSING_'),
        ),
      ).toEqual([])
    })
  }
})

describe('nftables-overall, read by the nftables reader, rendered into iptables', () => {
  it('is iptables-overall except where nftables cannot tell (fixtures/PROVENANCE.md "nftables caveat"), each said', async () => {
    const path = join(UPSTREAM, 'nftables-overall.dump')
    const state = await readState({sources: [{path, text: readDump('nftables-overall')}]})
    // The iptables harness's node settings, which an nftables dump does not show.
    const result = renderIptables(state, {
      bare: true,
      nfacct: true,
      nodePortAddresses: [],
      randomFully: false,
      localhostNodePorts: true,
      conntrackInvalidDrop: true,
    })
    const got = sortIptablesRules(result.text).text.split('\n')
    const want = sortIptablesRules(readDump('iptables-overall')).text.split('\n')
    // nftables writes ns2/svc2's LB IP 1.2.3.4 like an externalIP (it has no source ranges), and
    // has no health check NodePort rule at all.
    expect(got.filter((l) => !want.includes(l))).toEqual([
      '-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 external IP" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j KUBE-EXT-GNZBNJ2PO5MGZ6GT',
    ])
    expect(want.filter((l) => !got.includes(l))).toEqual([
      '-A KUBE-NODEPORTS -m comment --comment "ns2/svc2:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT',
      '-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 loadbalancer IP" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j KUBE-EXT-GNZBNJ2PO5MGZ6GT',
    ])
    const guessed = result.findings.filter((f) => f.id === 'RENDER_EXTERNAL_KIND_GUESSED')
    expect(guessed.flatMap((f) => f.addresses).sort()).toEqual([
      '1.2.3.4',
      '192.168.99.22',
      '192.168.99.33',
    ])
  })
})

const svc = servicePort

function stateWith(services: ServicePort[], node: Partial<ProxyState['node']> = {}): ProxyState {
  const s = emptyState('iptables')
  Object.assign(
    s.node,
    {
      podCIDRs: ['10.0.0.0/8'],
      localDetector: 'cidr',
      masqueradeMark: '0x4000',
      masqueradeAll: false,
      randomFully: true,
      localhostNodePorts: true,
      nodePortAddresses: [],
      conntrackInvalidDrop: true,
    },
    node,
  )
  s.services = services
  return s
}

const ep = (ip: string, port = 80, local: boolean | null = null) => endpoint(ip, port, {local})

describe('renderIptables, shapes the corpus has no dump for (docs/kube-proxy-layouts.md §2.4)', () => {
  it('prints the cascade probabilities with %0.10f: 1/3, 1/2, then unconditional', () => {
    expect([4, 3, 2].map(cascadeProbability)).toEqual([
      '0.2500000000',
      '0.3333333333',
      '0.5000000000',
    ])
    const text = renderIptables(
      stateWith([svc({endpoints: [ep('10.180.0.1'), ep('10.180.0.2'), ep('10.180.0.3')]})]),
      {bare: true},
    ).text
    const svcRules = text
      .split('\n')
      .filter((l) => l.startsWith('-A KUBE-SVC-XPGD46QRK7WJZT7O') && l.includes(' -> '))
    expect(svcRules).toEqual([
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-SXIVWICOYRO3J4NJ',
      expect.stringMatching(
        /^-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1\/svc1:p80 -> 10\.180\.0\.2:80" -m statistic --mode random --probability 0\.5000000000 -j KUBE-SEP-[A-Z2-7]{16}$/,
      ),
      expect.stringMatching(
        /^-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1\/svc1:p80 -> 10\.180\.0\.3:80" -j KUBE-SEP-[A-Z2-7]{16}$/,
      ),
    ])
  })

  it('orders endpoints by endpoint string like kube-proxy (10.0.0.10:80 before 10.0.0.1:80)', () => {
    const text = renderIptables(stateWith([svc({endpoints: [ep('10.0.0.1'), ep('10.0.0.10')]})]), {
      bare: true,
    }).text
    const order = text
      .split('\n')
      .filter((l) => l.includes(' -> '))
      .map((l) => /-> ([^"]+)"/.exec(l)![1])
    expect(order).toEqual(['10.0.0.10:80', '10.0.0.1:80'])
  })

  it('ITP=Local: ClusterIP jumps to KUBE-SVL with only the local endpoints; none local -> filter DROP', () => {
    const local = renderIptables(
      stateWith([
        svc({
          internalTrafficPolicy: 'Local',
          endpoints: [ep('10.180.0.1', 80, true), ep('10.180.0.2', 80, false)],
        }),
      ]),
      {bare: true},
    ).text
    expect(local).toContain(
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVL-XPGD46QRK7WJZT7O',
    )
    expect(local).toContain(
      '-A KUBE-SVL-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
    )
    expect(local).toContain(
      '-A KUBE-SVL-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ',
    )
    expect(local).not.toContain('10.180.0.2')
    expect(local).not.toContain(':KUBE-SVC-')
    const none = renderIptables(
      stateWith([svc({internalTrafficPolicy: 'Local', endpoints: [ep('10.180.0.2', 80, false)]})]),
      {bare: true},
    ).text
    expect(none).toContain(
      '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 has no local endpoints" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j DROP',
    )
  })

  it('ITP=Local and ETP=Local on a NodePort: the cluster chain still exists for the short-circuits (serviceport.go)', () => {
    const s = stateWith([
      svc({
        internalTrafficPolicy: 'Local',
        externalTrafficPolicy: 'Local',
        frontends: [
          {type: 'ClusterIP', ip: '172.30.0.41', port: 80, sourceRanges: [], action: 'forward'},
          {type: 'NodePort', ip: null, port: 30080, sourceRanges: [], action: 'forward'},
        ],
        endpoints: [ep('10.180.0.1', 80, true), ep('10.180.0.2', 80, false)],
      }),
    ])
    const text = renderIptables(s, {bare: true}).text
    expect(text).toContain(':KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]')
    expect(text).toContain(':KUBE-SVL-XPGD46QRK7WJZT7O - [0:0]')
    expect(text).toContain(
      '"route LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-SVC-XPGD46QRK7WJZT7O',
    )
    expect(text).toContain('-A KUBE-EXT-XPGD46QRK7WJZT7O -j KUBE-SVL-XPGD46QRK7WJZT7O')
    // Every jump target is declared.
    const declared = new Set(
      text
        .split('\n')
        .filter((l) => l.startsWith(':'))
        .map((l) => l.slice(1).split(' ')[0]),
    )
    const targets = text.split('\n').flatMap((l) => /-j (KUBE-\S+)/.exec(l)?.[1] ?? [])
    expect(targets.filter((t) => !declared.has(t))).toEqual([])
  })

  it('IPv6: ip6tables file, bracketed DNAT, ::1 excluded from NodePorts, no KUBE-FIREWALL', () => {
    const s = stateWith(
      [
        svc({
          family: 'IPv6',
          frontends: [
            {type: 'ClusterIP', ip: 'fd00::41', port: 80, sourceRanges: [], action: 'forward'},
          ],
          endpoints: [ep('fd00:180::1')],
        }),
      ],
      {podCIDRs: ['10.0.0.0/8', 'fd00:10::/64']},
    )
    const r = renderIptables(s, {bare: true})
    expect(r.files.map((f) => [f.name, f.family])).toEqual([['iptables-restore.v6.txt', 'IPv6']])
    expect(r.text).toContain('-m tcp -p tcp -j DNAT --to-destination [fd00:180::1]:80')
    expect(r.text).toContain('--dport 80 ! -s fd00:10::/64 -j KUBE-MARK-MASQ')
    expect(r.text).toContain('-m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS')
    expect(r.text).not.toContain('KUBE-FIREWALL')
  })

  it('a dual-stack state gives one file per family, IPv4 first', () => {
    const s = stateWith([
      svc({}),
      svc({
        family: 'IPv6',
        frontends: [
          {type: 'ClusterIP', ip: 'fd00::41', port: 80, sourceRanges: [], action: 'forward'},
        ],
      }),
    ])
    const r = renderIptables(s)
    expect(r.files.map((f) => f.family)).toEqual(['IPv4', 'IPv6'])
    expect(r.text).toBe(r.files[0]!.text)
    expect(r.files[1]!.loadWith).toMatch(/^ip6tables-restore --noflush/)
  })

  it('says what it assumed when the state does not show node settings', () => {
    const s = emptyState('iptables')
    s.services = [svc({endpoints: [ep('10.180.0.1')]})]
    const r = renderIptables(s)
    const ids = r.findings.map((f) => f.id)
    expect(ids).toContain('RENDER_MISSING_LOCAL_DETECTOR')
    expect(ids).toContain('RENDER_DEFAULT_MASQUERADE_MARK')
    expect(ids).toContain('RENDER_DEFAULT_NODEPORT_ADDRESSES')
    // Without a detector kube-proxy writes no masquerade rule in the service chain.
    expect(r.text).not.toContain('-j KUBE-MARK-MASQ\n-A KUBE-SVC')
    expect(
      r.text
        .split('\n')
        .filter((l) => l.startsWith('-A KUBE-SVC-') && l.includes('KUBE-MARK-MASQ')),
    ).toEqual([])
  })

  it('a service without names gets a stable made-up name and a finding', () => {
    const s = stateWith([
      svc({namespace: null, name: null, portName: null, endpoints: [ep('10.180.0.1')]}),
    ])
    const a = renderIptables(s)
    const b = renderIptables(s)
    expect(a.text).toBe(b.text)
    expect(a.text).toContain('--comment "kp-unnamed/172.30.0.41-80-tcp cluster IP"')
    expect(a.findings.map((f) => f.id)).toContain('RENDER_SYNTHETIC_NAME')
  })

  it('an IPVS sh scheduler and weights are reported, draining real servers left out', () => {
    const s = stateWith([
      svc({
        scheduler: 'sh',
        endpoints: [
          {...ep('10.180.0.1'), weight: 2},
          {...ep('10.180.0.2'), weight: 0, state: 'draining'},
        ],
      }),
    ])
    const r = renderIptables(s)
    expect(r.findings.map((f) => f.id)).toEqual(
      expect.arrayContaining([
        'RENDER_SCHEDULER_NOT_EXPRESSIBLE',
        'RENDER_WEIGHTS_NOT_EXPRESSIBLE',
        'RENDER_DRAINING_ENDPOINTS_LEFT_OUT',
      ]),
    )
    expect(r.text).not.toContain('10.180.0.2')
  })

  it('ClientIP affinity with two endpoints: every --rcheck rule first, then the cascade (docs/kube-proxy-layouts.md §2.4)', () => {
    const text = renderIptables(
      stateWith([
        svc({
          sessionAffinity: {type: 'ClientIP', timeoutSeconds: 60},
          endpoints: [ep('10.180.0.1'), ep('10.180.0.2')],
        }),
      ]),
      {bare: true},
    ).text
    const rules = text
      .split('\n')
      .filter((l) => l.startsWith('-A KUBE-SVC-XPGD46QRK7WJZT7O') && l.includes(' -> '))
    expect(
      rules.map((l) =>
        l.includes('--rcheck')
          ? 'rcheck'
          : l.includes('--probability 0.5000000000')
            ? 'p=0.5'
            : 'last',
      ),
    ).toEqual(['rcheck', 'rcheck', 'p=0.5', 'last'])
    expect(rules[0]).toBe(
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m recent --name KUBE-SEP-SXIVWICOYRO3J4NJ --rcheck --seconds 60 --reap -j KUBE-SEP-SXIVWICOYRO3J4NJ',
    )
    expect(text).toContain(
      '-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-SXIVWICOYRO3J4NJ --set -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80',
    )
  })

  it('interface detectors and masqueradeAll change only the detector matches (localdetector.go)', () => {
    const withEndpoint = [
      svc({
        externalTrafficPolicy: 'Local',
        frontends: [
          {type: 'ClusterIP', ip: '172.30.0.41', port: 80, sourceRanges: [], action: 'forward'},
          {type: 'NodePort', ip: null, port: 30080, sourceRanges: [], action: 'forward'},
        ],
        endpoints: [ep('10.180.0.1', 80, true)],
      }),
    ]
    const bridge = renderIptables(
      stateWith(withEndpoint, {localDetector: 'interface', localInterface: 'cbr0'}),
      {bare: true},
    ).text
    expect(bridge).toContain('--dport 80 ! -i cbr0 -j KUBE-MARK-MASQ')
    expect(bridge).toContain(
      '"pod traffic for ns1/svc1:p80 external destinations" -i cbr0 -j KUBE-SVC-XPGD46QRK7WJZT7O',
    )
    const prefix = renderIptables(
      stateWith(withEndpoint, {localDetector: 'interface-prefix', localInterface: 'veth'}),
      {bare: true},
    ).text
    expect(prefix).toContain('--dport 80 ! -i veth+ -j KUBE-MARK-MASQ')
    const all = renderIptables(stateWith(withEndpoint, {masqueradeAll: true}), {bare: true}).text
    expect(all).toContain(
      '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-MARK-MASQ',
    )
  })

  it('nodePortAddresses given as IPs: one last rule per IP instead of --dst-type LOCAL', () => {
    const r = renderIptables(
      stateWith([svc({})], {nodePortAddresses: ['192.168.0.2', '127.0.0.1']}),
      {bare: true},
    )
    const last = r.text.split('\n').filter((l) => l.includes('must be the last rule'))
    expect(last).toEqual([
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.0.2 -j KUBE-NODEPORTS',
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 127.0.0.1 -j KUBE-NODEPORTS',
    ])
  })
})

describe('renderers never write what a crafted state smuggles in', () => {
  it('a name with a quote and a newline is replaced, with an error finding', () => {
    const s = stateWith([
      svc({namespace: 'ns1" -j ACCEPT\n-A INPUT', endpoints: [ep('10.180.0.1')]}),
    ])
    const r = renderIptables(s)
    expect(r.text).not.toContain('-A INPUT')
    expect(r.text).not.toContain('ns1"')
    expect(r.findings.filter((f) => f.id === 'RENDER_UNSAFE_NAME').map((f) => f.severity)).toEqual([
      'error',
    ])
  })

  it('addresses and ports that are not what the family needs are left out and said', () => {
    const s = stateWith([
      svc({
        frontends: [
          {type: 'ClusterIP', ip: '172.30.0.41', port: 80, sourceRanges: [], action: 'forward'},
          {
            type: 'ExternalIP',
            ip: '1.2.3.4 -j ACCEPT',
            port: 80,
            sourceRanges: [],
            action: 'forward',
          },
          {type: 'ExternalIP', ip: '5.6.7.8', port: 70000, sourceRanges: [], action: 'forward'},
        ],
        endpoints: [ep('10.180.0.1'), ep('fd00::1')],
      }),
    ])
    const r = renderIptables(s, {bare: true})
    expect(r.text).not.toMatch(/1\.2\.3\.4|5\.6\.7\.8|fd00::1|70000/)
    expect(r.findings.map((f) => f.id)).toEqual(
      expect.arrayContaining(['RENDER_BAD_ADDRESS', 'RENDER_BAD_PORT']),
    )
  })

  it('every finding is complete: stable id, severity, title, message, action', () => {
    const s = emptyState('iptables')
    s.services = [
      svc({namespace: null, name: null, scheduler: 'sh', endpoints: [ep('10.180.0.1')]}),
    ]
    const r = renderIptables(s)
    expect(r.findings.length).toBeGreaterThan(3)
    for (const f of r.findings) {
      expect(f.id).toMatch(/^RENDER_[A-Z0-9_]+$/)
      expect(['error', 'warning', 'info']).toContain(f.severity)
      expect(f.title.length).toBeGreaterThan(10)
      expect(f.message.length).toBeGreaterThan(f.title.length / 2)
      expect(f.action.length).toBeGreaterThan(0)
      expect(
        Array.isArray(f.services) && Array.isArray(f.addresses) && Array.isArray(f.evidence),
      ).toBe(true)
    }
  })
})
