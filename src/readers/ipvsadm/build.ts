/**
 * Builds one node's IPVS-mode ProxyState from the dumps of that node: `ipvsadm -Ln|-Sn` (the
 * virtual servers), `ipset save|list` (what each virtual server is for), `ip addr` (kube-ipvs0
 * and the node's own addresses) and the IPVS-mode `iptables-save` (node settings), plus the
 * cluster objects of `--cluster`, which are the only source of names.
 *
 * IPVS has one virtual server per (address, port, protocol) and no notion of a Service
 * (docs/ipvs-layouts.md a.3). The builder therefore:
 *
 * 1. merges the virtual servers of every listing (-Ln, -Sn, --stats... of one node);
 * 2. sets aside what kube-proxy never makes (fwmark services, the 198.51.100.0:20000 scheduler
 *    probe, non-masquerading real servers, persistence masks/engines) as `foreign`;
 * 3. classifies each remaining virtual server, from the strongest evidence at hand: the cluster
 *    objects, then kube-proxy's ipsets, then `ip addr`, and only then a documented guess;
 * 4. groups the virtual servers of one service port: by name when the cluster objects say,
 *    otherwise by folding each NodePort / externalIP / LoadBalancer virtual server into the
 *    ClusterIP virtual server that has the same protocol and the same real servers;
 * 5. turns each group into a ServicePort (scheduler, persistence, weights; share null because a
 *    scheduler decides, 0 for a draining weight-0 real server).
 */
import {pushAll} from '../../core/arrays.js'
import {diag, emptyState, uniqueSourceRefs} from '../../core/state.js'
import type {
  Diagnostic,
  Endpoint,
  Family,
  ForeignObject,
  Frontend,
  FrontendType,
  ProxyState,
  Protocol,
  ServicePort,
  SourceRef,
  TrafficPolicy,
} from '../../model/types.js'
import type {IpAddrDump} from '../ip-addr/parse.js'
import type {IpsetDump, IpsetMember} from '../ipset/parse.js'
import {countRuleCopy, reportRuleCopies, type RuleCopies} from '../iptables/repeated-rules.js'
import type {IptablesRuleset} from '../iptables/ruleset.js'
import type {ParsedSource, ReadOptions} from '../types.js'
import {joinHostPort} from '../../core/address.js'
import {endpointKey} from './protocol.js'
import {iptablesModeChain, readIpvsIptablesFacts} from './iptables-facts.js'
import type {IpvsadmListing, IpvsVirtualServer} from './parse.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {KUBE_CHAIN_PREFIX} from '../../kube-proxy/iptables-names.js'
import {ipvsSetName} from '../../kube-proxy/ipvs-names.js'

/** kube-proxy's scheduler probe (a.1): added and deleted at start-up; one left behind is not a service. */
const SCHEDULER_PROBE = {protocol: 'TCP', ip: '198.51.100.0', port: 20000} as const
/** The apiserver's default --service-node-port-range; used only for the documented guess below. */
const NODE_PORT_RANGE = {min: 30000, max: 32767} as const

interface RealServerSeen {
  ip: string
  port: number
  weight: number | null
  forward: string | null
  refs: SourceRef[]
}

/** A virtual server as every listing of the node showed it, merged. */
interface VirtualServerSeen extends Omit<
  IpvsVirtualServer,
  'showsConfig' | 'realServers' | 'line'
> {
  /** false while only --stats / --rate listings showed it: scheduler and persistence unknown. */
  configKnown: boolean
  realServers: Map<string, RealServerSeen>
  refs: SourceRef[]
}

/** A kube-proxy virtual server: protocol, address and port are always set. */
interface KubeVirtualServer extends VirtualServerSeen {
  protocol: Protocol
  ip: string
  port: number
}

type Evidence = 'cluster' | 'ipset' | 'ip-addr' | 'guess'

interface Classified {
  vs: KubeVirtualServer
  type: FrontendType
  /** Local external traffic policy of this frontend; null when not known. */
  local: boolean | null
  sourceRanges: string[]
  evidence: Evidence
  evidenceRefs: SourceRef[]
  /** The cluster service port this virtual server belongs to, when --cluster named it. */
  clusterService: ServicePort | null
}

// ---------------------------------------------------------------------------------------------
// 1. Virtual servers of every listing, merged

function mergeListings(
  listings: ParsedSource<IpvsadmListing>[],
  diagnostics: Diagnostic[],
): VirtualServerSeen[] {
  const byKey = new Map<string, VirtualServerSeen>()
  for (const p of listings) {
    const path = p.source.path
    for (const vs of p.data.virtualServers) {
      const ref = {path, line: vs.line}
      let seen = byKey.get(vs.key)
      const isNew = !seen
      if (!seen) {
        seen = {
          key: vs.key,
          protocol: vs.protocol,
          family: vs.family,
          ip: vs.ip,
          port: vs.port,
          fwmark: vs.fwmark,
          scheduler: null,
          schedulerFlags: [],
          persistentTimeout: null,
          persistenceMask: null,
          persistenceEngine: null,
          onePacket: false,
          configKnown: false,
          realServers: new Map(),
          refs: [],
        }
        byKey.set(vs.key, seen)
      }
      seen.refs.push(ref)
      mergeConfig(seen, vs, ref, diagnostics)
      // Only a virtual server seen in an earlier listing is compared with it.
      const before = isNew ? null : new Set(seen.realServers.keys())
      const now = new Set<string>()
      for (const rs of vs.realServers) {
        const key = joinHostPort(rs.ip, rs.port, vs.family)
        now.add(key)
        const known = seen.realServers.get(key)
        const rsRef = {path, line: rs.line}
        if (!known) {
          seen.realServers.set(key, {
            ip: rs.ip,
            port: rs.port,
            weight: rs.weight,
            forward: rs.forward,
            refs: [rsRef],
          })
          continue
        }
        known.refs.push(rsRef)
        if (known.weight === null) known.weight = rs.weight
        else if (rs.weight !== null && rs.weight !== known.weight) {
          diagnostics.push(
            diag(
              'warning',
              'IPVS_SOURCES_DISAGREE',
              `real server ${key} of ${vs.key} has weight ${rs.weight} here and ${known.weight} in ${known.refs[0]!.path}:${known.refs[0]!.line}; the dumps were taken at different times`,
              rsRef,
            ),
          )
        }
        known.forward ??= rs.forward
      }
      if (before && (before.size !== now.size || [...before].some((k) => !now.has(k)))) {
        diagnostics.push(
          diag(
            'warning',
            'IPVS_SOURCES_DISAGREE',
            `virtual server ${vs.key} has other real servers here than in ${seen.refs[0]!.path}:${seen.refs[0]!.line}; the dumps were taken at different times, and kp keeps the union`,
            ref,
          ),
        )
      }
    }
  }
  return [...byKey.values()]
}

function mergeConfig(
  seen: VirtualServerSeen,
  vs: IpvsVirtualServer,
  ref: SourceRef,
  diagnostics: Diagnostic[],
): void {
  if (!vs.showsConfig || vs.scheduler === null) return
  if (!seen.configKnown) {
    seen.scheduler = vs.scheduler
    seen.schedulerFlags = vs.schedulerFlags
    seen.persistentTimeout = vs.persistentTimeout
    seen.persistenceMask = vs.persistenceMask
    seen.persistenceEngine = vs.persistenceEngine
    seen.onePacket = vs.onePacket
    seen.configKnown = true
    return
  }
  if (seen.scheduler !== vs.scheduler || seen.persistentTimeout !== vs.persistentTimeout) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_SOURCES_DISAGREE',
        `virtual server ${vs.key} is "${vs.scheduler}${vs.persistentTimeout === null ? '' : ` persistent ${vs.persistentTimeout}`}" here but "${seen.scheduler}${seen.persistentTimeout === null ? '' : ` persistent ${seen.persistentTimeout}`}" in ${seen.refs[0]!.path}:${seen.refs[0]!.line}; the first is kept`,
        ref,
      ),
    )
  }
}

// ---------------------------------------------------------------------------------------------
// 2. What kube-proxy never makes

/** Why kube-proxy cannot have made this virtual server, or null when it could have. */
function foreignReason(vs: VirtualServerSeen): string | null {
  if (vs.fwmark !== null)
    return 'firewall-mark virtual server: kube-proxy never creates one (keepalived, a load balancer on the node, or a hand edit)'
  if (
    vs.protocol === SCHEDULER_PROBE.protocol &&
    vs.ip === SCHEDULER_PROBE.ip &&
    vs.port === SCHEDULER_PROBE.port
  ) {
    return "kube-proxy's scheduler probe (TEST-NET-2 198.51.100.0:20000), left behind by an interrupted start-up"
  }
  const forwards = new Set(
    [...vs.realServers.values()]
      .map((rs) => rs.forward)
      .filter((f): f is string => f !== null && f !== 'Masq'),
  )
  if (forwards.size > 0)
    return `real servers forwarded by ${[...forwards].join(', ')}: kube-proxy always masquerades (Masq)`
  const odd = vs.schedulerFlags.filter((f) => !(vs.scheduler === 'mh' && f === 'mh-port'))
  if (odd.length > 0)
    return `scheduler flags ${odd.join(',')}: kube-proxy sets only mh-port, and only for mh`
  if (vs.persistenceMask !== null)
    return `persistence mask ${vs.persistenceMask}: kube-proxy always persists per client address`
  if (vs.persistenceEngine !== null)
    return `persistence engine ${vs.persistenceEngine}: kube-proxy never sets one`
  if (vs.onePacket) return 'one-packet scheduling (ops): kube-proxy never sets it'
  return null
}

// ---------------------------------------------------------------------------------------------
// 3. Evidence: kube-proxy's ipsets, kube-ipvs0 and the node's addresses

const KNOWN_SET_BASES = [
  'LOOP-BACK',
  'CLUSTER-IP',
  'EXTERNAL-IP',
  'EXTERNAL-IP-LOCAL',
  'LOAD-BALANCER',
  'LOAD-BALANCER-LOCAL',
  'LOAD-BALANCER-FW',
  'LOAD-BALANCER-SOURCE-CIDR',
  'LOAD-BALANCER-SOURCE-IP',
  'NODE-PORT-TCP',
  'NODE-PORT-UDP',
  'NODE-PORT-LOCAL-TCP',
  'NODE-PORT-LOCAL-UDP',
  'NODE-PORT-SCTP-HASH',
  'NODE-PORT-LOCAL-SCTP-HASH',
  // The bitmap:port SCTP sets of releases before PR #81477.
  'NODE-PORT-SCTP',
  'NODE-PORT-LOCAL-SCTP',
  'HEALTH-CHECK-NODE-PORT',
  'IPVS-IPS',
]
const KNOWN_SET_NAMES = new Set(
  KNOWN_SET_BASES.flatMap((b) => [ipvsSetName(b, 'IPv4'), ipvsSetName(b, 'IPv6')]),
)

/** A member of one of kube-proxy's sets, with where it was read (for the rules it classifies). */
interface SetMember extends IpsetMember {
  source: SourceRef
}

interface SetIndex {
  type: string
  all: SetMember[]
  /** `ip|PROTO|port` (or the bare address / port for hash:ip and bitmap:port) → members. */
  byKey: Map<string, SetMember[]>
}

/** kube-proxy's sets of every ipset dump of the node, indexed for lookups by address and port. */
class KubeSets {
  private readonly sets = new Map<string, SetIndex>()

  constructor(dumps: ParsedSource<IpsetDump>[], diagnostics: Diagnostic[]) {
    const unknown = new Set<string>()
    for (const p of dumps) {
      for (const set of p.data.sets) {
        if (!set.name.startsWith(KUBE_CHAIN_PREFIX)) continue
        if (!KNOWN_SET_NAMES.has(set.name)) unknown.add(set.name)
        let index = this.sets.get(set.name)
        if (!index) {
          index = {type: set.type, all: [], byKey: new Map()}
          this.sets.set(set.name, index)
        }
        for (const m of set.members) {
          const key = memberKey(set.type, m)
          if (key === null) continue
          const member = {...m, source: {path: p.source.path, line: m.line}}
          push(index.byKey, key, member)
          index.all.push(member)
        }
      }
    }
    if (unknown.size > 0) {
      diagnostics.push(
        diag(
          'info',
          'IPSET_UNKNOWN_KUBE_SET',
          `KUBE-* sets this kp does not know (another release, or another tool), kept but not used: ${[...unknown].join(', ')}`,
          null,
        ),
      )
    }
  }

  /** Whether the dumps hold kube-proxy's sets for this family at all. */
  known(family: Family): boolean {
    return this.sets.has(ipvsSetName('CLUSTER-IP', family))
  }

  hasSet(base: string, family: Family): boolean {
    return this.sets.has(ipvsSetName(base, family))
  }

  get(base: string, family: Family, key: string): SetMember[] {
    return this.sets.get(ipvsSetName(base, family))?.byKey.get(key) ?? []
  }

  all(base: string, family: Family): SetMember[] {
    return this.sets.get(ipvsSetName(base, family))?.all ?? []
  }
}

function memberKey(type: string, m: IpsetMember): string | null {
  if (type === 'bitmap:port') return m.port === null ? null : String(m.port)
  if (type === 'hash:ip') return m.ip
  if (m.ip === null || m.protocol === null || m.port === null) return null
  return endpointKey(m.ip, m.protocol, m.port)
}

interface Addresses {
  /** Addresses bound to kube-ipvs0 (ip addr) or listed in KUBE-IPVS-IPS. */
  bound: Map<string, SourceRef>
  boundKnown: boolean
  /** The node's own addresses: other interfaces, less loopback and IPv6 link-local (a.2). */
  node: Map<string, SourceRef>
  nodeKnown: boolean
}

/** fe80::/10, as the canonical (lower-case) IPv6 text starts. */
const IPV6_LINK_LOCAL = /^fe[89ab][0-9a-f]?:/

function readAddresses(dumps: ParsedSource<IpAddrDump>[], sets: KubeSets): Addresses {
  const out: Addresses = {bound: new Map(), boundKnown: false, node: new Map(), nodeKnown: false}
  for (const p of dumps) {
    for (const iface of p.data.interfaces) {
      const ref = (line: number) => ({path: p.source.path, line})
      if (iface.name === 'kube-ipvs0') {
        out.boundKnown = true
        for (const a of iface.addresses) out.bound.set(a.ip, ref(a.line))
        continue
      }
      if (iface.name === 'lo') continue
      out.nodeKnown = true
      for (const a of iface.addresses) {
        if (
          a.scope === 'host' ||
          a.ip.startsWith('127.') ||
          a.ip === '::1' ||
          IPV6_LINK_LOCAL.test(a.ip)
        )
          continue
        out.node.set(a.ip, ref(a.line))
      }
    }
  }
  for (const family of ['IPv4', 'IPv6'] as const) {
    if (!sets.hasSet('IPVS-IPS', family)) continue
    out.boundKnown = true
    for (const m of sets.all('IPVS-IPS', family))
      if (m.ip !== null && !out.bound.has(m.ip)) out.bound.set(m.ip, m.source)
  }
  return out
}

function inNodePortRange(port: number): boolean {
  return port >= NODE_PORT_RANGE.min && port <= NODE_PORT_RANGE.max
}

// ---------------------------------------------------------------------------------------------
// 4. Classification of one virtual server

interface ClusterIndex {
  byKey: Map<string, {service: ServicePort; frontend: Frontend}[]>
  key: (ip: string | null, port: number | null, protocol: Protocol) => string
}

function classify(
  vs: KubeVirtualServer,
  sets: KubeSets,
  addrs: Addresses,
  cluster: ClusterIndex | null,
  nodePortOnlyAddresses: Set<string>,
  diagnostics: Diagnostic[],
): Classified | {foreign: string} {
  const refs = (members: SetMember[]) => members.map((m) => m.source)
  const key = endpointKey(vs.ip, vs.protocol, vs.port)
  const base: Omit<Classified, 'type' | 'evidence'> = {
    vs,
    local: null,
    sourceRanges: [],
    evidenceRefs: [],
    clusterService: null,
  }

  // The node's ipsets say what kube-proxy programmed on this node (a.4).
  let fromSets: Classified | null = null
  if (sets.known(vs.family)) {
    const f = vs.family
    const hit = (setBase: string) => sets.get(setBase, f, key)
    const clusterIp = hit('CLUSTER-IP')
    const extCluster = hit('EXTERNAL-IP')
    const extLocal = hit('EXTERNAL-IP-LOCAL')
    const lb = hit('LOAD-BALANCER')
    if (clusterIp.length > 0)
      fromSets = {...base, type: 'ClusterIP', evidence: 'ipset', evidenceRefs: refs(clusterIp)}
    else if (extCluster.length > 0 || extLocal.length > 0) {
      fromSets = {
        ...base,
        type: 'ExternalIP',
        local: extLocal.length > 0,
        evidence: 'ipset',
        evidenceRefs: refs([...extCluster, ...extLocal]),
      }
    } else if (lb.length > 0) {
      const local = hit('LOAD-BALANCER-LOCAL')
      const fw = hit('LOAD-BALANCER-FW')
      const cidrs = fw.length > 0 ? hit('LOAD-BALANCER-SOURCE-CIDR') : []
      fromSets = {
        ...base,
        type: 'LoadBalancer',
        local: local.length > 0,
        sourceRanges: [
          ...new Set(cidrs.map((m) => m.third).filter((c): c is string => c !== null)),
        ],
        evidence: 'ipset',
        evidenceRefs: refs([...lb, ...local, ...fw, ...cidrs]),
      }
    } else if (!addrs.bound.has(vs.ip)) {
      // NodePorts: a port bitmap per protocol for TCP/UDP, an ip,port hash for SCTP (a.4).
      let np: SetMember[]
      let npLocal: SetMember[]
      if (vs.protocol === 'SCTP') {
        np = [...hit('NODE-PORT-SCTP-HASH'), ...sets.get('NODE-PORT-SCTP', f, String(vs.port))]
        npLocal = [
          ...hit('NODE-PORT-LOCAL-SCTP-HASH'),
          ...sets.get('NODE-PORT-LOCAL-SCTP', f, String(vs.port)),
        ]
      } else {
        np = sets.get(`NODE-PORT-${vs.protocol}`, f, String(vs.port))
        npLocal = sets.get(`NODE-PORT-LOCAL-${vs.protocol}`, f, String(vs.port))
      }
      if (np.length > 0 || npLocal.length > 0)
        fromSets = {
          ...base,
          type: 'NodePort',
          local: npLocal.length > 0,
          evidence: 'ipset',
          evidenceRefs: refs([...np, ...npLocal]),
        }
    }
  }

  if (cluster) {
    const exact = cluster.byKey.get(cluster.key(vs.ip, vs.port, vs.protocol)) ?? []
    const nodePort =
      exact.length > 0
        ? []
        : (cluster.byKey.get(cluster.key(null, vs.port, vs.protocol)) ?? []).filter(
            (m) => m.frontend.type === 'NodePort' && m.service.family === vs.family,
          )
    const matches = exact.length > 0 ? exact : nodePort
    const match = matches[0]
    if (matches.length > 1) {
      const names = matches.map(
        (m) => `${m.service.namespace}/${m.service.name}:${m.service.portName}`,
      )
      diagnostics.push(
        diag(
          'warning',
          'IPVS_CLUSTER_AMBIGUOUS',
          `virtual server ${vs.key} is a frontend of several Services in the cluster objects (${names.join(', ')}); it is named after the first`,
          vs.refs[0] ?? null,
        ),
      )
    }
    if (match) {
      const external = match.frontend.type !== 'ClusterIP'
      const clusterLocal =
        external && match.service.externalTrafficPolicy !== null
          ? match.service.externalTrafficPolicy === 'Local'
          : null
      return {
        ...base,
        // The node's own ipsets, when they classify it, say what is programmed; the cluster names it.
        type: fromSets?.type ?? match.frontend.type,
        local: fromSets ? fromSets.local : clusterLocal,
        sourceRanges: fromSets ? fromSets.sourceRanges : [...match.frontend.sourceRanges],
        evidence: fromSets ? 'ipset' : 'cluster',
        evidenceRefs: fromSets?.evidenceRefs ?? [],
        clusterService: match.service,
      }
    }
  }
  if (fromSets) return fromSets
  if (sets.known(vs.family)) {
    return {
      foreign: `${vs.protocol} ${joinHostPort(vs.ip, vs.port, vs.family)} is in none of kube-proxy's ipsets (KUBE-CLUSTER-IP, KUBE-EXTERNAL-IP, KUBE-LOAD-BALANCER, KUBE-NODE-PORT-*)`,
    }
  }

  // Without ipsets: kube-ipvs0 holds every ClusterIP, externalIP and LB IP (a.2), and NodePorts
  // listen on the node's own addresses.
  if (addrs.boundKnown || addrs.nodeKnown) {
    const bound = addrs.bound.get(vs.ip)
    if (bound) return {...base, type: 'ClusterIP', evidence: 'ip-addr', evidenceRefs: [bound]}
    const nodeAddr = addrs.node.get(vs.ip)
    // A node address also carries keepalived's or kube-vip's virtual servers (kube-vip: the
    // apiserver port 6443); only a port of the default NodePort range makes it kube-proxy's here.
    if (nodeAddr && inNodePortRange(vs.port))
      return {...base, type: 'NodePort', evidence: 'ip-addr', evidenceRefs: [nodeAddr]}
    if (nodeAddr) {
      return {
        foreign: `on the node address ${vs.ip}, but port ${vs.port} is outside the default NodePort range ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max} (with another --service-node-port-range, \`ipset save\` or --cluster tells)`,
      }
    }
    if (addrs.nodeKnown)
      return {
        foreign: `address ${vs.ip} is neither bound to kube-ipvs0 nor one of the node's addresses`,
      }
    if (!inNodePortRange(vs.port))
      return {
        foreign: `address ${vs.ip} is not bound to kube-ipvs0, and port ${vs.port} is outside the NodePort range ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}`,
      }
    return {...base, type: 'NodePort', evidence: 'guess'}
  }

  // Nothing but ipvsadm. Most virtual servers of a node are ClusterIPs (one per Service port;
  // externalIPs and LB IPs are few), and 'External' in the model means "an externalIP or an LB
  // IP", which would be wrong for every one of them. So a virtual server is shown as ClusterIP,
  // unless its address serves only ports of the default NodePort range (then it is taken for a
  // node address), and the IPVS_UNCLASSIFIED warning says that this is a guess.
  return {
    ...base,
    type: nodePortOnlyAddresses.has(vs.ip) ? 'NodePort' : 'ClusterIP',
    evidence: 'guess',
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Grouping virtual servers into service ports

interface Group {
  members: Classified[]
  clusterService: ServicePort | null
}

/** Real servers that take new connections: weight-0 ones drain per virtual server (a.6), so they are left out of the comparison. */
function activeSet(vs: VirtualServerSeen): string[] {
  const out: string[] = []
  for (const [key, rs] of vs.realServers) if (rs.weight !== 0) out.push(key)
  return out.sort()
}

/**
 * The ClusterIP virtual servers that NodePort / externalIP / LB virtual servers fold into,
 * indexed so that each fold is a lookup, not a scan of every service (thousands on a big node).
 */
class AnchorIndex {
  /** `PROTO family rs1,rs2,...` (active real servers, sorted) → groups. */
  private readonly bySignature = new Map<string, Group[]>()
  /** `PROTO family rs` → groups whose active real servers include rs. */
  private readonly byRealServer = new Map<string, Group[]>()
  private readonly active = new Map<Group, Set<string>>()

  add(g: Group): void {
    const vs = g.members[0]!.vs
    const active = activeSet(vs)
    this.active.set(g, new Set(active))
    push(this.bySignature, `${vs.protocol} ${vs.family} ${active.join(',')}`, g)
    for (const rs of active) push(this.byRealServer, `${vs.protocol} ${vs.family} ${rs}`, g)
  }

  /** Anchors with exactly these active real servers. */
  same(vs: KubeVirtualServer, active: string[]): Group[] {
    return this.bySignature.get(`${vs.protocol} ${vs.family} ${active.join(',')}`) ?? []
  }

  /** Anchors whose active real servers include all of these (none when the list is empty). */
  superset(vs: KubeVirtualServer, active: string[]): Group[] {
    if (active.length === 0) return []
    const withFirst = this.byRealServer.get(`${vs.protocol} ${vs.family} ${active[0]}`) ?? []
    return withFirst.filter((g) => active.every((rs) => this.active.get(g)!.has(rs)))
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

function groupVirtualServers(classified: Classified[], diagnostics: Diagnostic[]): Group[] {
  const groups: Group[] = []
  const byCluster = new Map<ServicePort, Group>()
  const anchors = new AnchorIndex()
  const pending: Classified[][] = []
  const nodePortUnits = new Map<string, Classified[]>()

  for (const c of classified) {
    if (c.clusterService) {
      let g = byCluster.get(c.clusterService)
      if (!g) {
        g = {members: [], clusterService: c.clusterService}
        byCluster.set(c.clusterService, g)
        groups.push(g)
      }
      g.members.push(c)
    } else if (c.type === 'ClusterIP') {
      const g = {members: [c], clusterService: null}
      anchors.add(g)
      groups.push(g)
    } else if (c.type === 'NodePort') {
      // One NodePort frontend per (protocol, family, nodePort): the same port on every node address.
      const key = `${c.vs.protocol} ${c.vs.family} ${c.vs.port}`
      const unit = nodePortUnits.get(key)
      if (unit) unit.push(c)
      else {
        const u = [c]
        nodePortUnits.set(key, u)
        pending.push(u)
      }
    } else pending.push([c])
  }

  for (const unit of pending) {
    const first = unit[0]!
    const active = activeSet(first.vs)
    // externalIPs and LB IPs use the service port itself (a.3); a NodePort has its own port.
    const portFits = (g: Group) =>
      first.type === 'NodePort' || g.members[0]!.vs.port === first.vs.port
    let matches = anchors.same(first.vs, active).filter(portFits)
    // A Local policy keeps only this node's endpoints (a.3): a subset of the ClusterIP's.
    if (matches.length === 0 && first.local !== false)
      matches = anchors.superset(first.vs, active).filter(portFits)
    const what =
      first.type === 'NodePort'
        ? `NodePort ${first.vs.port}/${first.vs.protocol}`
        : `${first.type} ${first.vs.key}`
    if (matches.length === 1) {
      pushAll(matches[0]!.members, unit)
      continue
    }
    const why =
      matches.length === 0
        ? 'no ClusterIP virtual server has the same protocol and real servers'
        : `${matches.length} ClusterIP virtual servers have the same protocol and real servers (${matches.map((g) => g.members[0]!.vs.key).join(', ')})`
    diagnostics.push(
      diag(
        'warning',
        'IPVS_UNFOLDED',
        `${what}: ${why}, so kp cannot tell which service port it belongs to; it is listed as a service port of its own`,
        first.vs.refs[0] ?? null,
      ),
    )
    groups.push({members: unit, clusterService: null})
  }
  return groups
}

// ---------------------------------------------------------------------------------------------
// 6. A ServicePort per group

function actionOf(vs: VirtualServerSeen): Frontend['action'] {
  const weights = [...vs.realServers.values()].map((rs) => rs.weight)
  if (weights.length > 0 && weights.some((w) => w === null || w > 0)) return 'forward'
  // No real server, or all draining: the kernel answers with ICMP port unreachable (ip_vs_leave, docs/ipvs-layouts.md (d), caveat 15).
  return 'reject'
}

function toServicePort(group: Group, sets: KubeSets, diagnostics: Diagnostic[]): ServicePort {
  const members = group.members
  const primary = members.find((m) => m.type === 'ClusterIP') ?? members[0]!
  const vs = primary.vs
  const cs = group.clusterService
  const frontends: Frontend[] = []
  const nodePorts = new Map<number, Classified[]>()
  for (const m of members) {
    if (m.type === 'NodePort') {
      const list = nodePorts.get(m.vs.port)
      if (list) list.push(m)
      else nodePorts.set(m.vs.port, [m])
      continue
    }
    frontends.push({
      type: m.type,
      ip: m.vs.ip,
      port: m.vs.port,
      sourceRanges: m.sourceRanges,
      action: actionOf(m.vs),
    })
  }
  for (const [port, list] of nodePorts) {
    // A NodePort listens on every node address kube-proxy chose; the addresses go to node.nodePortAddresses.
    const actions = new Set(list.map((m) => actionOf(m.vs)))
    frontends.push({
      type: 'NodePort',
      ip: null,
      port,
      sourceRanges: [],
      action: actions.has('forward') ? 'forward' : 'reject',
    })
  }

  const schedulers = new Set(
    members.map((m) => m.vs.scheduler).filter((s): s is string => s !== null),
  )
  if (schedulers.size > 1) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_MIXED_SCHEDULERS',
        `the virtual servers of ${vs.key} use different schedulers (${[...schedulers].join(', ')}); kube-proxy uses one for all`,
        vs.refs[0] ?? null,
      ),
    )
  }

  // Endpoints: the ClusterIP virtual server's real servers, then any only the others have.
  const loopbackKnown = sets.hasSet('LOOP-BACK', vs.family)
  const clusterEndpoints = new Map(
    (cs?.endpoints ?? []).map((e) => [joinHostPort(e.ip, e.port, vs.family), e]),
  )
  const endpoints = new Map<string, Endpoint>()
  const rules: SourceRef[] = []
  for (const m of [primary, ...members.filter((x) => x !== primary)]) {
    pushAll(rules, m.vs.refs)
    pushAll(rules, m.evidenceRefs)
    for (const [key, rs] of m.vs.realServers) {
      pushAll(rules, rs.refs)
      if (endpoints.has(key)) continue
      const fromCluster = clusterEndpoints.get(key)
      // KUBE-LOOP-BACK holds every node-local endpoint as ip,proto:port,ip (a.4).
      const local = loopbackKnown
        ? sets.get('LOOP-BACK', vs.family, endpointKey(rs.ip, vs.protocol, rs.port)).length > 0
        : (fromCluster?.local ?? null)
      let state: Endpoint['state'] =
        rs.weight === 0 ? 'draining' : rs.weight === null ? null : 'ready'
      // Weight 1 is both a ready endpoint and a serving-terminating fallback (a.3); only the cluster tells.
      if (state === 'ready' && fromCluster?.state === 'serving-terminating')
        state = 'serving-terminating'
      if (state === null && fromCluster) state = fromCluster.state
      endpoints.set(key, {
        ip: rs.ip,
        port: rs.port,
        local,
        share: rs.weight === 0 ? 0 : null,
        weight: rs.weight,
        state,
      })
    }
  }

  const externals = members.filter((m) => m.type !== 'ClusterIP')
  let externalTrafficPolicy: TrafficPolicy | null = null
  if (externals.some((m) => m.local === true)) externalTrafficPolicy = 'Local'
  else if (externals.length > 0 && externals.every((m) => m.local === false))
    externalTrafficPolicy = 'Cluster'
  else externalTrafficPolicy = cs?.externalTrafficPolicy ?? null

  return {
    namespace: cs?.namespace ?? null,
    name: cs?.name ?? null,
    portName: cs?.portName ?? null,
    protocol: vs.protocol,
    family: vs.family,
    frontends,
    // Not observable on the node (KUBE-HEALTH-CHECK-NODE-PORT does not say whose port it is), nor
    // internalTrafficPolicy: taken from the cluster objects when --cluster names the service.
    healthCheckNodePort: cs?.healthCheckNodePort ?? null,
    internalTrafficPolicy: cs?.internalTrafficPolicy ?? null,
    externalTrafficPolicy,
    sessionAffinity:
      vs.persistentTimeout === null
        ? null
        : {type: 'ClientIP', timeoutSeconds: vs.persistentTimeout},
    scheduler: vs.scheduler,
    endpoints: [...endpoints.values()],
    rules: uniqueSourceRefs(rules),
  }
}

// ---------------------------------------------------------------------------------------------

/** The sources of one node an IPVS-mode state is read from. */
const IPVS_NODE_FORMATS: ReadonlySet<string> = new Set([
  'ipvsadm',
  'ipset',
  'ip-addr',
  'iptables-save',
])

/**
 * Builds the IPVS-mode ProxyState of one node from its parsed ipvsadm, ipset, ip-addr and
 * iptables-save sources (and `opts.cluster` for names). Never throws on bad input.
 */
export async function buildIpvsState(
  parsed: ParsedSource[],
  opts: ReadOptions,
): Promise<ProxyState> {
  const state = emptyState('ipvs')
  const diagnostics = state.diagnostics
  const of = <T>(format: ParsedSource['format']) =>
    parsed.filter(
      (p) => p.format === format && p.data !== null && p.data !== undefined,
    ) as ParsedSource<T>[]
  const listings = of<IpvsadmListing>('ipvsadm')
  const sets = new KubeSets(of<IpsetDump>('ipset'), diagnostics)
  const addrs = readAddresses(of<IpAddrDump>('ip-addr'), sets)
  state.node.name = opts.node ?? null
  for (const p of parsed) {
    if (IPVS_NODE_FORMATS.has(p.format)) continue
    // Not dropped without a word: cluster objects have their own flag, other dumps their own mode.
    const instead =
      p.format === 'kube'
        ? ' (cluster objects name IPVS virtual servers when given with --cluster)'
        : ''
    diagnostics.push(
      diag(
        'warning',
        'IPVS_WRONG_SOURCE',
        `${p.source.path} is ${p.format} input, which an IPVS-mode state does not read; ignored${instead}`,
        {path: p.source.path, line: 1},
      ),
    )
  }

  for (const p of of<IptablesRuleset>('iptables-save')) applyIptablesFacts(state, p, diagnostics)

  let cluster: ClusterIndex | null = null
  if (opts.cluster && opts.cluster.length > 0) {
    const kube = await import('../kube/build.js')
    const expected = kube.readClusterSources(opts.cluster, {mode: 'ipvs', node: opts.node})
    pushAll(diagnostics, expected.diagnostics)
    cluster = {byKey: kube.indexFrontends(expected.services), key: kube.frontendKey}
  }

  if (listings.length === 0) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_NO_LISTING',
        'no ipvsadm listing among the inputs: ipsets, kube-ipvs0 and iptables rules do not say which real servers a service has; add `ipvsadm -Ln` (or `-Sn`) of the same node',
        null,
      ),
    )
  }

  const merged = mergeListings(listings, diagnostics)
  const kubeVs: KubeVirtualServer[] = []
  for (const vs of merged) {
    const reason = foreignReason(vs)
    if (reason !== null || vs.protocol === null || vs.ip === null || vs.port === null) {
      state.foreign.push(foreignVs(vs, reason ?? 'not a kube-proxy virtual server'))
      continue
    }
    kubeVs.push(vs as KubeVirtualServer)
  }

  // For the last-resort guess only: addresses whose every virtual server is on a NodePort-range port.
  const nodePortOnly = new Map<string, boolean>()
  for (const vs of kubeVs)
    nodePortOnly.set(vs.ip, (nodePortOnly.get(vs.ip) ?? true) && inNodePortRange(vs.port))
  const nodePortOnlyAddresses = new Set(
    [...nodePortOnly].filter(([, only]) => only).map(([ip]) => ip),
  )

  const classified: Classified[] = []
  for (const vs of kubeVs) {
    const c = classify(vs, sets, addrs, cluster, nodePortOnlyAddresses, diagnostics)
    if ('foreign' in c) state.foreign.push(foreignVs(vs, c.foreign))
    else classified.push(c)
  }
  reportEvidence(classified, cluster !== null, diagnostics)
  if (listings.length > 0) reportSetsWithoutVirtualServers(kubeVs, sets, diagnostics)

  const groups = groupVirtualServers(classified, diagnostics)
  state.services = groups.map((g) => toServicePort(g, sets, diagnostics))

  reportHealthCheckPorts(state.services, sets, diagnostics)

  const nodePortAddresses = [
    ...new Set(classified.filter((c) => c.type === 'NodePort').map((c) => c.vs.ip)),
  ]
  if (nodePortAddresses.length > 0) state.node.nodePortAddresses = nodePortAddresses
  return state
}

function foreignVs(vs: VirtualServerSeen, reason: string): ForeignObject {
  return {kind: 'ipvs-virtual-server', name: vs.key, reason, source: vs.refs[0] ?? null}
}

/** One diagnostic per kind of weak evidence, so that an operator knows which parts are guessed. */
function reportEvidence(
  classified: Classified[],
  withCluster: boolean,
  diagnostics: Diagnostic[],
): void {
  const guessed = classified.filter((c) => c.evidence === 'guess')
  if (guessed.length > 0) {
    const np = guessed.filter((c) => c.type === 'NodePort').length
    diagnostics.push(
      diag(
        'warning',
        'IPVS_UNCLASSIFIED',
        `${guessed.length} virtual server(s) are classified by a guess: without \`ipset save\` or --cluster kp cannot tell a ClusterIP from an externalIP or LoadBalancer IP, nor, without the node's \`ip addr\` too, a NodePort. ` +
          `They are shown as ClusterIP${np > 0 ? `, except ${np} on addresses that serve only ports ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}, shown as NodePort` : ''}; traffic policies are unknown (null)`,
        guessed[0]!.vs.refs[0] ?? null,
      ),
    )
  }
  const bound = classified.filter((c) => c.evidence === 'ip-addr' && c.type === 'ClusterIP')
  if (bound.length > 0) {
    diagnostics.push(
      diag(
        'info',
        'IPVS_BOUND_ADDRESS_TYPE',
        `${bound.length} virtual server(s) on kube-ipvs0 addresses are shown as ClusterIP: kube-ipvs0 also holds externalIPs and LoadBalancer IPs, which only \`ipset save\` or --cluster tell apart`,
        bound[0]!.vs.refs[0] ?? null,
      ),
    )
  }
  if (withCluster) {
    for (const c of classified) {
      if (c.clusterService === null) {
        diagnostics.push(
          diag(
            'warning',
            'IPVS_NOT_IN_CLUSTER',
            `virtual server ${c.vs.key} matches no Service in the cluster objects (a stale virtual server, or cluster objects of another time or cluster)`,
            c.vs.refs[0] ?? null,
          ),
        )
      }
    }
  }
}

/**
 * Every entry of the address sets and every NodePort has a virtual server (a.3, a.4); one that
 * does not means the dumps were taken at different times, or the listing is partial (`-t`).
 */
function reportSetsWithoutVirtualServers(
  kubeVs: KubeVirtualServer[],
  sets: KubeSets,
  diagnostics: Diagnostic[],
): void {
  const addresses = new Set(kubeVs.map((vs) => endpointKey(vs.ip, vs.protocol, vs.port)))
  const nodePorts = new Set(kubeVs.map((vs) => `${vs.family} ${vs.protocol} ${vs.port}`))
  for (const family of ['IPv4', 'IPv6'] as const) {
    if (!sets.known(family)) continue
    const report = (base: string, missing: SetMember[]) => {
      if (missing.length === 0) return
      const shown = missing
        .slice(0, 5)
        .map((m) => m.text)
        .join(', ')
      diagnostics.push(
        diag(
          'warning',
          'IPVS_SET_WITHOUT_VIRTUAL_SERVER',
          `${missing.length} entr${missing.length === 1 ? 'y' : 'ies'} of ${ipvsSetName(base, family)} ha${missing.length === 1 ? 's' : 've'} no virtual server (${shown}${missing.length > 5 ? ', ...' : ''}): the dumps were taken at different times, or the ipvsadm listing is partial`,
          missing[0]!.source,
        ),
      )
    }
    for (const base of [
      'CLUSTER-IP',
      'EXTERNAL-IP',
      'EXTERNAL-IP-LOCAL',
      'LOAD-BALANCER',
      'NODE-PORT-SCTP-HASH',
    ]) {
      report(
        base,
        sets
          .all(base, family)
          .filter(
            (m) =>
              m.ip !== null &&
              m.protocol !== null &&
              m.port !== null &&
              !addresses.has(endpointKey(m.ip, m.protocol, m.port)),
          ),
      )
    }
    for (const protocol of ['TCP', 'UDP'] as const) {
      report(
        `NODE-PORT-${protocol}`,
        sets
          .all(`NODE-PORT-${protocol}`, family)
          .filter((m) => m.port !== null && !nodePorts.has(`${family} ${protocol} ${m.port}`)),
      )
    }
  }
}

/**
 * KUBE-HEALTH-CHECK-NODE-PORT holds bare ports: no IPVS-mode dump says whose they are, so they
 * reach a service port only through --cluster. The others are said, not dropped.
 */
function reportHealthCheckPorts(
  services: ServicePort[],
  sets: KubeSets,
  diagnostics: Diagnostic[],
): void {
  const attributed = new Set(services.map((sp) => sp.healthCheckNodePort))
  for (const family of ['IPv4', 'IPv6'] as const) {
    const orphans = sets
      .all('HEALTH-CHECK-NODE-PORT', family)
      .filter((m) => !attributed.has(m.port))
    if (orphans.length === 0) continue
    diagnostics.push(
      diag(
        'info',
        'IPVS_HEALTH_CHECK_PORTS',
        `${ipvsSetName('HEALTH-CHECK-NODE-PORT', family)} holds healthCheckNodePort(s) ${orphans.map((m) => m.text).join(', ')}; the IPVS dumps do not say whose (--cluster does)`,
        orphans[0]!.source,
      ),
    )
  }
}

function applyIptablesFacts(
  state: ProxyState,
  p: ParsedSource<IptablesRuleset>,
  diagnostics: Diagnostic[],
): void {
  const facts = readIpvsIptablesFacts(p.data)
  const node = state.node
  node.masqueradeMark ??= facts.masqueradeMark
  node.randomFully ??= facts.randomFully
  node.masqueradeAll ??= facts.masqueradeAll
  node.localDetector ??= facts.localDetector
  node.localInterface ??= facts.localInterface
  for (const cidr of facts.podCIDRs) if (!node.podCIDRs.includes(cidr)) node.podCIDRs.push(cidr)
  if (!facts.ipvsMode) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_IPTABLES_NOT_IPVS_MODE',
        "this iptables dump has none of IPVS mode's chains (KUBE-IPVS-FILTER, KUBE-NODE-PORT, KUBE-LOAD-BALANCER); it may be of another node or mode",
        {path: p.source.path, line: 1},
      ),
    )
  }
  for (const chain of facts.iptablesModeChains) {
    state.foreign.push({
      kind: 'leftover',
      name: `${chain.table} ${chain.name}`,
      reason:
        'an iptables-mode chain on an IPVS-mode node: left over from a mode switch, or kube-proxy runs in iptables mode',
      source: {path: p.source.path, line: chain.line},
    })
  }
  // Copies of one rule show a node with two iptables versions or backends as in iptables mode;
  // the leftover iptables-mode chains above are left out, as that reader leaves out its own.
  const warn = (code: DiagnosticCode, message: string, line: number): void => {
    diagnostics.push(diag('warning', code, message, {path: p.source.path, line}))
  }
  for (const table of p.data.tables.values()) {
    for (const chain of table.chains.values()) {
      if (chain.ruleCount < 2 || chain.deletedLine !== null || iptablesModeChain(chain.name))
        continue
      const copies: RuleCopies = new Map()
      for (let i = 0; i < chain.ruleCount; i++) countRuleCopy(copies, chain.ruleAt(i))
      reportRuleCopies(copies, table, chain, warn)
    }
  }
}
