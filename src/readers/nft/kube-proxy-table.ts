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
import {isRedacted} from '../../core/redaction.js'
import type {Endpoint, ServicePort} from '../../model/types.js'
import {
  FIREWALL_CHECK_CHAIN,
  FIREWALL_IPS_MAP,
  LOCALHOST_NODEPORT_REJECT_MAP,
  LOCALHOST_NODEPORT_REJECT_PREFIX,
  MARK_FOR_MASQUERADE_CHAIN,
  MASQUERADING_CHAIN,
  NFT_TABLE,
  nftNameHash,
  nftNameHashIs,
  NO_ENDPOINT_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  NODEPORT_ENDPOINTS_CHECK_CHAIN,
  NODEPORT_IPS_SET,
  SERVICE_ENDPOINTS_CHECK_CHAIN,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  SERVICES_CHAIN,
} from '../../kube-proxy/nftables-names.js'
import type {NftTable} from './ir.js'
import {ServiceChainReader} from './kube-proxy-chains.js'
import {
  KubeProxyTableContext,
  type SelectedEndpoint,
  type ServiceAcc,
} from './kube-proxy-context.js'
import {ServiceMapReader} from './kube-proxy-maps.js'
import type {NodeFacts} from './node-facts.js'
import {parsePerServiceName} from './per-service-name.js'
import type {Reporter} from './reporter.js'
import {hasSequence, markSetOr} from './words.js'

export {PerServiceName, parsePerServiceName} from './per-service-name.js'

/** Reads one table: the maps name the frontends, then each service's chains are read (stages in helper modules). */
export class KubeProxyTableReader {
  private readonly ctx: KubeProxyTableContext
  private readonly maps: ServiceMapReader
  private readonly chains: ServiceChainReader

  constructor(table: NftTable, path: string, facts: NodeFacts, reporter: Reporter) {
    this.ctx = new KubeProxyTableContext(table, path, facts, reporter)
    this.maps = new ServiceMapReader(this.ctx)
    this.chains = new ServiceChainReader(this.ctx)
  }

  read(): ServicePort[] {
    this.checkNames()
    this.readTopLevelChains()
    this.missingSets()
    this.maps.readServiceIps()
    this.maps.readNodePorts()
    this.maps.readNoEndpoints(NO_ENDPOINT_SERVICES_MAP, false)
    this.maps.readNoEndpoints(NO_ENDPOINT_NODEPORTS_MAP, true)
    this.maps.readFirewallIps()
    const out: ServicePort[] = []
    for (const acc of this.ctx.services.values()) out.push(this.finishService(acc))
    this.markLocalhostRejects(out)
    this.reportLeftovers()
    return out
  }

  /**
   * kube-proxy 1.37's localhost NodePorts (alpha gate KubeProxyNFTablesLocalhostNodePorts): a
   * NodePort the map `localhost-nodeport-reject-ports` names is rejected on 127.0.0.1 (::1), when
   * `nodeport-endpoints-check` looks the map up for it and the verdict's chain rejects
   * (Frontend.localhostRejected). Without the map nftables mode leaves 127.0.0.1 un-NATed.
   */
  private markLocalhostRejects(services: ServicePort[]): void {
    const map = this.ctx.set(LOCALHOST_NODEPORT_REJECT_MAP)
    if (!map || map.elements.length === 0) return
    const lookedUp = (this.ctx.chain(NODEPORT_ENDPOINTS_CHECK_CHAIN)?.rules() ?? []).some(
      (r) =>
        r.tokens.includes(`@${LOCALHOST_NODEPORT_REJECT_MAP}`) &&
        (hasSequence(r.tokens, 'ip', 'daddr', '127.0.0.0/8') ||
          hasSequence(r.tokens, 'ip6', 'daddr', '::1')),
    )
    if (!lookedUp) return
    const rejects = (verdict: string[]): boolean => {
      if (verdict.includes('reject')) return true
      const to = verdict[0] === 'goto' || verdict[0] === 'jump' ? verdict[1] : undefined
      if (to === undefined || !to.startsWith(LOCALHOST_NODEPORT_REJECT_PREFIX)) return false
      return (this.ctx.chain(to)?.rules() ?? []).some((r) => r.tokens.includes('reject'))
    }
    const rejected = new Set<string>()
    for (const el of map.elements)
      if (el.key.length === 2 && rejects(el.value ?? []))
        rejected.add(`${el.key[0]!.toUpperCase()} ${el.key[1]}`)
    for (const sp of services)
      for (const fe of sp.frontends)
        if (fe.type === 'NodePort' && fe.ip === null && rejected.has(`${sp.protocol} ${fe.port}`))
          fe.localhostRejected = true
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
        this.ctx.reporter.report(
          'info',
          'NFT_NAME_TRUNCATED',
          `${objName}: a truncated name (over 240 characters); its hash cannot be checked`,
          this.ctx.ref(line),
        )
        return
      }
      if (!nftNameHashIs(p.hashed, p.hash) && !namesRedactedEndpoint(p.hashed)) {
        const want = nftNameHash(p.hashed)
        this.ctx.reporter.report(
          'warning',
          'NFT_HASH_MISMATCH',
          `${objName}: kube-proxy would name this ${p.prefix}-${want}-${p.hashed}; the hash ${p.hash} does not match (hand-edited or not made by kube-proxy)`,
          this.ctx.ref(line),
        )
      }
    }
    for (const chain of this.ctx.table.chains.values()) check(chain.name, chain.line)
    for (const set of this.ctx.table.sets.values()) check(set.name, set.line)
  }

  /** `services`, `masquerading`, `mark-for-masquerade`: node-wide facts. */
  private readTopLevelChains(): void {
    const mfm = this.ctx.chain(MARK_FOR_MASQUERADE_CHAIN)
    if (mfm && mfm.ruleCount > 0) this.ctx.facts.sign('mark-for-masquerade', this.ctx.ref(mfm.line))
    const reject = this.ctx.set(LOCALHOST_NODEPORT_REJECT_MAP)
    if (reject) this.ctx.facts.sign('localhost-nodeport-reject', this.ctx.ref(reject.line))
    for (const rule of mfm?.rules() ?? []) this.ctx.facts.masqueradeMark ??= markSetOr(rule.tokens)
    const services = this.ctx.chain(SERVICES_CHAIN)
    for (const rule of services?.rules() ?? []) {
      const w = rule.tokens
      if (w.includes(`@${SERVICE_NODEPORTS_MAP}`)) {
        if (hasSequence(w, 'fib', 'daddr', 'type', 'local')) this.ctx.facts.allNodeAddresses()
        else if (w.includes('@nodeport-ips'))
          for (const e of this.ctx.set(NODEPORT_IPS_SET)?.elements ?? [])
            this.ctx.facts.addNodePortAddress(e.key[0]!)
      } else if (markSetOr(w) !== null) {
        // Newest layout: `ip daddr @cluster-ips ip saddr != CIDR meta mark set meta mark | 0x4000`.
        this.ctx.facts.masqueradeMark ??= markSetOr(w)
        this.ctx.facts.sign('services-masquerade-mark', this.ctx.ref(rule.line))
        this.ctx.facts.sawInternalChain = true
        this.ctx.readDetector(w, rule)
      }
    }
    const masq = this.ctx.chain(MASQUERADING_CHAIN)
    for (const rule of masq?.rules() ?? []) {
      const i = rule.tokens.indexOf('masquerade')
      if (i < 0) continue
      const flags = rule.tokens.slice(i + 1).join(',')
      this.ctx.facts.randomFully =
        (this.ctx.facts.randomFully ?? false) || flags.includes('fully-random')
    }
  }

  // ---- per-service chains ----------------------------------------------------------------

  private finishService(a: ServiceAcc): ServicePort {
    if (a.externalChain) this.chains.readExternalChain(a)
    const lbIps = new Set<string>()
    for (const fe of a.frontends.values()) if (fe.type === 'LoadBalancer' && fe.ip) lbIps.add(fe.ip)
    const ranges: string[] = []
    for (const fw of a.firewallChains) pushAll(ranges, this.chains.readFirewallChain(fw, lbIps))
    for (const fe of a.frontends.values())
      if (fe.type === 'LoadBalancer') fe.sourceRanges = [...new Set(ranges)]

    const clusterMissing: string[] = []
    const localMissing: string[] = []
    const cluster = a.clusterChain
      ? this.chains.readSelectionChain(a, a.clusterChain, clusterMissing)
      : null
    const local = a.localChain
      ? this.chains.readSelectionChain(a, a.localChain, localMissing)
      : null
    // Shares are those of the cluster path (docs/model.md): the chain the ClusterIP goes to (local-B
    // under ITP=Local), else service-B. An endpoint only the other chain reaches gets share 0.
    // Locality is known only under a Local policy: local-B members are local, the rest are not.
    const primary = a.internalChain === a.localChain && local ? local : (cluster ?? local)
    // hairpin-connections (1.36+) lists every endpoint on this node, so it settles locality for
    // every service; before 1.36 only a Local policy shows it, and only when its local chain is
    // in the input (referenced but absent, no endpoint is known to be remote).
    const hairpin = this.ctx.hairpin
    const localKnown =
      hairpin !== null ||
      ((a.itp === 'Local' || a.etp === 'Local') && !(a.localChain && !this.ctx.chain(a.localChain)))
    const onNode = (e: SelectedEndpoint): boolean =>
      hairpin?.has(`${e.ip}|${a.protocol}|${e.port}`) ?? false
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
        if ((isLocal || onNode(e)) && localKnown) ep.local = true
      }
    }
    add(primary, true, primary === local)
    if (cluster && cluster !== primary) add(cluster, false, false)
    if (local && local !== primary) add(local, false, true)
    markTerminatingFallbacks(endpoints, cluster, local)

    const hasExternal = [...a.frontends.values()].some((f) => f.type !== 'ClusterIP')
    const externalAbsent = a.externalChain !== null && !this.ctx.chain(a.externalChain)
    // An external chain without the Local short-circuits: ETP=Cluster. No external chain and no
    // drop element (no endpoints at all): the policy cannot be seen, null; nor when the chain
    // the elements point at is not in the input.
    if (hasExternal && a.etp === null && a.externalChain && !externalAbsent) a.etp = 'Cluster'
    const missing = this.markIncomplete(a, {
      internal:
        a.internalChain === null
          ? []
          : a.internalChain === a.localChain
            ? localMissing
            : clusterMissing,
      external: externalAbsent ? [a.externalChain!] : unique([...clusterMissing, ...localMissing]),
    })
    if (a.internalChain !== null && !this.ctx.chain(a.internalChain))
      for (const ep of endpoints.values()) ep.share = null
    return {
      namespace: a.namespace,
      name: a.name,
      portName: a.portName,
      protocol: a.protocol,
      family: this.ctx.family,
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
      ...(missing.length > 0 ? {incomplete: {missing, collect: this.collect()}} : {}),
    }
  }

  private collect(): string {
    return `nft list table ${this.ctx.family === 'IPv6' ? 'ip6' : 'ip'} ${NFT_TABLE}`
  }

  /**
   * Sets and maps the table's rules name (`vmap @no-endpoint-services`) that the input does not
   * define: a fragment (one table of a listing, a grep) lacks them.
   */
  private missingSets(): Set<string> {
    if (this.absentSets !== null) return this.absentSets
    const out = new Set<string>()
    for (const name of DISPATCH_CHAINS) {
      const chain = this.ctx.chain(name)
      for (const rule of chain?.rules() ?? [])
        for (const w of rule.tokens) {
          const name = w.slice(1)
          if (!w.startsWith('@') || this.ctx.set(name) || out.has(name)) continue
          out.add(name)
          this.ctx.reporter.report(
            'warning',
            'NFT_MISSING_SET',
            `${chain!.name} names @${name}, which is not in the input: what it holds is unknown (collect with \`${this.collect()}\`)`,
            this.ctx.ref(rule.line),
          )
        }
    }
    this.absentSets = out
    return out
  }
  private absentSets: Set<string> | null = null

  /**
   * Marks the frontends whose answer needs what the input lacks (docs/model.md, "incomplete"),
   * and returns everything the service port references and lacks. A missing map of frontends
   * (service-ips, service-nodeports) may hide frontends of any service; a missing
   * no-endpoint-* map hides the drop of a Local policy; a missing firewall-ips map the source
   * ranges of a LoadBalancer IP.
   */
  private markIncomplete(a: ServiceAcc, paths: {internal: string[]; external: string[]}): string[] {
    const sets = this.missingSets()
    const collect = this.collect()
    const all = new Set<string>()
    for (const fe of a.frontends.values()) {
      const need: string[] = fe.type === 'ClusterIP' ? [...paths.internal] : [...paths.external]
      const policy = fe.type === 'ClusterIP' ? a.itp : a.etp
      const noEndpointMap =
        fe.type === 'NodePort' ? NO_ENDPOINT_NODEPORTS_MAP : NO_ENDPOINT_SERVICES_MAP
      if (sets.has(noEndpointMap) && policy !== 'Cluster' && fe.action === 'forward')
        need.push(noEndpointMap)
      if ((fe.type === 'LoadBalancer' || fe.type === 'External') && sets.has(FIREWALL_IPS_MAP))
        need.push(FIREWALL_IPS_MAP)
      for (const fw of a.firewallChains) if (!this.ctx.chain(fw)) need.push(fw)
      if (need.length > 0) fe.incomplete = {missing: unique(need), collect}
      for (const n of need) all.add(n)
    }
    for (const m of [SERVICE_IPS_MAP, SERVICE_NODEPORTS_MAP]) if (sets.has(m)) all.add(m)
    for (const n of paths.internal) all.add(n)
    for (const n of paths.external) all.add(n)
    return [...all].sort()
  }

  /** Per-service chains and sets nothing points at: leftovers of deleted services (§3.5). */
  private reportLeftovers(): void {
    // Chains first, then sets that are not also chains: the order checkNames met the names in.
    for (const chain of this.ctx.table.chains.values()) {
      const objName = chain.name
      if (chain.pointedAt || !parsePerServiceName(objName)) continue
      if (chain.ruleCount === 0) {
        this.ctx.reporter.report(
          'info',
          'NFT_STALE_CHAIN',
          `empty chain ${objName}: flushed by kube-proxy for a deleted service or endpoint, to be deleted on a later sync; not a service`,
          this.ctx.ref(chain.line),
        )
      } else {
        this.ctx.reporter.report(
          'warning',
          'NFT_UNREFERENCED_CHAIN',
          `chain ${objName} has rules but no map element or rule points at it; it was not counted as a service`,
          this.ctx.ref(chain.line),
        )
      }
    }
    for (const set of this.ctx.table.sets.values()) {
      const objName = set.name
      if (this.ctx.used.has(objName) || this.ctx.chain(objName)) continue
      if (parsePerServiceName(objName)?.prefix === 'affinity')
        this.ctx.reporter.report(
          'info',
          'NFT_STALE_SET',
          `affinity set ${objName} is not used by any rule`,
          this.ctx.ref(set.line),
        )
    }
  }
}

const unique = (names: string[]): string[] => [...new Set(names)]

/** The node-wide chains whose verdict maps name every frontend (§3.2). */
const DISPATCH_CHAINS = [
  SERVICES_CHAIN,
  SERVICE_ENDPOINTS_CHECK_CHAIN,
  NODEPORT_ENDPOINTS_CHECK_CHAIN,
  FIREWALL_CHECK_CHAIN,
]

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

/**
 * `ns/svc/tcp/p80__x.x.x.x/80`: an endpoint chain whose address was redacted cannot carry the hash
 * of the real one, so its hash is not a mismatch.
 */
function namesRedactedEndpoint(hashed: string): boolean {
  const at = hashed.lastIndexOf('__')
  if (at < 0) return false
  const address = hashed.slice(at + 2)
  const slash = address.lastIndexOf('/')
  return isRedacted(slash > 0 ? address.slice(0, slash) : address)
}
