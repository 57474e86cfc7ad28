/**
 * What `kp verify` sends and what it expects: the sandbox's addresses (chosen to overlap nothing
 * the rules name), and per service port and kind of client a group of probes with `kp explain`'s
 * answer turned into the verdict, endpoints, shares and masquerade the kernel should show.
 */
import {
  addressOrCidrFamily,
  canonicalIp,
  cidrContains,
  joinHostPort,
  parseAddress,
} from '../../core/address.js'
import {displayName} from '../../core/state.js'
import type {ProxyState, ServicePort} from '../../model/types.js'
import {explainServicePort, fromThisNode, type FrontendExplanation} from '../explain.js'
import type {Expectation, ProbeClient, ProbeGroup} from './types.js'

/** A known masquerade (or none) as explain words it, so expectationFor reads it as for any client. */
const FIXED: Record<string, FrontendExplanation['masquerade']> = {
  true: {when: 'always', reason: ''},
  false: {when: 'never', reason: ''},
  null: {when: 'unknown', reason: ''},
}

export interface SandboxAddresses {
  nodeIps: string[]
  externalIps: string[]
  podIps: string[]
  /** Endpoint addresses given to the pod client for hairpin probes: the node routes them to the sink. */
  hairpinIps: string[]
  podInterface: string
}

export interface VerifyPlan {
  addresses: SandboxAddresses
  groups: ProbeGroup[]
  /** TCP ports the node listens on, so that what reaches it without DNAT is accepted. */
  listenPorts: number[]
  /** UDP ports the node binds likewise (an unbound one answers like a REJECT). */
  listenUdpPorts: number[]
  /** Service ports kp cannot probe here, with the reason. */
  skipped: Array<{service: string; reason: string}>
}

type Family = ServicePort['family']

const BITS: Record<Family, number> = {IPv4: 32, IPv6: 128}

/**
 * Ranges no cluster routes, for addresses the rules do not place: RFC 2544 benchmarking, then
 * RFC 5737 documentation (IPv4); RFC 5180 benchmarking 2001:2::/48, then RFC 3849 documentation
 * 2001:db8::/32 (IPv6).
 */
const TEST_RANGES: Record<Family, string[]> = {
  IPv4: ['198.18.0.0', '198.19.0.0', '192.0.2.0', '203.0.113.0'],
  IPv6: ['2001:2::', '2001:db8::'],
}

const familyOf = (ipOrCidr: string): Family | null => addressOrCidrFamily(ipOrCidr)
const canonical = (ip: string) => canonicalIp(ip) ?? ip

function toText(family: Family, v: bigint): string {
  if (family === 'IPv4') return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.')
  const groups: string[] = []
  for (let i = 7; i >= 0; i--) groups.push(((v >> BigInt(i * 16)) & 0xffffn).toString(16))
  return canonical(groups.join(':'))
}

/** Every address and CIDR the rules name, so the sandbox's own addresses avoid them. */
function usedAddresses(state: ProxyState): {ips: Set<string>; cidrs: string[]} {
  const ips = new Set<string>()
  const cidrs: string[] = [...state.node.podCIDRs]
  for (const sp of state.services) {
    for (const f of sp.frontends) {
      if (f.ip !== null) ips.add(canonical(f.ip))
      cidrs.push(...f.sourceRanges)
    }
    for (const e of sp.endpoints) if (e.ip !== null) ips.add(canonical(e.ip))
  }
  return {ips, cidrs}
}

/** A free address of `family`: inside `within` when given (offset from its start), else in a test range. */
function pick(
  used: {ips: Set<string>; cidrs: string[]},
  taken: Set<string>,
  within: string | null,
  avoidCidrs: boolean,
  family: Family,
): string | null {
  const ranges: Array<[bigint, number]> = []
  if (within !== null) {
    const [base, bits] = within.split('/')
    const net = base ? parseAddress(base) : null
    if (!base || net === null || net.family !== family) return null
    const size = 1n << BigInt(BITS[family] - Number(bits ?? BITS[family]))
    const start = net.value - (net.value % size)
    // A single address (a nodePortAddresses entry) is taken as it is, even when the rules name it.
    if (size === 1n) {
      const ip = canonical(base)
      return taken.has(ip) ? null : (taken.add(ip), ip)
    }
    const offset = size - 2n < size / 2n + 7n ? size - 2n : size / 2n + 7n
    ranges.push([start + offset, Number(size - 2n < 512n ? size - 2n : 512n)])
  } else {
    for (const r of TEST_RANGES[family]) ranges.push([parseAddress(r)!.value + 10n, 200])
  }
  for (const [start, count] of ranges)
    for (let i = 0; i < count; i++) {
      const ip = toText(family, start + BigInt(i))
      if (used.ips.has(ip) || taken.has(ip)) continue
      if (avoidCidrs && used.cidrs.some((c) => cidrContains(c, ip))) continue
      taken.add(ip)
      return ip
    }
  return null
}

function podInterfaceName(state: ProxyState): string {
  const n = state.node
  const name =
    n.localDetector === 'interface' && n.localInterface
      ? n.localInterface
      : n.localDetector === 'interface-prefix' && n.localInterface
        ? `${n.localInterface}0`
        : 'pod0'
  return /^[\w.-]{1,15}$/.test(name) ? name : 'pod0'
}

export interface PlanOptions {
  /** Probes per group whose spread is tested (≥ 2 endpoints, no affinity). */
  probes: number
  /** Whether this kernel has SCTP (null: not looked at), for the reason SCTP ports are skipped. */
  kernelSctp?: boolean | null
  /**
   * IPv4 addresses the node holds besides the ones kp picks (`--node-ip`: an LB IP a cloud puts in
   * the node's local routing table): probes to them expect what the node's own address gets.
   */
  nodeAddresses?: string[]
}

/** How many connections a group needs: enough for the spread test where there is one. */
function countFor(expect: Expectation, probes: number): number {
  if (expect.sticky) return 10
  if (expect.verdict !== 'forwarded' || expect.endpoints.length < 2) return 3
  const least = Math.min(...expect.endpoints.map((e) => e.share ?? 1))
  // The chi-square test wants about 5 expected connections in the smallest cell.
  return Math.max(probes, Math.min(2000, Math.ceil(5 / Math.max(least, 1e-3))))
}

function expectationFor(
  fe: FrontendExplanation,
  client: ProbeClient,
  protocol: 'TCP' | 'UDP',
  sticky: boolean,
  nodeIps: readonly string[],
): Expectation | string {
  if (fe.incomplete !== null) return `the input lacks what ${fe.address} depends on`
  const outside = client === 'external' || client === 'second-node-address'
  const filtered = fe.sourceRanges.length > 0 && fe.action !== 'reject'
  const blocked = (v: 'rejected' | 'dropped') => (protocol === 'UDP' ? 'blocked' : v)
  if (fe.action === 'reject')
    return {verdict: blocked('rejected'), endpoints: [], masquerade: null, sticky: false}
  // ≤1.24 only marks an outside source; the kubelet drops it in INPUT, so a forwarded one passes un-NATed.
  if (
    filtered &&
    outside &&
    fe.action !== 'drop' &&
    fe.outsideRangesMarkedForDrop === true &&
    (fe.ip === null || !nodeIps.includes(canonical(fe.ip)))
  )
    return {verdict: 'passed', endpoints: [], masquerade: null, sticky: false}
  // Likewise ≤1.24 "has no local endpoints" only marks: a forwarded LB IP / externalIP passes un-NATed.
  if (
    outside &&
    fe.action === 'drop' &&
    fe.noLocalMarkedForDrop === true &&
    (fe.type === 'LoadBalancer' || fe.type === 'ExternalIP') &&
    (fe.ip === null || !nodeIps.includes(canonical(fe.ip)))
  )
    return {verdict: 'passed', endpoints: [], masquerade: null, sticky: false}
  if (fe.action === 'drop' || (filtered && outside))
    return {verdict: blocked('dropped'), endpoints: [], masquerade: null, sticky: false}
  if (fe.reaches.some((r) => r.ip === null || r.port === null))
    return 'the input redacts its endpoints'
  if (fe.reaches.length === 0) return 'explain names no endpoint for it'
  let masquerade: Expectation['masquerade']
  switch (fe.masquerade.when) {
    case 'always':
      masquerade = true
      break
    case 'never':
      masquerade = false
      break
    case 'unknown':
      masquerade = null
      break
    case 'conditional':
      // ClusterIP: masqueraded unless from a pod; external frontends (ETP=Local): only from the node.
      masquerade =
        client === 'hairpin'
          ? 'hairpin'
          : fe.type === 'ClusterIP'
            ? client !== 'pod'
            : client === 'node'
  }
  if (client === 'hairpin' && masquerade === false) masquerade = 'hairpin'
  // A connection DNATed to this node's own address is delivered here, never through POSTROUTING:
  // nothing masquerades it.
  if (fe.reaches.some((r) => r.ip !== null && nodeIps.includes(canonical(r.ip)))) masquerade = null
  return {
    verdict: 'forwarded',
    endpoints: fe.reaches.map((r) => ({
      address: joinHostPort(canonical(r.ip!), r.port),
      share: r.share,
    })),
    masquerade,
    sticky,
  }
}

export function planVerify(state: ProxyState, opts: PlanOptions): VerifyPlan {
  const used = usedAddresses(state)
  const taken = new Set<string>()
  const skipped: VerifyPlan['skipped'] = []
  const groups: ProbeGroup[] = []
  const addresses: SandboxAddresses = {
    nodeIps: [],
    externalIps: [],
    podIps: [],
    hairpinIps: [],
    podInterface: podInterfaceName(state),
  }
  const supported: ServicePort[] = []
  for (const sp of state.services) {
    const why = unsupported(sp, opts.kernelSctp ?? null)
    if (why !== null) skipped.push({service: displayName(sp), reason: why})
    else supported.push(sp)
  }
  const podIps: Partial<Record<Family, string>> = {}
  // IPv4 addresses always (the mode-difference probes use them); IPv6 ones for IPv6 ports.
  for (const family of ['IPv4', 'IPv6'] as const) {
    const ports = supported.filter((sp) => sp.family === family)
    if (family === 'IPv6' && ports.length === 0) continue
    const f = planFamily(state, family, ports, used, taken, opts, skipped)
    addresses.nodeIps.push(...f.addresses.nodeIps)
    addresses.externalIps.push(...f.addresses.externalIps)
    addresses.podIps.push(...f.addresses.podIps)
    addresses.hairpinIps.push(...f.addresses.hairpinIps)
    groups.push(...f.groups)
    if (f.addresses.podIps[0] !== undefined) podIps[family] = f.addresses.podIps[0]
  }
  groups.push(...modeDifferenceGroups(state, podIps, opts.probes, skipped))
  return {
    addresses,
    groups,
    listenPorts: listenPorts(state, 'TCP'),
    listenUdpPorts: listenPorts(state, 'UDP'),
    skipped,
  }
}

/** The sandbox's addresses of one family and the probes of that family's service ports. */
function planFamily(
  state: ProxyState,
  family: Family,
  ports: readonly ServicePort[],
  used: {ips: Set<string>; cidrs: string[]},
  taken: Set<string>,
  opts: PlanOptions,
  skipped: VerifyPlan['skipped'],
): {addresses: Omit<SandboxAddresses, 'podInterface'>; groups: ProbeGroup[]} {
  const ofFamily = (ipOrCidr: string) => familyOf(ipOrCidr) === family
  const npa = state.node.nodePortAddresses?.filter(ofFamily) ?? []
  const nodeIps: string[] = []
  const nodeSpecific = new Set<string>()
  for (const sp of state.services)
    for (const f of sp.frontends)
      if (f.type === 'NodePort' && f.ip !== null && ofFamily(f.ip))
        nodeSpecific.add(canonical(f.ip))
  for (const c of npa.length > 0 ? npa : [null]) {
    const ip = pick(used, taken, c, c === null, family)
    if (ip !== null) nodeIps.push(ip)
  }
  if (nodeIps.length === 0) nodeIps.push(pick(used, taken, null, true, family)!)
  if (npa.length === 0) {
    const second = pick(used, taken, null, true, family)
    if (second !== null) nodeIps.push(second)
  }
  for (const ip of nodeSpecific) if (!nodeIps.includes(ip)) nodeIps.push(ip)
  for (const ip of opts.nodeAddresses ?? [])
    if (ofFamily(ip) && !nodeIps.includes(canonical(ip))) nodeIps.push(canonical(ip))
  const externalIp = pick(used, taken, null, true, family)!
  const externalIps = [externalIp]
  const podCidr = state.node.podCIDRs.find(ofFamily) ?? null
  const podIp =
    podCidr !== null
      ? pick(used, taken, podCidr, false, family)
      : state.node.localDetector === 'interface' || state.node.localDetector === 'interface-prefix'
        ? pick(used, taken, null, true, family)
        : null
  const podIps = podIp !== null ? [podIp] : []
  const hairpinIps: string[] = []
  const groups: ProbeGroup[] = []
  const inRange = new Map<string, string>()

  for (const sp of ports) {
    const service = displayName(sp)
    const protocol = sp.protocol as 'TCP' | 'UDP'
    const explained = explainServicePort(sp, sp.frontends, null, state)
    const sticky = sp.sessionAffinity !== null
    const add = (
      fe: FrontendExplanation,
      client: ProbeClient,
      namespace: ProbeGroup['namespace'],
      source: string,
      destination: string,
    ) => {
      const expect = expectationFor(fe, client, protocol, sticky, nodeIps)
      if (typeof expect === 'string') {
        skipped.push({service: `${service} ${fe.address}`, reason: expect})
        return
      }
      groups.push({
        service,
        frontend: fe.address,
        client,
        namespace,
        protocol,
        source,
        destination,
        port: fe.port!,
        expect,
        count: countFor(expect, opts.probes),
      })
    }
    for (const fe of explained.frontends) {
      if (fe.port === null) continue
      const raw = fe.type === 'NodePort' && fe.ip === null ? nodeIps[0] : fe.ip
      if (raw == null || !ofFamily(raw)) continue
      const dest = canonical(raw)
      add(fe, 'external', 'ext', externalIp, dest)
      if (fe.type === 'NodePort' && fe.ip === null && npa.length === 0 && nodeIps[1])
        add(fe, 'second-node-address', 'ext', externalIp, nodeIps[1])
      if (fe.sourceRanges.length > 0) {
        const range = fe.sourceRanges.find(ofFamily)
        if (range !== undefined) {
          let ip = inRange.get(range)
          if (ip === undefined) {
            ip = pick(used, taken, range, false, family) ?? ''
            inRange.set(range, ip)
            if (ip !== '') externalIps.push(ip)
          }
          if (ip !== '') add(fe, 'inside-source-range', 'ext', ip, dest)
        }
      }
      if (fe.type !== 'ClusterIP') continue
      if (podIp !== null) add(fe, 'pod', 'pod', podIp, dest)
      add(fe, 'node', 'node', nodeIps[0]!, dest)
      // An endpoint reaching its own service: kube-proxy masquerades it when sent back to itself.
      // Newer layouts masquerade hairpin traffic of this node's own endpoints only.
      const own = sp.endpoints.filter((ep) => fe.reaches.some((r) => r.ip === ep.ip))
      const selfIp = (
        own.find((ep) => ep.local === true) ??
        (own.every((ep) => ep.local === false) ? undefined : own.find((ep) => ep.local === null))
      )?.ip
      const self = selfIp ? canonical(selfIp) : undefined
      if (
        self &&
        podCidr !== null &&
        ofFamily(self) &&
        cidrContains(podCidr, self) &&
        fe.action === 'forward' &&
        state.node.localDetector === 'cidr'
      ) {
        if (!hairpinIps.includes(self)) hairpinIps.push(self)
        add(fe, 'hairpin', 'pod', self, dest)
      }
    }
  }
  return {addresses: {nodeIps, externalIps, podIps, hairpinIps}, groups}
}

/**
 * Why kp cannot probe SCTP here, naming each fact that applies: Node.js (kp's probe program) has
 * no SCTP sockets, and the kernel may have no SCTP either (`kernelSctp` false: no
 * /proc/sys/net/sctp; null: not looked at).
 */
export function sctpReason(kernelSctp: boolean | null): string {
  const node = "Node.js, which runs kp's probes, has no SCTP sockets"
  return kernelSctp === false
    ? `kp verify probes TCP and UDP: ${node}, and this kernel has no SCTP loaded (no /proc/sys/net/sctp)`
    : `kp verify probes TCP and UDP: ${node}`
}

function unsupported(sp: ServicePort, kernelSctp: boolean | null): string | null {
  if (sp.protocol === 'SCTP') return sctpReason(kernelSctp)
  if (sp.protocol !== 'TCP' && sp.protocol !== 'UDP')
    return `kp verify probes TCP and UDP; this port is ${sp.protocol}`
  return null
}

function listenPorts(state: ProxyState, protocol: 'TCP' | 'UDP'): number[] {
  const ports = new Set<number>()
  for (const sp of state.services) {
    if (sp.protocol !== protocol) continue
    for (const f of sp.frontends) if (f.port !== null && f.type !== 'ClusterIP') ports.add(f.port)
    for (const e of sp.endpoints) if (e.port !== null) ports.add(e.port)
  }
  return [...ports].sort((a, b) => a - b).slice(0, 5000)
}

/**
 * Probes where the modes differ by design: the node to 127.0.0.1:NodePort (iptables mode with
 * localhostNodePorts DNATs it, needing route_localnet=1, which the sandbox sets as kube-proxy
 * does; otherwise it reaches the node's own listener un-NATed), and a pod to a ClusterIP on a
 * port no service uses (iptables mode passes it un-NATed; nftables mode rejects it in
 * cluster-ips-check). Localhost NodePorts over TCP and UDP: the node binds its UDP NodePorts, so
 * an un-NATed datagram leaves a confirmed entry, a DNATed one the endpoint in its reply tuple.
 */
function modeDifferenceGroups(
  state: ProxyState,
  podIps: Partial<Record<Family, string>>,
  probes: number,
  skipped: VerifyPlan['skipped'],
): ProbeGroup[] {
  const groups: ProbeGroup[] = []
  const group = (
    sp: ServicePort,
    client: ProbeClient,
    namespace: ProbeGroup['namespace'],
    source: string,
    destination: string,
    port: number,
    expect: Expectation,
    protocol: 'TCP' | 'UDP' = 'TCP',
    patient = false,
  ) =>
    groups.push({
      service: displayName(sp),
      frontend: joinHostPort(destination, port),
      client,
      namespace,
      protocol,
      source,
      destination,
      port,
      expect,
      count: countFor(expect, probes),
      ...(patient ? {patient: true as const} : {}),
    })
  const notNated = (verdict: 'passed' | 'rejected' | 'blocked'): Expectation => ({
    verdict,
    endpoints: [],
    masquerade: null,
    sticky: false,
  })
  // The node to 127.0.0.1:NodePort; a refusal reads `blocked` for UDP (no answer to tell it by).
  const localhost = (sp: ServicePort, port: number, expect: Expectation, protocol: 'TCP' | 'UDP') =>
    group(sp, 'localhost', 'node', '127.0.0.1', '127.0.0.1', port, expect, protocol)
  const refused = (protocol: 'TCP' | 'UDP') => (protocol === 'UDP' ? 'blocked' : 'rejected')
  if (state.mode === 'iptables' && state.node.localhostNodePorts !== null)
    for (const sp of state.services) {
      if (sp.family !== 'IPv4' || (sp.protocol !== 'TCP' && sp.protocol !== 'UDP')) continue
      const protocol = sp.protocol
      const explained = explainServicePort(sp, sp.frontends, null, state).frontends
      for (const fe of explained) {
        if (fe.type !== 'NodePort' || fe.ip !== null || fe.port === null) continue
        if (!state.node.localhostNodePorts) {
          // Not DNATed, but a port without endpoints is still rejected for every local address
          // (filter `-m addrtype --dst-type LOCAL ... -j REJECT`, hooked from INPUT).
          const rejects = fe.action === 'reject' && fe.incomplete === null
          localhost(sp, fe.port, notNated(rejects ? refused(protocol) : 'passed'), protocol)
          continue
        }
        // With externalTrafficPolicy=Local the node's own connection is short-circuited to every
        // endpoint (KUBE-EXT, and KUBE-XLB since ≈1.15) or follows the policy (older KUBE-XLB).
        let seen = fe
        if (sp.externalTrafficPolicy !== 'Cluster') {
          const own = fromThisNode(sp, fe)
          if (own === null) {
            skipped.push({
              service: `${displayName(sp)} 127.0.0.1:${fe.port}`,
              reason:
                'externalTrafficPolicy=Local: the input does not show where the node itself reaches a localhost NodePort (every endpoint with the "route LOCAL traffic" rule, local ones without)',
            })
            continue
          }
          seen = {
            ...fe,
            action: own.action,
            reaches: own.reaches,
            masquerade: FIXED[String(own.masquerade)]!,
          }
        }
        const expect = expectationFor(seen, 'node', protocol, sp.sessionAffinity !== null, [])
        if (typeof expect !== 'string') localhost(sp, fe.port, expect, protocol)
      }
    }
  if (state.mode === 'nftables')
    // nftables mode never DNATs 127.0.0.1: it reaches the node's own listener (kube-proxy 1.37's
    // userspace proxy for TCP, here the sandbox's), unless the 1.37 reject map names the port.
    // UDP too: a rejected datagram leaves no conntrack entry, a delivered one does.
    for (const sp of state.services) {
      if (sp.family !== 'IPv4' || (sp.protocol !== 'TCP' && sp.protocol !== 'UDP')) continue
      for (const fe of sp.frontends) {
        if (fe.type !== 'NodePort' || fe.ip !== null || fe.port === null || fe.incomplete) continue
        const verdict = fe.localhostRejected === true ? refused(sp.protocol) : 'passed'
        localhost(sp, fe.port, notNated(verdict), sp.protocol)
      }
    }
  if (state.mode !== 'iptables' && state.mode !== 'nftables') return groups
  const portsOf = new Map<string, Set<number>>()
  const owner = new Map<string, ServicePort>()
  for (const sp of state.services)
    for (const f of sp.frontends) {
      if (f.ip === null || f.port === null) continue
      const ip = canonical(f.ip)
      portsOf.set(ip, (portsOf.get(ip) ?? new Set()).add(f.port))
      // Per family, from a pod of that family. Filed under a TCP/UDP port: an SCTP port keeps its
      // "not verified" reason.
      const probed = sp.protocol === 'TCP' || sp.protocol === 'UDP'
      if (f.type === 'ClusterIP' && probed && podIps[sp.family] !== undefined && !owner.has(ip))
        owner.set(ip, sp)
    }
  for (const [ip, sp] of owner) {
    let port = 40_000
    while (portsOf.get(ip)!.has(port)) port++
    group(
      sp,
      'unused-port',
      'pod',
      podIps[sp.family]!,
      ip,
      port,
      notNated(state.mode === 'iptables' ? 'passed' : 'rejected'),
      'TCP',
      // nftables rejects in cluster-ips-check; its ICMPv6 error reaches the pod while connect()
      // holds the socket and is dropped, so the refusal comes with the SYN resent 1 s later.
      state.mode === 'nftables' && sp.family === 'IPv6',
    )
  }
  return groups
}
