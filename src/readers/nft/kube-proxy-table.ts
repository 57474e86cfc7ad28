/**
 * Reads one `ip kube-proxy` / `ip6 kube-proxy` table into service ports
 * (docs/kube-proxy-layouts.md §3 and §5).
 *
 * Services come from the map and set elements, never from chains alone: `service-ips`,
 * `service-nodeports`, `no-endpoint-services`, `no-endpoint-nodeports` and `firewall-ips`
 * name every frontend. The per-service chains they point at add policies, endpoints, affinity
 * and source ranges. Chains nothing points at are leftovers: kube-proxy flushes the chains of a
 * deleted service and deletes them a sync later (§3.5, fixtures/nft/upstream-syncrepeated-
 * stalechains), so an empty one is an info diagnostic and a non-empty one a warning.
 *
 * The layouts read:
 * * endpoint chains behind `numgen random mod N vmap { 0 : goto endpoint-... }` with
 *   `jump mark-for-masquerade` (fixtures/nft/upstream-overall), with or without `P dport PORT`
 *   in the ClusterIP masquerade rule (older revision);
 * * the newest layout, where the service chain DNATs directly: `dnat ip to numgen random mod N
 *   map { 0 : IP . PORT , ... }` or `dnat to IP:PORT`, the ClusterIP masquerade rule sits in the
 *   `services` chain and sets the mark itself (fixtures/nft/newest-inline-dnat);
 * * in both, ClientIP affinity keeps endpoint chains: `ip saddr @affinity-X goto endpoint-X` in
 *   the service chain and `update @affinity-X { ip saddr }` in the endpoint chain, the timeout
 *   on the affinity set (`timeout 10800s` in transactions, `timeout 3h` in nft list).
 */
import {pushAll} from '../../core/arrays.js'
import {parsePort, splitHostPort, toCidr} from '../../core/address.js'
import type {
  Endpoint,
  Family,
  Frontend,
  FrontendAction,
  Protocol,
  ServicePort,
  SourceRef,
  TrafficPolicy,
} from '../../model/types.js'
import {FrontendIndex} from './frontends.js'
import {
  CLUSTER_IPS_SET,
  FIREWALL_IPS_MAP,
  MARK_FOR_MASQUERADE_CHAIN,
  MASQUERADING_CHAIN,
  nftNameHash,
  nftNameHashIs,
  NO_ENDPOINT_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  NODEPORT_IPS_SET,
  NFT_PER_SERVICE_PREFIXES,
  type PerServicePrefix,
  REJECT_CHAIN,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  SERVICES_CHAIN,
} from '../../kube-proxy/nftables-names.js'
import type {NftChain, NftElement, NftRule, NftSet, NftTable} from './ir.js'
import type {NodeFacts} from './node-facts.js'
import type {Reporter} from './reporter.js'
import {
  addressMatch,
  hasSequence,
  interfaceMatch,
  markSetOr,
  protocolOf,
  verdictOf,
} from './words.js'

type ChainPrefix = PerServicePrefix
const PREFIXES = NFT_PER_SERVICE_PREFIXES

/**
 * A per-service object name `PREFIX-HASH8-ns/svc/proto/port[__IP/PORT]` taken apart. The parts
 * are cut out when asked: a large dump has 100,000+ such names, each taken apart twice or
 * more, and most parts are never looked at.
 */
export class PerServiceName {
  constructor(
    readonly full: string,
    readonly prefix: ChainPrefix,
    /** Where the hash starts (after `PREFIX-`). */
    private readonly hashAt: number,
    /** Where `__` is, or -1. */
    private readonly sep: number,
    /** The three slashes of `ns/svc/proto/portName`. */
    private readonly slashes: readonly [number, number, number],
  ) {}

  get hash(): string {
    return this.full.slice(this.hashAt, this.hashAt + 8)
  }

  /** What the hash was computed over: everything after `HASH8-`. */
  get hashed(): string {
    return this.full.slice(this.hashAt + 9)
  }

  /** `ns/svc/proto/portName`. */
  get base(): string {
    return this.sep < 0
      ? this.full.slice(this.hashAt + 9)
      : this.full.slice(this.hashAt + 9, this.sep)
  }

  get namespace(): string {
    return this.full.slice(this.hashAt + 9, this.slashes[0])
  }

  get name(): string {
    return this.full.slice(this.slashes[0] + 1, this.slashes[1])
  }

  get protocol(): string {
    return this.full.slice(this.slashes[1] + 1, this.slashes[2])
  }

  get portName(): string {
    return this.sep < 0
      ? this.full.slice(this.slashes[2] + 1)
      : this.full.slice(this.slashes[2] + 1, this.sep)
  }

  /** `IP/PORT` of an endpoint or affinity name (IPv6 with `.` for `:`); null otherwise. */
  get endpointPart(): string | null {
    return this.sep < 0 ? null : this.full.slice(this.sep + 2)
  }

  get truncated(): boolean {
    return this.full.endsWith('...')
  }
}

function isBase32(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i)
    if (!((c >= 65 && c <= 90) || (c >= 50 && c <= 55))) return false
  }
  return true
}

export function parsePerServiceName(full: string): PerServiceName | null {
  const dash = full.indexOf('-')
  if (dash < 0) return null
  let prefix: ChainPrefix | undefined
  for (const p of PREFIXES) if (p.length === dash && full.startsWith(p)) prefix = p
  if (prefix === undefined || full.charCodeAt(dash + 9) !== 45) return null
  if (!isBase32(full, dash + 1, dash + 9)) return null
  const hashedAt = dash + 10
  // A name with "/" is always a per-service object (§3.6); kube-proxy's own names have none.
  if (full.indexOf('/', hashedAt) < 0) return null
  const sep = full.indexOf('__', hashedAt)
  const baseEnd = sep < 0 ? full.length : sep
  // ns/svc/proto/portName: exactly three slashes.
  const slash1 = full.indexOf('/', hashedAt)
  const slash2 = full.indexOf('/', slash1 + 1)
  const slash3 = slash2 < 0 ? -1 : full.indexOf('/', slash2 + 1)
  if (slash1 >= baseEnd || slash2 < 0 || slash2 >= baseEnd || slash3 < 0 || slash3 >= baseEnd)
    return null
  const slash4 = full.indexOf('/', slash3 + 1)
  if (slash4 >= 0 && slash4 < baseEnd) return null
  return new PerServiceName(full, prefix, dash + 1, sep, [slash1, slash2, slash3])
}

interface ServiceAcc {
  key: string
  namespace: string | null
  name: string | null
  portName: string | null
  protocol: Protocol
  /** Keyed `IP|port` for address frontends, `*|port` for NodePorts. */
  frontends: Map<string, Frontend>
  /** The chain the ClusterIP's service-ips element points at (service-B or local-B). */
  internalChain: string | null
  /** service-B and local-B chains something points at. */
  clusterChain: string | null
  localChain: string | null
  externalChain: string | null
  firewallChains: Set<string>
  itp: TrafficPolicy | null
  etp: TrafficPolicy | null
  affinityTimeout: number | null | undefined
  rules: SourceRef[]
}

interface SelectedEndpoint {
  ip: string
  port: number | null
  share: number
}

export class KubeProxyTableReader {
  private readonly services = new Map<string, ServiceAcc>()
  /** `IP|proto|port` and `*|proto|port` -> the service that owns that frontend. */
  private readonly byFrontend = new FrontendIndex<ServiceAcc>()
  /** Names of sets, and of chains not in the table, something points at (chains that are: NftChain.pointedAt). */
  private readonly used = new Set<string>()
  private readonly clusterIps: Set<string> | null
  private readonly family: Family

  constructor(
    private readonly table: NftTable,
    private readonly path: string,
    private readonly facts: NodeFacts,
    private readonly reporter: Reporter,
  ) {
    this.family = table.family === 'ip6' ? 'IPv6' : 'IPv4'
    const cips = table.sets.get(CLUSTER_IPS_SET)
    this.clusterIps = cips ? new Set(cips.elements.map((e) => e.key[0]!)) : null
  }

  private ref(line: number): SourceRef {
    return {path: this.path, line}
  }

  read(): ServicePort[] {
    this.checkNames()
    this.readTopLevelChains()
    this.readServiceIps()
    this.readNodePorts()
    this.readNoEndpoints(NO_ENDPOINT_SERVICES_MAP, false)
    this.readNoEndpoints(NO_ENDPOINT_NODEPORTS_MAP, true)
    this.readFirewallIps()
    const out: ServicePort[] = []
    for (const acc of this.services.values()) out.push(this.finishService(acc))
    this.reportLeftovers()
    return out
  }

  /**
   * One pass over chain and set names: per-service names, with their hashes checked (§3.6).
   * The names taken apart are not kept (120,000 of them in a large dump): the few later
   * lookups take the name apart again.
   */
  private checkNames(): void {
    const check = (objName: string, line: number): void => {
      const p = parsePerServiceName(objName)
      if (!p) return
      if (p.truncated) {
        this.reporter.report(
          'info',
          'NFT_NAME_TRUNCATED',
          `${objName}: a truncated name (over 240 characters); its hash cannot be checked`,
          this.ref(line),
        )
        return
      }
      if (!nftNameHashIs(p.hashed, p.hash)) {
        const want = nftNameHash(p.hashed)
        this.reporter.report(
          'warning',
          'NFT_HASH_MISMATCH',
          `${objName}: kube-proxy would name this ${p.prefix}-${want}-${p.hashed}; the hash ${p.hash} does not match (hand-edited or not made by kube-proxy)`,
          this.ref(line),
        )
      }
    }
    for (const chain of this.table.chains.values()) check(chain.name, chain.line)
    for (const set of this.table.sets.values()) check(set.name, set.line)
  }

  /** A per-service name a verdict points at; also for chains missing from a truncated dump. */
  private nameOf(target: string): PerServiceName | undefined {
    return parsePerServiceName(target) ?? undefined
  }

  private serviceFor(p: PerServiceName, protocol: Protocol, line: number): ServiceAcc {
    let acc = this.services.get(p.base)
    if (!acc) {
      acc = this.newAcc(p.base, p.namespace, p.name, p.portName, protocol)
      const nameProto = protocolOf(p.protocol)
      if (nameProto !== protocol) {
        this.reporter.report(
          'warning',
          'NFT_INCONSISTENT',
          `the element says ${protocol} but the chain ${p.prefix}-${p.hash}-${p.base} says ${p.protocol}`,
          this.ref(line),
        )
      }
    }
    return acc
  }

  private newAcc(
    key: string,
    namespace: string | null,
    name: string | null,
    portName: string | null,
    protocol: Protocol,
  ): ServiceAcc {
    const acc: ServiceAcc = {
      key,
      namespace,
      name,
      portName,
      protocol,
      frontends: new Map(),
      internalChain: null,
      clusterChain: null,
      localChain: null,
      externalChain: null,
      firewallChains: new Set(),
      itp: null,
      etp: null,
      affinityTimeout: undefined,
      rules: [],
    }
    this.services.set(key, acc)
    return acc
  }

  private addFrontend(
    acc: ServiceAcc,
    type: Frontend['type'],
    ip: string | null,
    port: number,
    action: FrontendAction,
    line: number,
  ): Frontend {
    return this.byFrontend.add(acc, type, ip, port, action, this.ref(line))
  }

  private chain(name: string): NftChain | undefined {
    return this.table.chains.get(name)
  }

  private use(chainName: string, line: number, from: string): NftChain | null {
    const chain = this.markPointedAt(chainName)
    if (!chain) {
      this.reporter.report(
        'warning',
        'NFT_MISSING_CHAIN',
        `${from} points at chain ${chainName}, which is not in the table`,
        this.ref(line),
      )
      return null
    }
    return chain
  }

  /** Notes that something points at the chain (use() when it is read, the affinity rule's goto when not); returns it if it is in the table. */
  private markPointedAt(chainName: string): NftChain | undefined {
    const chain = this.chain(chainName)
    if (chain) chain.pointedAt = true
    else this.used.add(chainName)
    return chain
  }

  private set(name: string): NftSet | undefined {
    return this.table.sets.get(name)
  }

  /** `services`, `masquerading`, `mark-for-masquerade`: node-wide facts. */
  private readTopLevelChains(): void {
    const mfm = this.chain(MARK_FOR_MASQUERADE_CHAIN)
    for (const rule of mfm?.rules() ?? []) this.facts.masqueradeMark ??= markSetOr(rule.tokens)
    const services = this.chain(SERVICES_CHAIN)
    for (const rule of services?.rules() ?? []) {
      const w = rule.tokens
      if (w.includes(`@${SERVICE_NODEPORTS_MAP}`)) {
        if (hasSequence(w, 'fib', 'daddr', 'type', 'local')) this.facts.allNodeAddresses()
        else if (w.includes('@nodeport-ips'))
          for (const e of this.set(NODEPORT_IPS_SET)?.elements ?? [])
            this.facts.addNodePortAddress(e.key[0]!)
      } else if (markSetOr(w) !== null) {
        // Newest layout: `ip daddr @cluster-ips ip saddr != CIDR meta mark set meta mark | 0x4000`.
        this.facts.masqueradeMark ??= markSetOr(w)
        this.facts.sawInternalChain = true
        this.readDetector(w, rule)
      }
    }
    const masq = this.chain(MASQUERADING_CHAIN)
    for (const rule of masq?.rules() ?? []) {
      const i = rule.tokens.indexOf('masquerade')
      if (i < 0) continue
      const flags = rule.tokens.slice(i + 1).join(',')
      this.facts.randomFully = (this.facts.randomFully ?? false) || flags.includes('fully-random')
    }
  }

  /** The pod-traffic detector in a ClusterIP masquerade rule (`ip saddr != CIDR`, `iif != X`). */
  private readDetector(words: readonly string[], rule: NftRule): void {
    const saddr = addressMatch(words, 'saddr')
    const iface = interfaceMatch(words)
    if (saddr?.negated && !saddr.values[0]?.startsWith('@')) {
      for (const v of saddr.values) this.facts.addCidr(toCidr(v))
      this.facts.masqueradeAll ??= false
    } else if (iface?.negated) {
      this.facts.addInterface(iface.name)
      this.facts.masqueradeAll ??= false
    } else if (!saddr && !iface) {
      this.facts.masqueradeAll = true
    } else {
      this.reporter.report(
        'info',
        'NFT_UNKNOWN_RULE',
        `a masquerade rule kp does not recognise: ${words.join(' ')}`,
        this.ref(rule.line),
      )
    }
  }

  private elementTarget(value: string[] | null): {kind: string; target: string | null} | null {
    if (!value || value.length === 0) return null
    if ((value[0] === 'goto' || value[0] === 'jump') && value[1] !== undefined)
      return {kind: value[0], target: value[1]}
    return {kind: value[0]!, target: null}
  }

  /** The per-service chain a map element jumps or goes to, with its name read; null when it names none. */
  private elementChain(el: NftElement): {target: string; name: PerServiceName} | null {
    const target = this.elementTarget(el.value)?.target
    const name = target ? this.nameOf(target) : undefined
    return target && name ? {target, name} : null
  }

  private unexpectedElement(mapName: string, el: NftElement): void {
    this.reporter.report(
      'warning',
      'NFT_UNEXPECTED_ELEMENT',
      `${mapName} element not in kube-proxy's shape: ${el.key.join(' . ')} : ${(el.value ?? []).join(' ')}`,
      this.ref(el.line),
    )
  }

  private readServiceIps(): void {
    const map = this.set(SERVICE_IPS_MAP)
    for (const el of map?.elements ?? []) {
      const [ip, protoWord, portWord] = el.key
      const protocol = protocolOf(protoWord)
      const port = parsePort(portWord)
      const chain = this.elementChain(el)
      const prefix = chain?.name.prefix
      if (
        !ip ||
        protocol === null ||
        port === null ||
        !chain ||
        (prefix !== 'service' && prefix !== 'local' && prefix !== 'external')
      ) {
        this.unexpectedElement(SERVICE_IPS_MAP, el)
        continue
      }
      const {target, name: p} = chain
      const acc = this.serviceFor(p, protocol, el.line)
      this.use(target, el.line, SERVICE_IPS_MAP)
      if (p.prefix === 'external') {
        this.addFrontend(acc, 'External', ip, port, 'forward', el.line)
        acc.externalChain = target
      } else {
        this.addFrontend(acc, 'ClusterIP', ip, port, 'forward', el.line)
        if (this.clusterIps && !this.clusterIps.has(ip)) {
          this.reporter.report(
            'warning',
            'NFT_INCONSISTENT',
            `${ip} points at ${target} like a ClusterIP but is not in the cluster-ips set`,
            this.ref(el.line),
          )
        }
        acc.internalChain = target
        acc.itp = p.prefix === 'local' ? 'Local' : 'Cluster'
        if (p.prefix === 'local') acc.localChain = target
        else acc.clusterChain = target
      }
    }
  }

  private readNodePorts(): void {
    const map = this.set(SERVICE_NODEPORTS_MAP)
    for (const el of map?.elements ?? []) {
      const [protoWord, portWord] = el.key
      const protocol = protocolOf(protoWord)
      const port = parsePort(portWord)
      const chain = this.elementChain(el)
      if (protocol === null || port === null || !chain || chain.name.prefix !== 'external') {
        this.unexpectedElement(SERVICE_NODEPORTS_MAP, el)
        continue
      }
      const acc = this.serviceFor(chain.name, protocol, el.line)
      this.use(chain.target, el.line, SERVICE_NODEPORTS_MAP)
      this.addFrontend(acc, 'NodePort', null, port, 'forward', el.line)
      acc.externalChain = chain.target
    }
  }

  /** `no-endpoint-services` / `no-endpoint-nodeports`: `KEY comment "SPN" : goto reject-chain | drop`. */
  private readNoEndpoints(mapName: string, nodePorts: boolean): void {
    const map = this.set(mapName)
    for (const el of map?.elements ?? []) {
      const ip = nodePorts ? null : el.key[0]
      const protocol = protocolOf(el.key[nodePorts ? 0 : 1])
      const port = parsePort(el.key[nodePorts ? 1 : 2])
      const t = this.elementTarget(el.value)
      const action: FrontendAction | null =
        t?.kind === 'drop' ? 'drop' : t?.target === REJECT_CHAIN ? 'reject' : null
      if ((!nodePorts && !ip) || protocol === null || port === null || action === null) {
        this.unexpectedElement(mapName, el)
        continue
      }
      const acc = this.serviceForComment(el.comment, ip ?? '*', protocol, port, el.line)
      const isClusterIp =
        !nodePorts &&
        (this.clusterIps
          ? this.clusterIps.has(ip!)
          : ![...acc.frontends.values()].some((f) => f.type === 'ClusterIP'))
      const type: Frontend['type'] = nodePorts ? 'NodePort' : isClusterIp ? 'ClusterIP' : 'External'
      const fe = this.addFrontend(acc, type, ip ?? null, port, action, el.line)
      fe.action = action
      // drop = a Local policy without local endpoints (§3.4); reject = no endpoints at all.
      if (action === 'drop') {
        if (type === 'ClusterIP') acc.itp = 'Local'
        else acc.etp = 'Local'
      }
    }
  }

  /** The service a no-endpoint element belongs to: by its comment, else by its frontend. */
  private serviceForComment(
    comment: string | null,
    ip: string,
    protocol: Protocol,
    port: number,
    line: number,
  ): ServiceAcc {
    if (comment !== null) {
      const slash = comment.indexOf('/')
      const colon = comment.indexOf(':', slash + 1)
      if (slash > 0) {
        const namespace = comment.slice(0, slash)
        const name = colon < 0 ? comment.slice(slash + 1) : comment.slice(slash + 1, colon)
        const portName = colon < 0 ? '' : comment.slice(colon + 1)
        const base = `${namespace}/${name}/${protocol.toLowerCase()}/${portName}`
        return this.services.get(base) ?? this.newAcc(base, namespace, name, portName, protocol)
      }
      this.reporter.report(
        'warning',
        'NFT_UNEXPECTED_ELEMENT',
        `element comment "${comment}" is not a service port name (ns/name:port)`,
        this.ref(line),
      )
    }
    const known = this.byFrontend.ownerOf(ip, protocol, port)
    if (known) return known
    const key = `?${ip}|${protocol}|${port}`
    return this.services.get(key) ?? this.newAcc(key, null, null, null, protocol)
  }

  private readFirewallIps(): void {
    const map = this.set(FIREWALL_IPS_MAP)
    for (const el of map?.elements ?? []) {
      const [ip, protoWord, portWord] = el.key
      const protocol = protocolOf(protoWord)
      const port = parsePort(portWord)
      const chain = this.elementChain(el)
      if (!ip || protocol === null || port === null || !chain || chain.name.prefix !== 'firewall') {
        this.unexpectedElement(FIREWALL_IPS_MAP, el)
        continue
      }
      const acc = this.serviceFor(chain.name, protocol, el.line)
      this.use(chain.target, el.line, FIREWALL_IPS_MAP)
      // Only LoadBalancer IPs have source ranges, so this External frontend is a LoadBalancer.
      const fe = this.addFrontend(acc, 'LoadBalancer', ip, port, 'forward', el.line)
      fe.type = 'LoadBalancer'
      acc.firewallChains.add(chain.target)
    }
  }

  // ---- per-service chains ----------------------------------------------------------------

  private finishService(a: ServiceAcc): ServicePort {
    if (a.externalChain) this.readExternalChain(a)
    const lbIps = new Set<string>()
    for (const fe of a.frontends.values()) if (fe.type === 'LoadBalancer' && fe.ip) lbIps.add(fe.ip)
    const ranges: string[] = []
    for (const fw of a.firewallChains) pushAll(ranges, this.readFirewallChain(fw, lbIps))
    for (const fe of a.frontends.values())
      if (fe.type === 'LoadBalancer') fe.sourceRanges = [...new Set(ranges)]

    const cluster = a.clusterChain ? this.readSelectionChain(a, a.clusterChain) : null
    const local = a.localChain ? this.readSelectionChain(a, a.localChain) : null
    // Shares are those of the cluster path (docs/model.md): the chain the ClusterIP goes to (local-B
    // under ITP=Local), else service-B. An endpoint only the other chain reaches gets share 0.
    // Locality is known only under a Local policy: local-B members are local, the rest are not.
    const primary = a.internalChain === a.localChain && local ? local : (cluster ?? local)
    const localKnown = a.itp === 'Local' || a.etp === 'Local'
    const endpoints = new Map<string, Endpoint>()
    const add = (list: SelectedEndpoint[] | null, fromPrimary: boolean, isLocal: boolean): void => {
      for (const e of list ?? []) {
        const k = `${e.ip}|${e.port}`
        let ep = endpoints.get(k)
        if (!ep) {
          ep = {
            ip: e.ip,
            port: e.port,
            local: localKnown ? false : null,
            share: 0,
            weight: null,
            state: null,
          }
          endpoints.set(k, ep)
        }
        if (fromPrimary) ep.share = (ep.share ?? 0) + e.share
        if (isLocal && localKnown) ep.local = true
      }
    }
    add(primary, true, primary === local)
    if (cluster && cluster !== primary) add(cluster, false, false)
    if (local && local !== primary) add(local, false, true)
    markTerminatingFallbacks(endpoints, cluster, local)

    const hasExternal = [...a.frontends.values()].some((f) => f.type !== 'ClusterIP')
    // An external chain without the Local short-circuits: ETP=Cluster. No external chain and no
    // drop element (no endpoints at all): the policy cannot be seen, null.
    if (hasExternal && a.etp === null && a.externalChain) a.etp = 'Cluster'
    return {
      namespace: a.namespace,
      name: a.name,
      portName: a.portName,
      protocol: a.protocol,
      family: this.family,
      frontends: [...a.frontends.values()],
      healthCheckNodePort: null,
      internalTrafficPolicy: a.itp,
      externalTrafficPolicy: hasExternal ? a.etp : null,
      sessionAffinity:
        a.affinityTimeout === undefined
          ? null
          : {type: 'ClientIP', timeoutSeconds: a.affinityTimeout},
      scheduler: null,
      endpoints: [...endpoints.values()],
      rules: a.rules,
    }
  }

  /** external-B: ETP=Local shows `fib saddr type local` short-circuits or `goto local-B` (§3.4). */
  private readExternalChain(a: ServiceAcc): void {
    const chain = this.chain(a.externalChain!)
    if (!chain) return
    a.rules.push(this.ref(chain.line))
    for (const rule of chain.rules()) {
      const w = rule.tokens
      const v = verdictOf(w)
      const p = v?.target ? this.nameOf(v.target) : undefined
      if (hasSequence(w, 'fib', 'saddr', 'type', 'local')) a.etp = 'Local'
      if (
        v &&
        v.target &&
        p &&
        (p.prefix === 'service' || p.prefix === 'local') &&
        v.kind === 'goto'
      ) {
        this.use(v.target, rule.line, chain.name)
        if (p.prefix === 'local') {
          a.etp = 'Local'
          a.localChain = v.target
        } else {
          a.clusterChain ??= v.target
          const saddr = addressMatch(w, 'saddr')
          const iface = interfaceMatch(w)
          if (saddr && !saddr.negated) {
            // "short-circuit pod traffic": the detector in its IfLocal form.
            for (const x of saddr.values) this.facts.addCidr(toCidr(x))
            a.etp = 'Local'
          } else if (iface && !iface.negated) {
            this.facts.addInterface(iface.name)
            a.etp = 'Local'
          }
        }
        continue
      }
      if ((v?.kind === 'jump' && v.target === MARK_FOR_MASQUERADE_CHAIN) || markSetOr(w) !== null)
        continue
      this.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${chain.name}: a rule kp does not recognise: ${w.join(' ')}`,
        this.ref(rule.line),
      )
    }
  }

  /** firewall-B: `ip saddr != { CIDR , ... } drop`; LB IPs appended by kube-proxy are not ranges. */
  private readFirewallChain(name: string, lbIps: Set<string>): string[] {
    const chain = this.chain(name)
    if (!chain) return []
    const out: string[] = []
    for (const rule of chain.rules()) {
      const saddr = addressMatch(rule.tokens, 'saddr')
      if (saddr?.negated && verdictOf(rule.tokens)?.kind === 'drop') {
        for (const x of saddr.values) if (!lbIps.has(x)) out.push(toCidr(x))
      } else {
        this.reporter.report(
          'warning',
          'NFT_UNKNOWN_RULE',
          `${name}: a rule kp does not recognise: ${rule.tokens.join(' ')}`,
          this.ref(rule.line),
        )
      }
    }
    return out
  }

  /**
   * service-B / local-B: the endpoints it picks and with what share. Each of the N entries of
   * `numgen random mod N` is picked with probability 1/N. kube-proxy writes one rule that picks;
   * should there be more, they are tried in order and each gets what the ones before left over
   * (none after one that always picks), so the shares never sum to more than 1.
   */
  private readSelectionChain(a: ServiceAcc, name: string): SelectedEndpoint[] {
    const chain = this.chain(name)
    if (!chain) return []
    a.rules.push(this.ref(chain.line))
    this.facts.sawInternalChain ||= chain.ruleCount > 0
    const out: SelectedEndpoint[] = []
    let remaining = 1
    const picked = (rule: NftRule, list: SelectedEndpoint[]): void => {
      if (remaining === 0)
        this.reporter.report(
          'warning',
          'NFT_INCONSISTENT',
          `${name}: a rule that picks endpoints after one that always picks; it is never reached`,
          this.ref(rule.line),
        )
      let taken = 0
      for (const e of list) {
        e.share *= remaining
        taken += e.share
      }
      remaining = Math.max(0, remaining - taken)
      pushAll(out, list)
    }
    for (const rule of chain.rules()) {
      const w = rule.tokens
      const v = verdictOf(w)
      const numgen = w.indexOf('numgen')
      if (numgen >= 0 && w.includes('vmap')) {
        // Not a number where N belongs (`numgen random . mod 1`): the entries alone say N.
        const n = Number(w[numgen + 3]) || 0
        const targets = vmapTargets(w, w.indexOf('vmap') + 1)
        if (targets.length !== n)
          this.reporter.report(
            'warning',
            'NFT_INCONSISTENT',
            `${name}: numgen mod ${w[numgen + 3]} but ${targets.length} entries`,
            this.ref(rule.line),
          )
        const list: SelectedEndpoint[] = []
        for (const target of targets) {
          const ep = this.readEndpointChain(target, rule.line, name)
          if (ep) list.push({ip: ep.ip, port: ep.port, share: 1 / Math.max(n, targets.length)})
        }
        picked(rule, list)
        continue
      }
      const dnat = w.indexOf('dnat')
      if (dnat >= 0) {
        picked(rule, this.inlineDnat(w, dnat, name, rule))
        continue
      }
      if (v?.kind === 'goto' && v.target?.startsWith('endpoint-')) {
        const set = w.find((x) => x.startsWith('@affinity-'))
        if (set) {
          // ClientIP affinity: `ip saddr @affinity-X goto endpoint-X`; the set carries the timeout.
          const s = this.set(set.slice(1))
          a.affinityTimeout = s?.timeoutSeconds ?? a.affinityTimeout ?? null
          this.used.add(set.slice(1))
          this.markPointedAt(v.target)
          continue
        }
      }
      if ((v?.kind === 'jump' && v.target === MARK_FOR_MASQUERADE_CHAIN) || markSetOr(w) !== null) {
        this.readDetector(w, rule)
        continue
      }
      this.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${name}: a rule kp does not recognise: ${w.join(' ')}`,
        this.ref(rule.line),
      )
    }
    return out
  }

  /** Newest layout: `dnat ip to numgen random mod N map { 0 : IP . PORT , ... }` or `dnat to IP:PORT`. */
  private inlineDnat(
    w: readonly string[],
    dnat: number,
    chainName: string,
    rule: NftRule,
  ): SelectedEndpoint[] {
    const to = w.indexOf('to', dnat)
    if (to < 0) {
      this.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${chainName}: a dnat kp cannot read: ${w.join(' ')}`,
        this.ref(rule.line),
      )
      return []
    }
    if (w[to + 1] === 'numgen') {
      const n = Number(w[to + 4]) || 0
      const open = w.indexOf('{', to)
      const out: SelectedEndpoint[] = []
      let k = open + 1
      while (open > 0 && k < w.length && w[k] !== '}') {
        // idx : IP . PORT [,]
        if (w[k + 1] === ':' && w[k + 3] === '.') {
          out.push({ip: w[k + 2]!, port: parsePort(w[k + 4]), share: 0})
          k += 5
        } else if (w[k + 1] === ':') {
          const hp = splitHostPort(w[k + 2]!)
          if (hp) out.push({ip: hp.ip, port: hp.port, share: 0})
          k += 3
        } else {
          k++
        }
        if (w[k] === ',') k++
      }
      if (out.length !== n)
        this.reporter.report(
          'warning',
          'NFT_INCONSISTENT',
          `${chainName}: numgen mod ${w[to + 4]} but ${out.length} entries`,
          this.ref(rule.line),
        )
      for (const e of out) e.share = 1 / Math.max(n, out.length)
      return out
    }
    const hp = w[to + 1] ? splitHostPort(w[to + 1]!) : null
    if (!hp) {
      this.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${chainName}: a dnat kp cannot read: ${w.join(' ')}`,
        this.ref(rule.line),
      )
      return []
    }
    return [{ip: hp.ip, port: hp.port, share: 1}]
  }

  /** endpoint-BE: `meta l4proto tcp dnat to IP:PORT` (+ hairpin masquerade, affinity update). */
  private readEndpointChain(
    name: string,
    line: number,
    from: string,
  ): {ip: string; port: number | null} | null {
    const chain = this.use(name, line, from)
    if (!chain) return null
    let found: {ip: string; port: number | null} | null = null
    for (const rule of chain.rules()) {
      const w = rule.tokens
      const dnat = w.indexOf('dnat')
      if (dnat >= 0) {
        const to = w.indexOf('to', dnat)
        found = to >= 0 && w[to + 1] ? splitHostPort(w[to + 1]!) : null
        if (!found)
          this.reporter.report(
            'warning',
            'NFT_UNKNOWN_RULE',
            `${name}: a dnat kp cannot read: ${w.join(' ')}`,
            this.ref(rule.line),
          )
        continue
      }
      const v = verdictOf(w)
      if ((v?.kind === 'jump' && v.target === MARK_FOR_MASQUERADE_CHAIN) || markSetOr(w) !== null)
        continue
      if (w[0] === 'update' && w[1]?.startsWith('@affinity-')) {
        this.used.add(w[1].slice(1))
        continue
      }
      this.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${name}: a rule kp does not recognise: ${w.join(' ')}`,
        this.ref(rule.line),
      )
    }
    if (!found) {
      this.reporter.report(
        'warning',
        'NFT_NO_DNAT',
        `endpoint chain ${name} is selected by ${from} but has no dnat; its endpoint is unknown`,
        this.ref(chain.line),
      )
      return null
    }
    const p = parsePerServiceName(name)
    if (
      p?.endpointPart &&
      !p.truncated &&
      p.endpointPart !== `${found.ip.replaceAll(':', '.')}/${found.port}`
    ) {
      this.reporter.report(
        'warning',
        'NFT_INCONSISTENT',
        `endpoint chain ${name} DNATs to ${found.ip}:${found.port}, not to the endpoint its name says`,
        this.ref(chain.line),
      )
    }
    return found
  }

  /** Per-service chains and sets nothing points at: leftovers of deleted services (§3.5). */
  private reportLeftovers(): void {
    // Chains first, then sets that are not also chains: the order checkNames met the names in.
    for (const chain of this.table.chains.values()) {
      const objName = chain.name
      if (chain.pointedAt || !parsePerServiceName(objName)) continue
      if (chain.ruleCount === 0) {
        this.reporter.report(
          'info',
          'NFT_STALE_CHAIN',
          `empty chain ${objName}: flushed by kube-proxy for a deleted service or endpoint, to be deleted on a later sync; not a service`,
          this.ref(chain.line),
        )
      } else {
        this.reporter.report(
          'warning',
          'NFT_UNREFERENCED_CHAIN',
          `chain ${objName} has rules but no map element or rule points at it; it was not counted as a service`,
          this.ref(chain.line),
        )
      }
    }
    for (const set of this.table.sets.values()) {
      const objName = set.name
      if (this.used.has(objName) || this.chain(objName)) continue
      if (parsePerServiceName(objName)?.prefix === 'affinity')
        this.reporter.report(
          'info',
          'NFT_STALE_SET',
          `affinity set ${objName} is not used by any rule`,
          this.ref(set.line),
        )
    }
  }
}

/**
 * A local endpoint on the local chain but not on a cluster chain that has endpoints: kube-proxy
 * leaves a local endpoint out of the cluster set only when it is not ready, and uses it on the
 * local path only as the serving-terminating fallback (or when topology hints leave it out, which
 * renders alike). Said, so that a target mode keeps it off its cluster path: taken as ready, a
 * migration sent it a share of the cluster's connections (test/render/terminating-local.test.ts).
 */
function markTerminatingFallbacks(
  endpoints: Map<string, Endpoint>,
  cluster: readonly SelectedEndpoint[] | null,
  local: readonly SelectedEndpoint[] | null,
): void {
  if (!cluster || cluster.length === 0 || !local || local.length === 0) return
  const inCluster = new Set(cluster.map((e) => `${e.ip}|${e.port}`))
  for (const e of local) {
    const k = `${e.ip}|${e.port}`
    const ep = endpoints.get(k)
    if (ep && !inCluster.has(k)) ep.state = 'serving-terminating'
  }
}

/** Targets of `{ 0 : goto X , 1 : goto Y }` starting at words[i]. */
function vmapTargets(w: readonly string[], i: number): string[] {
  const out: string[] = []
  if (w[i] !== '{') return out
  for (let k = i + 1; k < w.length && w[k] !== '}'; k++) {
    if ((w[k] === 'goto' || w[k] === 'jump') && w[k + 1] !== undefined) out.push(w[k + 1]!)
  }
  return out
}
