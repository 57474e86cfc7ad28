/**
 * The pure parts of `kp verify`: the spread test, the rules kp adds or skips before loading an
 * iptables dump, the nft command order, conntrack lines, and the probe plan of a fixture.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {nftObjectsFirst, withHooks} from '../../../src/analyze/verify/hooks.js'
import {planVerify, sctpReason} from '../../../src/analyze/verify/plan.js'
import {chiSquareP} from '../../../src/analyze/verify/stats.js'
import {compareGroup} from '../../../src/analyze/verify/compare.js'
import {parseConntrack} from '../../../src/live/verify/sandbox.js'
import {cidrContains} from '../../../src/core/address.js'
import {observe} from '../../../src/live/verify/run.js'
import {readFiles} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'
import type {ProbeGroup} from '../../../src/analyze/verify/types.js'

describe('chiSquareP', () => {
  it('matches the chi-square tail at known points', () => {
    // df 1: P(X > 3.841) = 0.05; df 2: P(X > 13.816) = 0.001.
    expect(chiSquareP([60, 40], [0.5, 0.5])).toBeCloseTo(0.0455, 3)
    expect(chiSquareP([50, 50], [0.5, 0.5])).toBe(1)
    const p = chiSquareP([200, 100], [0.5, 0.5])
    expect(p).toBeLessThan(1e-4)
    expect(chiSquareP([1000, 500], [2, 1])).toBe(1)
  })
})

describe('withHooks', () => {
  it("adds kube-proxy's jumps the dump lacks, and keeps the ones it has", () => {
    const dump = [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-POSTROUTING - [0:0]',
      '-A PREROUTING -j KUBE-SERVICES',
      'COMMIT',
      '',
    ].join('\n')
    const {text, added} = withHooks(dump)
    expect(added).toEqual([
      'added: -t nat -A OUTPUT -j KUBE-SERVICES',
      'added: -t nat -A POSTROUTING -j KUBE-POSTROUTING',
    ])
    expect(text.split('\n').filter((l) => l === '-A PREROUTING -j KUBE-SERVICES')).toHaveLength(1)
  })

  it("skips other programs' jumps and opens DROP policies, saying so", () => {
    const dump = [
      '*filter',
      ':FORWARD DROP [0:0]',
      ':cali-FORWARD - [0:0]',
      '[0:0] -A FORWARD -j cali-FORWARD',
      'COMMIT',
      '',
    ].join('\n')
    const {text, added} = withHooks(dump)
    expect(text).not.toMatch(/-j cali-FORWARD/)
    expect(text).toMatch(/^:FORWARD ACCEPT/m)
    expect(added).toEqual([
      'policy: -t filter -P FORWARD ACCEPT (was DROP)',
      'skipped: -t filter -A FORWARD -j cali-FORWARD',
    ])
  })

  it("adds the kubelet's KUBE-MARK-DROP when the dump jumps to it without declaring it", () => {
    const dump = [
      '*nat',
      ':KUBE-FW-X - [0:0]',
      '-A KUBE-FW-X -j KUBE-MARK-DROP',
      'COMMIT',
      '',
    ].join('\n')
    const {text, added} = withHooks(dump)
    expect(text).toMatch(/^:KUBE-MARK-DROP - \[0:0\]$/m)
    expect(added).toContain('added: -t filter -A FORWARD -m mark --mark 0x8000/0x8000 -j DROP')
  })
})

describe('nftObjectsFirst', () => {
  it('puts tables, then chains, sets and maps before rules and elements', () => {
    const text = [
      'add table ip t',
      'delete table ip t',
      'add table ip t',
      'add rule ip t a goto b',
      'add chain ip t a',
      'add chain ip t b',
    ].join('\n')
    expect(nftObjectsFirst(text).split('\n')).toEqual([
      'add table ip t',
      'delete table ip t',
      'add table ip t',
      'add chain ip t a',
      'add chain ip t b',
      'add rule ip t a goto b',
    ])
    expect(nftObjectsFirst('table ip t {\n}\n')).toBe('table ip t {\n}\n')
  })
})

describe('parseConntrack', () => {
  it('reads the original and reply tuples of /proc/net/nf_conntrack', () => {
    const line =
      'ipv4     2 tcp      6 119 SYN_SENT src=198.18.0.12 dst=172.30.0.41 sport=10000 dport=80 [UNREPLIED] src=10.180.0.1 dst=169.254.199.1 sport=80 dport=10000 mark=0 zone=0 use=2'
    expect(parseConntrack(`${line}\n`)).toEqual([
      {
        protocol: 'tcp',
        src: '198.18.0.12',
        sport: 10000,
        dst: '172.30.0.41',
        dport: 80,
        replySrc: '10.180.0.1',
        replySport: 80,
        replyDst: '169.254.199.1',
      },
    ])
  })
})

describe('parseConntrack (IPv6)', () => {
  it('reads IPv6 tuples, which the kernel prints uncompressed, in their canonical spelling', () => {
    // As this kernel printed it for an ip6tables DNAT in a namespace.
    const line =
      'ipv6     10 tcp      6 119 SYN_SENT src=2001:0002:0000:0000:0000:0000:0000:000a dst=2001:0002:0000:0000:0000:0000:0000:000b sport=50778 dport=80 [UNREPLIED] src=2001:0db8:0000:0000:0000:0000:0000:0005 dst=2001:0002:0000:0000:0000:0000:0000:000a sport=8080 dport=50778 mark=0 zone=0 use=3'
    expect(parseConntrack(`${line}\n`)).toEqual([
      {
        protocol: 'tcp',
        src: '2001:2::a',
        sport: 50778,
        dst: '2001:2::b',
        dport: 80,
        replySrc: '2001:db8::5',
        replySport: 8080,
        replyDst: '2001:2::a',
      },
    ])
  })
})

describe('compareGroup', () => {
  const group: ProbeGroup = {
    service: 'ns/svc:p80/tcp',
    frontend: '172.30.0.44:80',
    client: 'external',
    namespace: 'ext',
    protocol: 'TCP',
    source: '198.18.0.12',
    destination: '172.30.0.44',
    port: 80,
    expect: {
      verdict: 'forwarded',
      endpoints: [
        {address: '10.0.0.1:80', share: 0.5},
        {address: '10.0.0.2:80', share: 0.5},
      ],
      masquerade: true,
      sticky: false,
    },
    count: 300,
  }
  const obs = (a: number, b: number) => [
    ...Array.from({length: a}, () => ({
      verdict: 'forwarded' as const,
      dnat: '10.0.0.1:80',
      masquerade: true,
    })),
    ...Array.from({length: b}, () => ({
      verdict: 'forwarded' as const,
      dnat: '10.0.0.2:80',
      masquerade: true,
    })),
  ]
  it('agrees with an even spread and flags a 2:1 one as a spread difference to re-probe', () => {
    expect(compareGroup(group, obs(150, 150)).result.agrees).toBe(true)
    const skewed = compareGroup(group, obs(200, 100))
    expect(skewed.result.agrees).toBe(false)
    expect(skewed.spreadOnly).toBe(true)
  })
  it('flags lost masquerade and an endpoint explain does not name', () => {
    const o = obs(150, 149)
    o.push({verdict: 'forwarded', dnat: '10.0.0.9:80', masquerade: false})
    const c = compareGroup(group, o)
    expect(c.result.differences.join('\n')).toMatch(/reached 10\.0\.0\.9:80 \(1×\)/)
    expect(c.result.differences.join('\n')).toMatch(
      /1 of 300 forwarded connections were not as expected: masqueraded/,
    )
    expect(c.spreadOnly).toBe(false)
  })
})

describe('compareGroup (IPv6 hairpin)', () => {
  it('reads the DNAT target of [v6]:port when telling a hairpin connection sent back to itself', () => {
    const g: ProbeGroup = {
      service: 'ns9/svc9/tcp',
      frontend: '[fd00:10:96::9]:443',
      client: 'hairpin',
      namespace: 'pod',
      protocol: 'TCP',
      source: 'fd00:10:244::21',
      destination: 'fd00:10:96::9',
      port: 443,
      expect: {
        verdict: 'forwarded',
        endpoints: [
          {address: '[fd00:10:244::21]:8443', share: 0.5},
          {address: '[fd00:10:244::22]:8443', share: 0.5},
        ],
        masquerade: 'hairpin',
        sticky: false,
      },
      count: 4,
    }
    const seen = (dnat: string, masquerade: boolean) => ({
      verdict: 'forwarded' as const,
      dnat,
      masquerade,
    })
    const right = [seen('[fd00:10:244::21]:8443', true), seen('[fd00:10:244::22]:8443', false)]
    expect(compareGroup(g, [...right, ...right]).result.differences).toEqual([])
    const wrong = [seen('[fd00:10:244::21]:8443', false), seen('[fd00:10:244::22]:8443', false)]
    expect(compareGroup(g, [...wrong, ...wrong]).result.differences.join('\n')).toMatch(
      /masquerade exactly when sent back to itself/,
    )
  })
})

describe('observe', () => {
  const spec = (protocol: 'TCP' | 'UDP') => ({
    id: 1,
    protocol,
    source: '127.0.0.1',
    sourcePort: 40001,
    destination: '127.0.0.1',
    port: 30443,
  })
  const entry = {
    protocol: 'tcp',
    src: '127.0.0.1',
    dst: '127.0.0.1',
    sport: 40001,
    dport: 30443,
    replySrc: '127.0.0.1',
    replyDst: '127.0.0.1',
    replySport: 30443,
  }
  it('reads a refused loopback connection as rejected though its entry was confirmed on the way out', () => {
    // Over lo, conntrack confirms the entry in POSTROUTING, before filter INPUT rejects the packet.
    expect(observe(spec('TCP'), 'ECONNREFUSED', entry).verdict).toBe('rejected')
    expect(observe(spec('UDP'), 'ECONNREFUSED', entry).verdict).toBe('blocked')
    expect(observe(spec('TCP'), 'connected', entry).verdict).toBe('passed')
    // A DNATed connection is forwarded whatever the client saw.
    const dnat = {...entry, replySrc: '10.244.1.7', replySport: 8443}
    expect(observe(spec('TCP'), 'ECONNREFUSED', dnat).verdict).toBe('forwarded')
  })
})

describe('planVerify', () => {
  it('plans every kind of client for upstream-overall, on addresses the rules do not name', async () => {
    const {state} = await readFiles({
      files: [join(ROOT, 'fixtures/iptables/upstream-overall/input.rules')],
    })
    const plan = planVerify(state, {probes: 100})
    const named = readFileSync(join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'), 'utf8')
    for (const ip of [...plan.addresses.nodeIps, plan.addresses.externalIps[0]!])
      expect(named.includes(`${ip}/`) || named.includes(`${ip} `)).toBe(false)
    expect([...new Set(plan.groups.map((g) => g.client))].sort()).toEqual([
      'external',
      'hairpin',
      'inside-source-range',
      'localhost',
      'node',
      'pod',
      'second-node-address',
      'unused-port',
    ])
    const svc4 = plan.groups.find(
      (g) => g.service.startsWith('ns4/svc4') && g.client === 'external',
    )!
    expect(svc4.count).toBe(100)
    expect(svc4.expect.endpoints.map((e) => e.address)).toEqual(['10.180.0.4:80', '10.180.0.5:80'])
  })

  it('plans 127.0.0.1:NodePort from the node and an unused ClusterIP port from a pod, per mode', async () => {
    const plan = async (file: string) => {
      const {state} = await readFiles({files: [join(ROOT, file)]})
      return planVerify(state, {probes: 100}).groups
    }
    const ipt = await plan('fixtures/iptables/upstream-overall/input.rules')
    const localhost = ipt.filter((g) => g.client === 'localhost')
    expect(localhost.map((g) => `${g.namespace} ${g.source} ${g.frontend}`).sort()).toEqual([
      'node 127.0.0.1 127.0.0.1:3001',
      'node 127.0.0.1 127.0.0.1:3002',
      'node 127.0.0.1 127.0.0.1:3003',
    ])
    // svc2 is externalTrafficPolicy=Local, but KUBE-EXT's "route LOCAL traffic" rule sends the
    // node's own connection to every endpoint, masqueraded (ServicePort.externalFromNode 'cluster').
    const svc2 = localhost.find((g) => g.frontend === '127.0.0.1:3001')!
    expect(svc2.expect).toMatchObject({verdict: 'forwarded', masquerade: true})
    const unused = ipt.filter((g) => g.client === 'unused-port')
    expect(unused).toHaveLength(6)
    expect(unused.every((g) => g.namespace === 'pod' && g.expect.verdict === 'passed')).toBe(true)
    expect(unused.find((g) => g.destination === '172.30.0.41')?.frontend).toBe('172.30.0.41:40000')
    // nftables never DNATs 127.0.0.1: it reaches the node's own listener; it rejects unused ports.
    const nft = await plan('fixtures/nft/upstream-overall/input.nft')
    const nftLocalhost = nft.filter((g) => g.client === 'localhost')
    expect(nftLocalhost.map((g) => g.frontend).sort()).toEqual([
      '127.0.0.1:3001',
      '127.0.0.1:3002',
      '127.0.0.1:3003',
    ])
    expect(nftLocalhost.every((g) => g.expect.verdict === 'passed')).toBe(true)
    const rejected = nft.filter((g) => g.client === 'unused-port')
    expect(rejected.length).toBeGreaterThan(0)
    expect(rejected.every((g) => g.expect.verdict === 'rejected')).toBe(true)
  })

  it('expects 127.0.0.1:NodePort rejected where the kube-proxy 1.37 reject map names it (UDP: blocked)', async () => {
    const {state} = await readFiles({
      files: [join(ROOT, 'fixtures/verify/nft-localhost-reject/ruleset.nft')],
    })
    const plan = planVerify(state, {probes: 100})
    const localhost = plan.groups
      .filter((g) => g.client === 'localhost')
      .map((g) => `${g.protocol} ${g.frontend} ${g.expect.verdict}`)
      .sort()
    expect(localhost).toEqual([
      'TCP 127.0.0.1:30443 rejected',
      'TCP 127.0.0.1:31080 passed',
      'UDP 127.0.0.1:30053 blocked',
    ])
    // The node binds its UDP NodePorts too: a closed port would answer like a REJECT.
    expect(plan.listenUdpPorts).toContain(30053)
  })

  it('with localhost NodePorts off expects 127.0.0.1:NodePort un-NATed, but rejected without endpoints', async () => {
    const {state} = await readFiles({
      files: [join(ROOT, 'fixtures/verify/iptables-localhost-off/iptables-save.txt')],
    })
    expect(state.node.localhostNodePorts).toBe(false)
    const localhost = planVerify(state, {probes: 100})
      .groups.filter((g) => g.client === 'localhost')
      .map((g) => `${g.protocol} ${g.frontend} ${g.expect.verdict}`)
      .sort()
    // UDP too: the node binds 30053, so the datagram that is not DNATed leaves a confirmed entry.
    expect(localhost).toEqual([
      'TCP 127.0.0.1:30099 rejected',
      'TCP 127.0.0.1:30443 passed',
      'TCP 127.0.0.1:31080 passed',
      'UDP 127.0.0.1:30053 passed',
    ])
  })

  it('with localhost NodePorts on expects a UDP 127.0.0.1:NodePort DNATed to the endpoints', async () => {
    const {state} = await readFiles({
      files: [join(ROOT, 'fixtures/verify/iptables-localhost-on/iptables-save.txt')],
    })
    expect(state.node.localhostNodePorts).toBe(true)
    const plan = planVerify(state, {probes: 100})
    const udp = plan.groups.find((g) => g.client === 'localhost' && g.protocol === 'UDP')!
    expect(udp).toMatchObject({frontend: '127.0.0.1:30053', namespace: 'node'})
    expect(udp.expect).toMatchObject({verdict: 'forwarded', masquerade: true})
    expect(udp.expect.endpoints.map((e) => e.address).sort()).toEqual([
      '10.244.1.11:53',
      '10.244.2.11:53',
    ])
    expect(plan.listenUdpPorts).toContain(30053)
  })

  it('plans the unused-port probe for IPv6 ClusterIPs of iptables mode from the IPv6 pod address', async () => {
    const {state} = await readFiles({
      files: [join(ROOT, 'fixtures/iptables/handmade-ipv6/input.rules')],
    })
    const plan = planVerify(state, {probes: 100})
    const unused = plan.groups.filter((g) => g.client === 'unused-port')
    expect(unused.map((g) => g.frontend).sort()).toEqual([
      '[fd00:10:96::10]:40000',
      '[fd00:10:96::7]:40000',
      '[fd00:10:96::9]:40000',
      '[fd00:10:96::a]:40000',
    ])
    for (const g of unused) {
      expect(g.source).toBe(plan.addresses.podIps.find((ip) => ip.includes(':')))
      expect(cidrContains('fd00:10:244::/48', g.source)).toBe(true)
      expect(g.expect.verdict).toBe('passed')
    }
  })

  it('expects 127.0.0.1:NodePort of an old KUBE-XLB layout to reach local endpoints only, or be dropped', async () => {
    // handmade-legacy-xlb: KUBE-XLB without the "route LOCAL traffic" rule (≤≈1.14): the node's own
    // connection is any client's: lb's local endpoint, unmasqueraded; nolocal's KUBE-MARK-DROP.
    const {state} = await readFiles({
      files: [join(ROOT, 'fixtures/iptables/handmade-legacy-xlb/input.rules')],
    })
    expect(state.services.find((sp) => sp.name === 'lb')?.externalFromNode).toBe('policy')
    const plan = planVerify(state, {probes: 100})
    const localhost = new Map(
      plan.groups.filter((g) => g.client === 'localhost').map((g) => [g.frontend, g.expect]),
    )
    expect(localhost.get('127.0.0.1:30443')).toMatchObject({
      verdict: 'forwarded',
      endpoints: [{address: '10.244.1.7:8443', share: 1}],
    })
    expect(localhost.get('127.0.0.1:30090')?.verdict).toBe('dropped')
    expect(plan.skipped.filter((s) => s.service.includes('127.0.0.1'))).toEqual([])
  })

  it('expects a forwarded LB IP of an old-layout "no local endpoints" service to pass un-NATed', async () => {
    // handmade-legacy-xlb's default/nolocal given an LB IP the ≤1.23 way (KUBE-FW -> KUBE-XLB, which
    // ends in KUBE-MARK-DROP): the kubelet drops the mark in INPUT only, so forwarded it passes.
    const file = join(ROOT, 'fixtures/verify/legacy-xlb-lb-nolocal/input.rules')
    const {state} = await readFiles({files: [file]})
    const groups = planVerify(state, {probes: 100}).groups.filter((g) =>
      g.service.startsWith('default/nolocal'),
    )
    const verdict = (frontend: string) =>
      groups.find((g) => g.client === 'external' && g.frontend === frontend)?.expect.verdict
    expect(verdict('198.51.100.6:80')).toBe('passed')
    const nodePort = groups.find((g) => g.client === 'external' && g.frontend.endsWith(':30090'))
    expect(nodePort?.expect.verdict).toBe('dropped')
  })

  it('plans IPv6 service ports on IPv6 addresses the rules do not name: test ranges, the pod CIDR, a source range', async () => {
    const file = join(ROOT, 'fixtures/iptables/handmade-ipv6/input.rules')
    const {state} = await readFiles({files: [file]})
    const plan = planVerify(state, {probes: 100})
    expect(plan.skipped).toEqual([])
    const v6 = plan.groups.filter((g) => g.destination.includes(':'))
    expect([...new Set(v6.map((g) => g.service))].sort()).toEqual([
      'ns10/svc10:p80/tcp',
      'ns7/svc7:p80/tcp',
      'ns8/svc8:dns/udp',
      'ns9/svc9/tcp',
    ])
    expect([...new Set(v6.map((g) => g.client))].sort()).toEqual([
      'external',
      'hairpin',
      'inside-source-range',
      'node',
      'pod',
      'second-node-address',
      'unused-port',
    ])
    const a = plan.addresses
    const v6of = (ips: string[]) => ips.filter((ip) => ip.includes(':'))
    // Benchmarking range first; the LB IP 2001:db8::7 and its source range are the rules'.
    expect(v6of(a.nodeIps)).toEqual(['2001:2::a', '2001:2::b'])
    expect(v6of(a.externalIps)[0]).toBe('2001:2::c')
    expect(v6of(a.podIps).every((ip) => cidrContains('fd00:10:244::/48', ip))).toBe(true)
    const inRange = v6.find((g) => g.client === 'inside-source-range')!
    expect(cidrContains('2001:db8:1::/48', inRange.source)).toBe(true)
    const named = new Set(
      state.services.flatMap((sp) => [
        ...sp.frontends.map((f) => f.ip),
        ...sp.endpoints.map((e) => e.ip),
      ]),
    )
    for (const ip of [...v6of(a.nodeIps), ...v6of(a.externalIps), ...v6of(a.podIps)])
      expect(named.has(ip)).toBe(false)
    // Endpoints as [v6]:port, the way the kernel's DNAT target is compared.
    const svc9 = v6.find((g) => g.service === 'ns9/svc9/tcp' && g.client === 'pod')!
    expect(svc9.expect.endpoints.map((e) => e.address)).toEqual([
      '[fd00:10:244::21]:8443',
      '[fd00:10:244::22]:8443',
    ])
    // IPv4 addresses stay as they were (the mode-difference probes use them); no IPv4 groups here.
    expect(a.nodeIps.filter((ip) => !ip.includes(':'))).toEqual(['198.18.0.10', '198.18.0.11'])
    expect(plan.groups.length).toBe(v6.length)
  })

  it('plans a dual-stack pair per family, the IPv4 plan unchanged by the IPv6 dump', async () => {
    const v4 = join(ROOT, 'fixtures/iptables/upstream-overall/input.rules')
    const v6 = join(ROOT, 'fixtures/iptables/handmade-ipv6/input.rules')
    const alone = planVerify((await readFiles({files: [v4]})).state, {probes: 100})
    const both = planVerify((await readFiles({files: [v4, v6]})).state, {probes: 100})
    const ipv4 = (groups: ProbeGroup[]) => groups.filter((g) => !g.destination.includes(':'))
    expect(ipv4(both.groups)).toEqual(alone.groups)
    expect(both.groups.some((g) => g.destination.includes(':'))).toBe(true)
    // Every group's source and destination are of one family.
    for (const g of both.groups) expect(g.source.includes(':')).toBe(g.destination.includes(':'))
  })

  it('skips SCTP ports naming each fact that applies: Node.js has no SCTP sockets, and the kernel none loaded', async () => {
    expect(sctpReason(false)).toBe(
      "kp verify probes TCP and UDP: Node.js, which runs kp's probes, has no SCTP sockets, and this kernel has no SCTP loaded (no /proc/sys/net/sctp)",
    )
    expect(sctpReason(true)).toBe(
      "kp verify probes TCP and UDP: Node.js, which runs kp's probes, has no SCTP sockets",
    )
    expect(sctpReason(null)).toBe(sctpReason(true))
    const {state} = await readFiles({
      files: [join(ROOT, 'fixtures/iptables/handmade-ipv6/input.rules')],
    })
    const sctp = {
      ...state,
      services: state.services.map((sp) =>
        sp.name === 'svc9' ? {...sp, protocol: 'SCTP' as const} : sp,
      ),
    }
    const plan = planVerify(sctp, {probes: 100, kernelSctp: false})
    expect(plan.skipped).toEqual([{service: 'ns9/svc9/sctp', reason: sctpReason(false)}])
    expect(plan.groups.some((g) => g.service.startsWith('ns9/svc9'))).toBe(false)
  })
})

describe('planVerify: unused-port probes of IPv6 ClusterIPs', () => {
  it('waits for the refusal on the SYN resend (patient) in nftables mode only, IPv6 only', async () => {
    const file = join(ROOT, 'fixtures/iptables/handmade-ipv6/input.rules')
    const {state} = await readFiles({files: [file]})
    const unused = (mode: 'iptables' | 'nftables') =>
      planVerify({...state, mode}, {probes: 100}).groups.filter((g) => g.client === 'unused-port')
    const nft = unused('nftables')
    const v6 = nft.filter((g) => g.destination.includes(':'))
    expect(v6.length).toBeGreaterThan(0)
    for (const g of v6) expect(g).toMatchObject({patient: true, expect: {verdict: 'rejected'}})
    for (const g of nft.filter((g) => !g.destination.includes(':')))
      expect(g.patient).toBeUndefined()
    for (const g of unused('iptables')) expect(g.patient).toBeUndefined()
  })
})
