/**
 * Stage 2, rule shape by rule shape, on small dumps written here by hand from the rule
 * tables of docs/kube-proxy-layouts.md (§2.2-§2.7). Chain names are made with the §2.6 hashes (checked against that page's
 * vectors in hash-shares.test.ts), except where a test breaks them on purpose.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildIptablesState} from '../../../src/readers/iptables/build.js'
import {iptablesChainHash, iptablesEndpointHash} from '../../../src/kube-proxy/iptables-names.js'
import {parse} from '../../../src/readers/iptables/parse.js'
import {ROOT} from '../../helpers/run-cli.js'
import {runKpInProcess} from '../../helpers/run-in-process.js'
import {codes, readFixture, readText, service} from './helpers.js'

const H = (spn: string, proto = 'tcp') => iptablesChainHash(spn, proto)
const SEP = (spn: string, ep: string, proto = 'tcp') =>
  `KUBE-SEP-${iptablesEndpointHash(spn, proto, ep)}`

/** kube-proxy's restore input: a filter and a nat table with the fixed chains, plus the given lines. */
function dump(nat: string[], filter: string[] = [], extraChains: string[] = []): string {
  const declared = new Set<string>()
  for (const line of nat) {
    const m = /^-A (\S+)/.exec(line)
    if (m && m[1] !== 'KUBE-SERVICES' && m[1] !== 'KUBE-NODEPORTS') declared.add(m[1]!)
  }
  for (const c of extraChains) declared.add(c)
  return [
    '*filter',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-EXTERNAL-SERVICES - [0:0]',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-PROXY-FIREWALL - [0:0]',
    ...filter,
    'COMMIT',
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-POSTROUTING - [0:0]',
    ':KUBE-MARK-MASQ - [0:0]',
    ...[...declared]
      .filter((c) => !['KUBE-POSTROUTING', 'KUBE-MARK-MASQ'].includes(c))
      .map((c) => `:${c} - [0:0]`),
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    ...nat,
    'COMMIT',
    '',
  ].join('\n')
}

/** One ClusterIP service with endpoints, in the current layout. */
function clusterService(
  spn: string,
  ip: string,
  port: number,
  endpoints: string[],
  opts: {masq?: string | null; probabilities?: Array<string | null>} = {},
): string[] {
  const h = H(spn)
  const masq =
    opts.masq === undefined ? '! -s 10.0.0.0/8 ' : opts.masq === null ? '' : `${opts.masq} `
  const probs =
    opts.probabilities ??
    endpoints.map((_, i) =>
      i < endpoints.length - 1 ? (1 / (endpoints.length - i)).toFixed(10) : null,
    )
  return [
    `-A KUBE-SERVICES -m comment --comment "${spn} cluster IP" -m tcp -p tcp -d ${ip} --dport ${port} -j KUBE-SVC-${h}`,
    `-A KUBE-SVC-${h} -m comment --comment "${spn} cluster IP" -m tcp -p tcp -d ${ip} --dport ${port} ${masq}-j KUBE-MARK-MASQ`,
    ...endpoints.map(
      (ep, i) =>
        `-A KUBE-SVC-${h} -m comment --comment "${spn} -> ${ep}"${probs[i] ? ` -m statistic --mode random --probability ${probs[i]}` : ''} -j ${SEP(spn, ep)}`,
    ),
    ...endpoints.flatMap((ep) => [
      `-A ${SEP(spn, ep)} -m comment --comment ${spn} -s ${ep.split(':')[0]} -j KUBE-MARK-MASQ`,
      `-A ${SEP(spn, ep)} -m comment --comment ${spn} -m tcp -p tcp -j DNAT --to-destination ${ep}`,
    ]),
  ]
}

describe('frontends and policies', () => {
  it('1.24 transition: KUBE-EXT with the 1.24 comments, KUBE-SVL -> KUBE-MARK-DROP without local endpoints', async () => {
    const spn = 'ns1/lb:https'
    const h = H(spn)
    const state = await readText(
      dump(
        [
          ...clusterService(spn, '10.96.1.1', 443, ['10.244.2.2:8443']),
          `-A KUBE-SERVICES -m comment --comment "${spn} loadbalancer IP" -m tcp -p tcp -d 198.51.100.1 --dport 443 -j KUBE-EXT-${h}`,
          `-A KUBE-NODEPORTS -m comment --comment ${spn} -m tcp -p tcp --dport 30443 -j KUBE-EXT-${h}`,
          `-A KUBE-EXT-${h} -m comment --comment "Redirect pods trying to reach external loadbalancer VIP to clusterIP" -s 10.244.0.0/16 -j KUBE-SVC-${h}`,
          `-A KUBE-EXT-${h} -m comment --comment "masquerade LOCAL traffic for ${spn} LB IP" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
          `-A KUBE-EXT-${h} -m comment --comment "route LOCAL traffic for ${spn} LB IP to service chain" -m addrtype --src-type LOCAL -j KUBE-SVC-${h}`,
          `-A KUBE-EXT-${h} -j KUBE-SVL-${h}`,
          `-A KUBE-SVL-${h} -m comment --comment "${spn} has no local endpoints" -j KUBE-MARK-DROP`,
        ],
        [],
        ['KUBE-MARK-DROP'],
      ),
    )
    const sp = service(state, 'ns1/lb:https/tcp')
    expect(sp.externalTrafficPolicy).toBe('Local')
    expect(sp.frontends.map((f) => [f.type, f.action])).toEqual([
      ['ClusterIP', 'forward'],
      ['LoadBalancer', 'drop'],
      ['NodePort', 'drop'],
    ])
    expect(sp.endpoints.map((e) => [e.ip, e.local, e.share])).toEqual([['10.244.2.2', false, 1]])
    expect(codes(state, 'warning')).toEqual([])
  })

  it('an endpoint only in KUBE-SVL (a local terminating one) is still an endpoint, with no share of the cluster path', async () => {
    const spn = 'ns1/web:http'
    const h = H(spn)
    const local = '10.244.1.9:80'
    const state = await readText(
      dump([
        ...clusterService(spn, '10.96.1.2', 80, ['10.244.2.2:80']),
        `-A KUBE-NODEPORTS -m comment --comment ${spn} -m tcp -p tcp --dport 30080 -j KUBE-EXT-${h}`,
        `-A KUBE-EXT-${h} -m comment --comment "pod traffic for ${spn} external destinations" -s 10.0.0.0/8 -j KUBE-SVC-${h}`,
        `-A KUBE-EXT-${h} -j KUBE-SVL-${h}`,
        `-A KUBE-SVL-${h} -m comment --comment "${spn} -> ${local}" -j ${SEP(spn, local)}`,
        `-A ${SEP(spn, local)} -m comment --comment ${spn} -m tcp -p tcp -j DNAT --to-destination ${local}`,
      ]),
    )
    const sp = service(state, 'ns1/web:http/tcp')
    expect(sp.endpoints.map((e) => [e.ip, e.local, e.share])).toEqual([
      ['10.244.1.9', true, 0],
      ['10.244.2.2', false, 1],
    ])
  })

  it('the localhost copy of a NodePort sets node.localhostNodePorts instead of adding a frontend', async () => {
    const spn = 'ns1/np:p'
    const h = H(spn)
    const state = await readText(
      dump([
        ...clusterService(spn, '10.96.1.3', 80, ['10.244.2.3:80']),
        `-A KUBE-NODEPORTS -m comment --comment ${spn} -m tcp -p tcp -d 127.0.0.0/8 --dport 30001 -j KUBE-EXT-${h}`,
        `-A KUBE-NODEPORTS -m comment --comment ${spn} -m tcp -p tcp --dport 30001 -j KUBE-EXT-${h}`,
        `-A KUBE-EXT-${h} -m comment --comment "masquerade traffic for ${spn} external destinations" -j KUBE-MARK-MASQ`,
        `-A KUBE-EXT-${h} -j KUBE-SVC-${h}`,
      ]),
    )
    const sp = service(state, 'ns1/np:p/tcp')
    expect(sp.frontends.map((f) => [f.type, f.ip, f.port])).toEqual([
      ['ClusterIP', '10.96.1.3', 80],
      ['NodePort', null, 30001],
    ])
    expect(sp.externalTrafficPolicy).toBe('Cluster')
    expect(state.node.localhostNodePorts).toBe(true)
  })

  it('a rule without --dport keeps the port unknown; a rule without -p gets its protocol from the hash', async () => {
    const spn = 'ns1/odd:dns'
    const h = H(spn, 'udp')
    const state = await readText(
      dump([
        `-A KUBE-SERVICES -m comment --comment "${spn} cluster IP" -d 10.96.1.4 -j KUBE-SVC-${h}`,
        `-A KUBE-SVC-${h} -m comment --comment "${spn} -> 10.244.1.4:53" -j ${SEP(spn, '10.244.1.4:53', 'udp')}`,
        `-A ${SEP(spn, '10.244.1.4:53', 'udp')} -m comment --comment ${spn} -j DNAT --to-destination 10.244.1.4:53`,
      ]),
    )
    const sp = service(state, 'ns1/odd:dns/udp')
    expect(sp.frontends).toEqual([
      {type: 'ClusterIP', ip: '10.96.1.4', port: null, sourceRanges: [], action: 'forward'},
    ])
    expect(codes(state, 'warning')).toEqual([])
  })

  it('filter-only services: REJECT for no endpoints on an external address is "External" (the dump cannot tell)', async () => {
    const state = await readText(
      dump(
        [],
        [
          '-A KUBE-SERVICES -m comment --comment "ns1/none:p has no endpoints" -m tcp -p tcp -d 10.96.1.5 --dport 80 -j REJECT',
          '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/none:p has no endpoints" -m tcp -p tcp -d 192.0.2.5 --dport 80 -j REJECT',
          '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/none:p has no endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 30005 -j REJECT',
        ],
      ),
    )
    expect(
      service(state, 'ns1/none:p/tcp').frontends.map((f) => [f.type, f.ip, f.port, f.action]),
    ).toEqual([
      ['ClusterIP', '10.96.1.5', 80, 'reject'],
      ['External', '192.0.2.5', 80, 'reject'],
      ['NodePort', null, 30005, 'reject'],
    ])
  })
})

describe('node settings', () => {
  it('masquerade-all: the internal masquerade rule has no detector part', async () => {
    const state = await readText(
      dump(clusterService('ns1/a:p', '10.96.2.1', 80, ['10.244.1.1:80'], {masq: null})),
    )
    expect(state.node).toMatchObject({masqueradeAll: true, localDetector: null, podCIDRs: []})
  })
  it('the bridge-interface detector (`! -i cbr0`)', async () => {
    const state = await readText(
      dump(clusterService('ns1/a:p', '10.96.2.1', 80, ['10.244.1.1:80'], {masq: '! -i cbr0'})),
    )
    expect(state.node).toMatchObject({
      masqueradeAll: false,
      localDetector: 'interface',
      localInterface: 'cbr0',
    })
  })
  it('the no-op detector: internal chains without a masquerade rule', async () => {
    const lines = clusterService('ns1/a:p', '10.96.2.1', 80, ['10.244.1.1:80']).filter(
      (l) => !l.includes('cluster IP" -m tcp -p tcp -d 10.96.2.1 --dport 80 ! -s'),
    )
    const state = await readText(dump(lines))
    expect(state.node).toMatchObject({masqueradeAll: false, localDetector: 'none'})
  })
  it('NodePorts off localhost, and per-IP NodePort addresses', async () => {
    const last =
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain"'
    const off = await readText(
      dump([`${last} -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS`]),
    )
    expect([off.node.localhostNodePorts, off.node.nodePortAddresses]).toEqual([false, []])
    const perIp = await readText(
      dump([
        `${last} -d 192.168.0.5 -j KUBE-NODEPORTS`,
        `${last} -d 192.168.1.5 -j KUBE-NODEPORTS`,
      ]),
    )
    expect(perIp.node.nodePortAddresses).toEqual(['192.168.0.5', '192.168.1.5'])
  })
  it('conntrack INVALID drop: present, and absent from a KUBE-FORWARD that exists', async () => {
    const on = await readText(dump([], ['-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP']))
    expect(on.node.conntrackInvalidDrop).toBe(true)
    const off = await readText(
      dump(
        [],
        [
          '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
        ],
      ),
    )
    expect(off.node.conntrackInvalidDrop).toBe(false)
  })
})

describe('what is reported, never invented', () => {
  it("two service ports on one address: IPT_FRONTEND_CONFLICT points at the second one's first rule read (its KUBE-SERVICES rule), not its first line", async () => {
    const [a, b] = ['ns1/a:p', 'ns1/b:p']
    const text = dump(
      [
        ...clusterService(a, '10.96.4.1', 80, ['10.244.1.1:80']),
        ...clusterService(b, '10.96.4.1', 80, ['10.244.1.2:80']),
      ],
      // b's health check is in the filter table, which comes first in the dump.
      [
        `-A KUBE-NODEPORTS -m comment --comment "${b} health check node port" -m tcp -p tcp --dport 30999 -j ACCEPT`,
      ],
    )
    const state = await readText(text)
    const conflict = state.diagnostics.find((d) => d.code === 'IPT_FRONTEND_CONFLICT')
    expect(conflict?.message).toBe('10.96.4.1:80/TCP belongs to both ns1/a:p and ns1/b:p')
    const lines = text.split('\n')
    expect(lines[conflict!.source!.line - 1]).toContain(`"${b} cluster IP"`)
    expect(lines[conflict!.source!.line - 1]).toMatch(/^-A KUBE-SERVICES /)
  })
  it('a hand-edited chain name: IPT_HASH_MISMATCH for the service chain and the endpoint chain', async () => {
    const spn = 'ns1/a:p'
    const text = dump(clusterService(spn, '10.96.3.1', 80, ['10.244.1.1:80']))
      .replaceAll(H(spn), 'AAAAAAAAAAAAAAAA')
      .replaceAll(SEP(spn, '10.244.1.1:80'), 'KUBE-SEP-BBBBBBBBBBBBBBBB')
    const state = await readText(text)
    expect(codes(state, 'warning')).toEqual(['IPT_HASH_MISMATCH', 'IPT_HASH_MISMATCH'])
    expect(state.diagnostics[0]!.message).toContain(`expected ${H(spn)}`)
    expect(service(state, 'ns1/a:p/tcp').endpoints).toHaveLength(1) // still read: the names are only checked
  })
  it("IPT_HASH_MISMATCH names the chain jumped to when the dump has none of the service port's chains", async () => {
    // A hand-cut dump (or a partial sync's restore input): KUBE-SERVICES jumps to a KUBE-SVC chain the dump never declares.
    const state = await readText(
      dump([
        `-A KUBE-SERVICES -m comment --comment "ns1/a:p cluster IP" -m tcp -p tcp -d 10.96.3.1 --dport 80 -j KUBE-SVC-XXXX`,
      ]),
    )
    const mismatch = state.diagnostics.filter((d) => d.code === 'IPT_HASH_MISMATCH')
    expect(mismatch.map((d) => d.message)).toEqual([
      `KUBE-SVC-XXXX does not carry the hash of "ns1/a:p" tcp (expected ${H('ns1/a:p')}): hand-edited or corrupted dump?`,
    ])
    expect(service(state, 'ns1/a:p/tcp').frontends).toHaveLength(1)
  })
  it('IPT_HASH_MISMATCH lists every chain of the service port when it has several', async () => {
    const spn = 'ns1/a:p'
    const text = dump([
      ...clusterService(spn, '10.96.3.1', 80, ['10.244.1.1:80']),
      `-A KUBE-NODEPORTS -m comment --comment "${spn}" -m tcp -p tcp --dport 30080 -j KUBE-EXT-${H(spn)}`,
      `-A KUBE-EXT-${H(spn)} -m comment --comment "masquerade traffic for ${spn} external destinations" -j KUBE-MARK-MASQ`,
      `-A KUBE-EXT-${H(spn)} -j KUBE-SVC-${H(spn)}`,
    ]).replaceAll(H(spn), 'AAAAAAAAAAAAAAAA')
    const state = await readText(text)
    const mismatch = state.diagnostics.find((d) => d.code === 'IPT_HASH_MISMATCH')
    expect(mismatch?.message).toMatch(
      /^chains KUBE-(SVC|EXT)-AAAAAAAAAAAAAAAA, KUBE-(SVC|EXT)-AAAAAAAAAAAAAAAA do not carry the hash of "ns1\/a:p" tcp/,
    )
  })
  it('an endpoint chain without its DNAT, an empty one, and one nothing jumps to are reported, not endpoints', async () => {
    const spn = 'ns1/a:p'
    const h = H(spn)
    const [noDnat, empty, orphan] = [
      SEP(spn, '10.244.1.1:80'),
      SEP(spn, '10.244.1.2:80'),
      SEP(spn, '10.244.1.3:80'),
    ]
    const state = await readText(
      dump(
        [
          `-A KUBE-SERVICES -m comment --comment "${spn} cluster IP" -m tcp -p tcp -d 10.96.3.2 --dport 80 -j KUBE-SVC-${h}`,
          `-A KUBE-SVC-${h} -m comment --comment "${spn} -> 10.244.1.1:80" -m statistic --mode random --probability 0.5000000000 -j ${noDnat}`,
          `-A KUBE-SVC-${h} -m comment --comment "${spn} -> 10.244.1.2:80" -j ${empty}`,
          `-A ${noDnat} -m comment --comment ${spn} -s 10.244.1.1 -j KUBE-MARK-MASQ`,
          `-A ${orphan} -m comment --comment ${spn} -m tcp -p tcp -j DNAT --to-destination 10.244.1.3:80`,
        ],
        [],
        [empty],
      ),
    )
    expect(service(state, 'ns1/a:p/tcp').endpoints).toEqual([])
    expect(codes(state).sort()).toEqual(['IPT_EMPTY_CHAIN', 'IPT_ORPHAN_CHAIN', 'IPT_SEP_NO_DNAT'])
  })
  it('per-service chains that no frontend reaches are not a service', async () => {
    const spn = 'ns1/gone:p'
    const lines = clusterService(spn, '10.96.3.3', 80, ['10.244.1.1:80']).slice(1)
    const state = await readText(dump(lines))
    expect(state.services).toEqual([])
    expect(codes(state, 'warning')).toEqual(['IPT_ORPHAN_CHAIN'])
  })
  it('a cascade whose last rule is not unconditional: IPT_SHARES_SUM', async () => {
    const state = await readText(
      dump(
        clusterService('ns1/a:p', '10.96.3.4', 80, ['10.244.1.1:80', '10.244.1.2:80'], {
          probabilities: ['0.5000000000', '0.5000000000'],
        }),
      ),
    )
    expect(codes(state, 'warning')).toEqual(['IPT_SHARES_SUM'])
    expect(service(state, 'ns1/a:p/tcp').endpoints.map((e) => e.share)).toEqual([0.5, 0.25])
  })
  it('an unnamed service (no comments at all) is identified by its ClusterIP', async () => {
    const h = H('ns1/a:p')
    const state = await readText(
      dump([
        `-A KUBE-SERVICES -m tcp -p tcp -d 10.96.3.5 --dport 80 -j KUBE-SVC-${h}`,
        `-A KUBE-SVC-${h} -j KUBE-SEP-CCCCCCCCCCCCCCCC`,
        '-A KUBE-SEP-CCCCCCCCCCCCCCCC -m tcp -p tcp -j DNAT --to-destination 10.244.1.1:80',
      ]),
    )
    const sp = service(state, '10.96.3.5:80/TCP')
    expect([sp.namespace, sp.name, sp.portName]).toEqual([null, null, null])
    expect(sp.endpoints.map((e) => e.ip)).toEqual(['10.244.1.1'])
  })
})

describe('a dump cut off part-way', () => {
  it('keeps what is complete and says what was cut', async () => {
    const {readFileSync} = await import('node:fs')
    const full = readFileSync('fixtures/iptables/realsave-overall/input.rules', 'utf8')
    // Cut in the middle of the first rule after nat KUBE-SERVICES: iptables-save sorts chains by
    // name, so every KUBE-SVC- chain (after KUBE-SERVICES) is lost, KUBE-SEP- chains (before) are kept.
    const lastServicesRule =
      full.indexOf('\n', full.indexOf('NOTE: this must be the last rule in this chain')) + 1
    const state = await readText(full.slice(0, lastServicesRule + 40), 'cut.rules')
    // Cut off: errors, and the state says it is incomplete (issue 21 §1).
    expect(codes(state, 'error')).toEqual(['IPT_TRUNCATED', 'IPT_TRUNCATED'])
    expect(state.complete).toBe(false)
    expect(state.services.map((s) => s.name)).toEqual([
      'svc1',
      'svc2',
      'svc3',
      'svc4',
      'svc5',
      'svc6',
    ])
    expect(state.services.flatMap((s) => s.endpoints)).toEqual([]) // never invented
    expect(codes(state, 'warning').filter((c) => c === 'IPT_EMPTY_CHAIN')).toHaveLength(5)
    expect(codes(state, 'warning').filter((c) => c === 'IPT_ORPHAN_CHAIN')).toHaveLength(6)
  })
})

describe('foreign rules and other dumps', () => {
  it('lists a rule in KUBE-SERVICES that jumps to a foreign chain, a foreign jump into KUBE-*, and IPVS leftovers', async () => {
    const state = await readText(
      dump(
        [
          ...clusterService('ns1/a:p', '10.96.4.1', 80, ['10.244.1.1:80']),
          '-A KUBE-SERVICES -j MY-HOOK',
          '-A MY-HOOK -j RETURN',
          '-A OUTPUT -d 10.96.0.0/12 -j KUBE-SERVICES',
        ],
        [
          '-A FORWARD -j KUBE-SERVICES',
          '-A INPUT -j KUBE-SERVICES',
          '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        ],
        ['MY-HOOK', 'KUBE-LOOP-BACK'],
      ),
    )
    // kube-proxy's own jumps from built-in chains carry its comment (docs/kube-proxy-layouts.md §2.2); these do not.
    expect(state.foreign.map((f) => [f.kind, f.name])).toEqual([
      ['iptables-rule', 'filter/FORWARD -j KUBE-SERVICES'],
      ['iptables-rule', 'filter/INPUT -j KUBE-SERVICES'],
      ['iptables-rule', 'nat/KUBE-SERVICES -j MY-HOOK'],
      ['iptables-rule', 'nat/OUTPUT -j KUBE-SERVICES'],
      ['leftover', 'nat/KUBE-LOOP-BACK'],
    ])
    expect(state.services).toHaveLength(1)
  })
  it('a Docker-only dump: IPT_NO_KUBE_PROXY at line 1', async () => {
    const text =
      '# Generated by iptables-save v1.8.9 (nf_tables) on x\n*nat\n:PREROUTING ACCEPT [0:0]\n:DOCKER - [0:0]\n-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER\n-A DOCKER -i docker0 -j RETURN\nCOMMIT\n'
    const state = await readText(text, 'docker.rules')
    expect(state.diagnostics.map((d) => [d.severity, d.code, d.source])).toEqual([
      ['error', 'IPT_NO_KUBE_PROXY', {path: 'docker.rules', line: 1}],
    ])
    expect(state.services).toEqual([])
  })
  it("a dump with only kubelet's KUBE-* chains (a node in nftables mode) has no kube-proxy rules", async () => {
    const text =
      '*filter\n:INPUT ACCEPT [0:0]\n:KUBE-FIREWALL - [0:0]\n:KUBE-KUBELET-CANARY - [0:0]\n-A INPUT -j KUBE-FIREWALL\nCOMMIT\n'
    const state = await readText(text)
    expect(codes(state)).toEqual(['IPT_NO_KUBE_PROXY'])
    expect(state.diagnostics[0]!.message).toContain("kubelet's")
  })
  it('an IPVS-mode dump read as iptables mode (--mode iptables) says to read it with ipvsadm and ipset', async () => {
    // Called directly: without --mode, read-state sends such a dump to the IPVS reader.
    const text =
      '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-LOOP-BACK - [0:0]\n-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\nCOMMIT\n'
    const state = buildIptablesState([parse({path: 't', text})], {mode: 'iptables'})
    expect(codes(state)).toEqual(['IPT_IPVS_MODE'])
    expect(state.diagnostics[0]!.message).toContain('ipvsadm -Sn')
  })
  it('an empty-of-services kube-proxy dump is fine: zero services, no problem', async () => {
    const state = await readText(dump([]))
    expect(state.services).toEqual([])
    expect(codes(state)).toEqual([])
  })
  it('a CRLF copy of a dump gives the same state', async () => {
    const {readFileSync} = await import('node:fs')
    const lf = readFileSync('fixtures/iptables/realsave-overall/input.rules', 'utf8')
    const [a, b] = await Promise.all([readText(lf), readText(lf.replaceAll('\n', '\r\n'))])
    expect(b).toEqual(a)
    expect(b.services).toHaveLength(6)
  })
  it('an IPv4 and an IPv6 dump of one node give both families', async () => {
    const {readFileSync} = await import('node:fs')
    const {readState} = await import('../../../src/readers/read-state.js')
    const files = [
      'fixtures/iptables/upstream-overall/input.rules',
      'fixtures/iptables/realsave-handmade-ipv6/input.rules',
    ]
    const state = await readState({
      sources: files.map((path) => ({path, text: readFileSync(path, 'utf8')})),
    })
    expect(state.services.filter((s) => s.family === 'IPv4')).toHaveLength(6)
    expect(state.services.filter((s) => s.family === 'IPv6')).toHaveLength(4)
    expect(state.node.podCIDRs).toEqual(['10.0.0.0/8', 'fd00:10:244::/48'])
    expect(codes(state, 'warning')).toEqual([])
  })
})

describe('through the CLI', () => {
  it('a dump without kube-proxy rules exits 3 with path:line', async () => {
    const r = await runKpInProcess(['list', '-f', '-'], {
      input: '*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n',
    })
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('-:1: no kube-proxy rules in this dump')
  })
})

describe('the rules a service port lists', () => {
  // The builder keeps a service port's rules in a plain list and relies on visiting each rule
  // once per service port; every fixture, odd ones included, must bear that out.
  it.each(
    readdirSync(join(ROOT, 'fixtures/iptables'), {withFileTypes: true})
      .filter((d) => d.isDirectory())
      .map((d) => d.name),
  )('%s: no rule is listed twice', async (dir) => {
    const state = await readFixture(dir)
    for (const sp of state.services) {
      const lines = sp.rules.map((r) => `${r.path}:${r.line}`)
      expect(new Set(lines).size, `${sp.namespace}/${sp.name}:${sp.portName}`).toBe(lines.length)
    }
  })
  it('a rule shared by two service ports (a hand-edited SEP chain) is listed once in each', async () => {
    const a = 'ns/a:p'
    const b = 'ns/b:p'
    const sep = SEP(a, '10.0.0.1:80')
    const state = await readText(
      dump([
        `-A KUBE-SERVICES -m comment --comment "${a} cluster IP" -m tcp -p tcp -d 172.30.0.1 --dport 80 -j KUBE-SVC-${H(a)}`,
        `-A KUBE-SERVICES -m comment --comment "${b} cluster IP" -m tcp -p tcp -d 172.30.0.2 --dport 80 -j KUBE-SVC-${H(b)}`,
        `-A KUBE-SVC-${H(a)} -m comment --comment "${a} -> 10.0.0.1:80" -j ${sep}`,
        `-A KUBE-SVC-${H(b)} -m comment --comment "${b} -> 10.0.0.1:80" -j ${sep}`,
        `-A KUBE-SVC-${H(b)} -m comment --comment "${b} -> 10.0.0.1:80" -j ${sep}`,
        `-A ${sep} -m comment --comment ${a} -m tcp -p tcp -j DNAT --to-destination 10.0.0.1:80`,
      ]),
    )
    for (const name of [`${a}/tcp`, `${b}/tcp`]) {
      const lines = service(state, name).rules.map((r) => r.line)
      expect(new Set(lines).size, name).toBe(lines.length)
    }
  })
})
