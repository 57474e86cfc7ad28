/**
 * Stage 2 of the iptables reader for one family's ruleset: kube-proxy's chains -> service
 * ports (./service-ports.ts assembles them) and node evidence. The stages are methods of
 * IptablesFamilyReader, run in order by read():
 * 1. index the nat chains by name; per-service chains (KUBE-SVC/SVL/EXT/FW/XLB-<H16>) are
 *    grouped by their shared hash H16, so one group is one service port;
 * 2-3. walk nat KUBE-SERVICES and KUBE-NODEPORTS once: each jump into a group is a frontend,
 *    and its comment (`C cluster IP`, ...) names the group;
 * 4. walk each group's own chains once: policies (EXT short-circuits, ->SVL, XLB), the
 *    affinity and the probability cascade to KUBE-SEP chains, whose DNAT gives the endpoints;
 * 5. walk the filter table once: REJECT/DROP for no (local) endpoints, health check ports,
 *    firewall drops — joined to the groups by the name in their comment; then the node
 *    settings from the fixed chains;
 * 6. assemble the service ports (./service-ports.ts);
 * 7. one pass over every rule for foreign rules and chains (./foreign.ts).
 */
import {
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_MARK_DROP,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from '../../kube-proxy/iptables-names.js'
import {toCidr} from '../../core/address.js'
import type {ForeignObject, FrontendType} from '../../model/types.js'
import {findForeign} from './foreign.js'
import {
  addressKey,
  emptyGroup,
  findDraftOfChain,
  findFrontend,
  isPerServiceChain,
  nodePortKey,
  perServiceChain,
  SCANNED_ENDPOINTS,
  SEP_PREFIX,
  typeKey,
  type Cascade,
  type EndpointDraft,
  type FamilyResult,
  type Group,
} from './groups.js'
import {
  findMatch,
  findMatchValue,
  findTargetOption,
  findTargetValue,
  type IptablesChain,
  type IptablesRule,
} from './ruleset.js'
import {FamilyState} from './family-state.js'
import {servicePorts} from './service-ports.js'
import {isMasqueradeMarking, markValue, parsePort, SNAT_COMMENT, splitHostPort} from './values.js'

const LOCALHOST_V4 = '127.0.0.0/8'

/** `-m addrtype --src-type LOCAL`: a connection from one of this node's own addresses. */
function isLocalSource(rule: Parameters<typeof findMatch>[0]): boolean {
  const m = findMatch(rule, '--src-type')
  return m !== undefined && m !== null && !m.negated && m.values[0] === 'LOCAL'
}

/**
 * Reads one family's ruleset. `servicesOnly`: ReadOptions.servicesOnly (no rule references, no
 * foreign pass); `refsPerPort`: ReadOptions.refsPerPort (Infinity when not set).
 */
export class IptablesFamilyReader extends FamilyState {
  /** Compared with the live SEP chains the groups jump to: when they are as many, no SEP chain is an orphan. */
  private liveSepChains = 0
  /** Rules attributed by name only (old masquerade rules in KUBE-SERVICES / KUBE-NODEPORTS), joined after naming. */
  private readonly byNameLater: Array<{spn: string; protocol: string | null; rule: IptablesRule}> =
    []
  /**
   * The live SEP chains some group jumps to carry this in passMark: one more than any mark on the
   * nat chains, so marks of an earlier read of the same ruleset mean nothing.
   */
  private jumpedMark = 1
  private jumpedSeps = 0
  /** Reported once the filter table says whether the service has endpoints at all. */
  private readonly emptyDispatchChains: Array<{g: Group; chain: IptablesChain}> = []
  /** The named groups by `SPN|protocol`, and by SPN (stage 5). */
  private readonly bySpn = new Map<string, Group>()
  private readonly spnGroups = new Map<string, Group[]>()
  private readonly healthChecks: Array<{spn: string; port: number | null; rule: IptablesRule}> = []

  read(): FamilyResult {
    this.indexChains()
    this.readNatServices()
    this.readNatNodePorts()
    // Per group (per chain, per endpoint) a method call, not a loop body inlined here: V8
    // optimises the method after a few calls.
    this.groups.forEach((g) => this.readGroupChains(g))
    this.groups.forEach((g) => this.readSepChains(g))
    this.groups.forEach((g) => this.recoverClusterIp(g))
    this.reportOrphanSeps()
    this.readFilter()
    this.readNodeSettings()
    this.reportEmptyDispatchChains()
    const services = servicePorts(this)
    const foreign: ForeignObject[] =
      this.focused || this.servicesOnly
        ? []
        : findForeign(this.ruleset, this.path, this.node.masqueradeMark, this.warn)
    return {services, foreign, diagnostics: this.diagnostics, node: this.node}
  }

  /** The per-service chains by hash, and the live SEP chains counted (forEach: no iterator result per chain). */
  private indexChains(): void {
    let maxMark = 0
    this.natChains.forEach((chain) => {
      if (chain.passMark > maxMark) maxMark = chain.passMark
      // SEP first: ten times as many as the per-service chains.
      const sep = chain.name.startsWith(SEP_PREFIX)
      if (chain.deletedLine !== null) {
        // Restore input of a resync declares stale chains and deletes them (fixtures/iptables/upstream-syncrepeated-fullresync).
        if (sep || isPerServiceChain(chain.name)) {
          this.warn(
            'IPT_DELETED_CHAIN',
            `${chain.name} is deleted by -X on line ${chain.deletedLine} (a stale chain of a removed service); not read as a service`,
            chain.deletedLine,
            'info',
          )
        }
        return
      }
      if (sep) {
        this.liveSepChains++
        return
      }
      const ps = perServiceChain(chain.name)
      if (ps) this.groupOf(ps.hash).chains[ps.kind] = chain
    })
    this.jumpedMark = maxMark + 1
  }

  // ---- 2. nat KUBE-SERVICES: frontends and the jump to KUBE-NODEPORTS.
  private readNatServices(): void {
    const natServices = this.liveTarget(KUBE_SERVICES)
    for (const rule of natServices?.rules ?? []) {
      const comment = this.commentOf(rule)
      const ps = rule.target ? perServiceChain(rule.target) : null
      if (ps) {
        const g = this.groupOf(ps.hash)
        this.noteRef(g, rule)
        this.nameGroup(g, rule)
        const type: FrontendType =
          comment?.kind === 'cluster-ip'
            ? 'ClusterIP'
            : comment?.kind === 'external-ip'
              ? 'ExternalIP'
              : comment?.kind === 'loadbalancer-ip'
                ? 'LoadBalancer'
                : ps.kind === 'svc' || ps.kind === 'svl'
                  ? 'ClusterIP'
                  : ps.kind === 'fw'
                    ? 'LoadBalancer'
                    : 'External'
        if (!comment)
          this.warn(
            'IPT_NO_COMMENT',
            `KUBE-SERVICES rule into ${rule.target} has no service comment; read as a ${type} frontend from its target`,
            rule.line,
            'info',
          )
        const fe = this.addFrontend(g, {
          type,
          ip: rule.destination?.value ?? null,
          port: parsePort(rule.dport?.value),
          sourceRanges: [],
          action: 'forward',
          via: ps.kind,
        })
        // ≤1.10 externalIPs: the jump skips traffic from a local address (`! --src-type LOCAL`);
        // its companion rule (`--dst-type LOCAL`) DNATs it only to the node's own addresses.
        const srcType = findMatch(rule, '--src-type')
        if (srcType?.negated && srcType.values[0] === 'LOCAL') fe.nodeSourceExcluded = true
        if (type === 'ClusterIP') {
          if (ps.kind === 'svl') g.itp = 'Local'
          else if (ps.kind === 'svc') g.itp ??= 'Cluster'
        } else if (ps.kind === 'svc') {
          // ≤1.23 sent external traffic straight to KUBE-SVC unless ETP=Local (which went through KUBE-XLB).
          g.etp ??= 'Cluster'
        }
        continue
      }
      if (isMasqueradeMarking(rule) && comment?.spn) {
        // ≤1.23: masquerade rules sat in KUBE-SERVICES before the jump (docs/kube-proxy-layouts.md §2.7, fixtures/iptables/handmade-legacy-xlb);
        // in 2015 they set the mark directly.
        if (rule.target === 'MARK') this.noteMarkTarget(rule)
        if (comment.kind === 'cluster-ip') this.noteInternalMasquerade(rule)
        this.byNameLater.push({spn: comment.spn, protocol: rule.protocol?.value ?? null, rule})
        continue
      }
      if (rule.target === KUBE_NODEPORTS) {
        // The last rule: `--dst-type LOCAL` for every address, or one `-d NODEIP` per address (docs/kube-proxy-layouts.md §2.3).
        const dstType = findMatch(rule, '--dst-type')
        if (rule.destination && !rule.destination.negated) {
          ;(this.node.nodePortAddresses ??= []).push(rule.destination.value)
        } else if (dstType && !dstType.negated && dstType.values[0] === 'LOCAL') {
          this.node.nodePortAddresses ??= []
          if (this.family === 'IPv4')
            this.node.localhostNodePorts =
              rule.destination?.negated && rule.destination.value === LOCALHOST_V4
                ? false
                : (this.node.localhostNodePorts ?? true)
        }
        continue
      }
      this.notUnderstood(rule)
    }
  }

  // ---- 3. nat KUBE-NODEPORTS: NodePort frontends.
  private readNatNodePorts(): void {
    for (const rule of this.liveTarget(KUBE_NODEPORTS)?.rules ?? []) {
      const comment = this.commentOf(rule)
      const ps = rule.target ? perServiceChain(rule.target) : null
      if (ps) {
        const g = this.groupOf(ps.hash)
        this.noteRef(g, rule)
        this.nameGroup(g, rule)
        if (ps.kind === 'xlb') g.etp = 'Local'
        else if (ps.kind === 'svc') g.etp ??= 'Cluster' // ≤1.23: KUBE-MARK-MASQ, then straight to KUBE-SVC
        if (
          rule.destination &&
          !rule.destination.negated &&
          rule.destination.value === LOCALHOST_V4
        ) {
          // The localhost copy of a NodePort (docs/kube-proxy-layouts.md §2.4, fixtures/iptables/upstream-overall) is a node setting, not another frontend.
          this.node.localhostNodePorts = true
          continue
        }
        this.addFrontend(g, {
          type: 'NodePort',
          ip: rule.destination && !rule.destination.negated ? rule.destination.value : null,
          port: parsePort(rule.dport?.value),
          sourceRanges: [],
          action: 'forward',
          via: ps.kind,
        })
        continue
      }
      if (isMasqueradeMarking(rule) && comment?.spn) {
        if (rule.target === 'MARK') this.noteMarkTarget(rule)
        this.byNameLater.push({spn: comment.spn, protocol: rule.protocol?.value ?? null, rule})
        continue
      }
      this.notUnderstood(rule)
    }
  }

  // ---- 4. each group's chains, once.

  private noteSepJump(g: Group, sep: string, local: boolean): EndpointDraft {
    // Affinity and SVL rules jump to the chains the SVC rules do: the group's draft is found again.
    // The chain is looked up first: a draft is then found again by its chain, one pointer compared
    // per draft, not by its name (the names are cut from the dump, and comparing two of them reads
    // both places in the text).
    const chain = this.natChains.get(sep)
    let ep: EndpointDraft | undefined
    if (g.endpointBySep !== null) ep = g.endpointBySep.get(sep)
    else if (chain !== undefined) ep = findDraftOfChain(g.endpoints, chain)
    else ep = g.endpoints.find((e) => e.chain === undefined && e.sep === sep)
    if (ep === undefined) {
      if (chain !== undefined && chain.deletedLine === null && chain.passMark !== this.jumpedMark) {
        chain.passMark = this.jumpedMark
        this.jumpedSeps++
      }
      ep = {
        sep,
        chain,
        ip: '',
        port: null,
        written: null,
        inLocal: false,
        index: g.endpoints.length,
      }
      g.endpoints.push(ep)
      if (g.endpointBySep !== null) g.endpointBySep.set(sep, ep)
      else if (g.endpoints.length > SCANNED_ENDPOINTS)
        g.endpointBySep = new Map(g.endpoints.map((e) => [e.sep, e]))
    }
    if (local) ep.inLocal = true
    return ep
  }
  private readDispatchChain(g: Group, chain: IptablesChain, kind: 'svc' | 'svl' | 'xlb'): void {
    const local = kind !== 'svc'
    if (kind === 'xlb') g.etp = 'Local'
    // Only the ClusterIP's own chain says something about the detector: kube-proxy writes the
    // "! -s podCIDR" masquerade rule into it. A KUBE-SVC chain reached only from KUBE-EXT (ITP=Local
    // without local endpoints, and an externalIP or NodePort) has none whatever the detector, and
    // taking it for evidence read a node's dump of such services as localDetector "none".
    else if (g.frontends.some((f) => f.type === 'ClusterIP' && f.via === kind))
      this.node.sawInternalChain = true
    let cascade: Cascade | null = null
    for (let i = 0, n = chain.ruleCount; i < n; i++) {
      const rule = chain.ruleAt(i)
      this.noteRef(g, rule)
      this.nameGroup(g, rule)
      const target = rule.target ?? ''
      if (isMasqueradeMarking(rule)) {
        if (target === 'MARK') this.noteMarkTarget(rule)
        if (this.commentOf(rule)?.kind === 'cluster-ip') {
          this.noteInternalMasquerade(rule)
          if (kind !== 'xlb' && rule.destination && !rule.destination.negated)
            g.clusterIpRule ??= {
              ip: rule.destination.value,
              port: parsePort(rule.dport?.value),
              via: kind,
            }
        } else if (kind === 'xlb' && rule.source && !rule.source.negated)
          this.node.podCIDRs.add(rule.source.value)
        continue
      }
      if (target === KUBE_MARK_DROP) {
        g.localDrop = true
        continue
      }
      if (target.startsWith(SEP_PREFIX)) {
        const ep = this.noteSepJump(g, target, local)
        if (findMatch(rule, '--rcheck')) {
          g.affinity = true
          const seconds = parsePort(findMatch(rule, '--seconds')?.values[0])
          if (seconds !== null) g.affinitySeconds = seconds
          continue
        }
        const p = findMatchValue(rule, '--probability')
        let probability: number | null = null
        if (p !== undefined) {
          probability = Number(p)
          if (!Number.isFinite(probability) || probability < 0 || probability > 1) {
            this.warn(
              'IPT_BAD_PROBABILITY',
              `--probability ${p} is not a number between 0 and 1; the rule is read as unconditional`,
              rule.line,
            )
            probability = null
          }
        }
        cascade ??= {chain: chain.name, probabilities: [], lines: [], endpoints: []}
        cascade.probabilities.push(probability)
        cascade.lines.push(rule.line)
        cascade.endpoints.push(ep)
        continue
      }
      const into = perServiceChain(target)
      if (kind === 'xlb' && into?.kind === 'svc') {
        g.jumps.push({from: 'xlb', to: 'svc'})
        // ≤1.23 KUBE-XLB short-circuits pod and LOCAL traffic to the cluster chain (fixtures/iptables/fragment-grep-xlb).
        if (rule.source && !rule.source.negated) {
          this.node.podCIDRs.add(rule.source.value)
          this.node.detector ??= 'cidr'
        } else if (rule.inInterface && !rule.inInterface.negated)
          this.noteInterface(rule.inInterface.value)
        else if (isLocalSource(rule)) g.localSourceToCluster = true
        continue
      }
      this.warn(
        'IPT_UNKNOWN_RULE',
        `rule in ${chain.name} not understood (target ${target || 'none'}); kept out of the service model`,
        rule.line,
      )
    }
    if (chain.ruleCount === 0) this.emptyDispatchChains.push({g, chain})
    if (kind === 'svc') g.cascade = cascade
    else if (cascade !== null) g.localCascade = cascade
  }

  private readGroupChains(g: Group): void {
    const {svc, svl, ext, fw, xlb} = g.chains
    if (svc) this.readDispatchChain(g, svc, 'svc')
    if (svl) this.readDispatchChain(g, svl, 'svl')
    if (xlb) this.readDispatchChain(g, xlb, 'xlb')
    if (ext) {
      for (const rule of ext.rules) {
        this.noteRef(g, rule)
        const comment = this.commentOf(rule)
        this.nameGroup(g, rule)
        const into = rule.target ? perServiceChain(rule.target) : null
        if (into) g.jumps.push({from: 'ext', to: into.kind})
        const srcTypeLocal = findMatch(rule, '--src-type')?.values[0] === 'LOCAL'
        if (rule.target === KUBE_MARK_MASQ) {
          if (comment?.kind === 'ext-masquerade' && !srcTypeLocal) g.etp ??= 'Cluster'
          else if (srcTypeLocal || comment?.kind === 'ext-local-masquerade') g.etp = 'Local'
        } else if (into?.kind === 'svl') {
          g.etp = 'Local'
        } else if (into?.kind === 'svc') {
          if (rule.source && !rule.source.negated) {
            // "pod traffic for C external destinations": the short-circuit of ETP=Local (docs/kube-proxy-layouts.md §2.4).
            g.etp = 'Local'
            this.node.podCIDRs.add(rule.source.value)
            this.node.detector ??= 'cidr'
          } else if (rule.inInterface && !rule.inInterface.negated) {
            g.etp = 'Local'
            this.noteInterface(rule.inInterface.value)
          } else if (srcTypeLocal) {
            g.etp = 'Local'
            g.localSourceToCluster = true
          } else {
            g.etp ??= 'Cluster'
          }
        } else {
          this.warn(
            'IPT_UNKNOWN_RULE',
            `rule in ${ext.name} not understood (target ${rule.target ?? 'none'}); kept out of the service model`,
            rule.line,
          )
        }
      }
      if (ext.ruleCount === 0)
        this.warn('IPT_EMPTY_CHAIN', `${ext.name} is declared but has no rules`, ext.line)
    }
    if (fw) {
      for (const rule of fw.rules) {
        this.noteRef(g, rule)
        this.nameGroup(g, rule)
        const into = rule.target ? perServiceChain(rule.target) : null
        if (into && into.kind !== 'fw') g.jumps.push({from: 'fw', to: into.kind})
        // `-s 198.51.100.7/32` is read as the address (rule.source drops /32): a range is a CIDR.
        if (into && into.kind !== 'fw' && rule.source && !rule.source.negated)
          g.ranges.push(toCidr(rule.source.value))
        if (rule.target === KUBE_MARK_DROP && !rule.source) g.fwMarkDrop = true
        if (into?.kind === 'xlb') g.etp = 'Local'
        else if (into?.kind === 'svc') g.etp ??= 'Cluster'
      }
    }
  }
  // SEP chains: the DNAT gives the endpoint.
  private readSepChain(g: Group, ep: EndpointDraft): void {
    const chain = ep.chain
    if (chain === undefined || chain.deletedLine !== null) {
      this.warn(
        'IPT_MISSING_CHAIN',
        `${ep.sep} is jumped to but ${chain ? 'deleted by -X' : 'never declared'}; no endpoint is read for it`,
        g.chains.svc?.line ?? g.chains.svl?.line ?? null,
      )
      return
    }
    let dnat: IptablesRule | null = null
    for (let i = 0, n = chain.ruleCount; i < n; i++) {
      const rule = chain.ruleAt(i)
      this.noteRef(g, rule)
      this.nameGroup(g, rule)
      if (rule.target === 'DNAT') dnat ??= rule
      else if (rule.target === 'MARK' && isMasqueradeMarking(rule))
        this.noteMarkTarget(rule) // 2015 hairpin: MARK, not KUBE-MARK-MASQ (fixtures/iptables/legacy-k8s-1.1)
      else if (rule.target !== KUBE_MARK_MASQ)
        this.warn(
          'IPT_UNKNOWN_RULE',
          `rule in ${chain.name} not understood (target ${rule.target ?? 'none'})`,
          rule.line,
        )
    }
    const to = dnat ? findTargetValue(dnat, '--to-destination') : undefined
    const hostPort = to ? splitHostPort(to) : null
    if (!dnat || !to || !hostPort) {
      this.warn(
        chain.ruleCount === 0 ? 'IPT_EMPTY_CHAIN' : 'IPT_SEP_NO_DNAT',
        chain.ruleCount === 0
          ? `${chain.name} is declared but has no rules; it is not an endpoint`
          : `${chain.name} has no DNAT --to-destination; it is not an endpoint`,
        chain.line,
      )
      return
    }
    ep.ip = hostPort.ip
    ep.port = hostPort.port
    ep.written = to
  }
  private readSepChains(g: Group): void {
    const endpoints = g.endpoints
    for (let i = 0; i < endpoints.length; i++) this.readSepChain(g, endpoints[i]!)
  }

  /**
   * A fragment without the KUBE-SERVICES jump (grep for a chain name, a partial sync): the SVC or
   * SVL chain's "C cluster IP" masquerade rule, written with that jump, still gives the ClusterIP.
   */
  private recoverClusterIp(g: Group): void {
    const rule = g.clusterIpRule
    // Without a jump to a KUBE-SEP chain the chain is no service's path here: a focused read
    // keeps one such rule of another service as node evidence (./focus.ts).
    if (
      rule === null ||
      g.endpoints.length === 0 ||
      g.frontends.some((f) => f.type === 'ClusterIP')
    )
      return
    // A dump that declares KUBE-SERVICES shows all of it: a chain it does not jump to is an orphan.
    if (this.natChains.get(KUBE_SERVICES)?.declared === true) return
    this.addFrontend(g, {
      type: 'ClusterIP',
      ip: rule.ip,
      port: rule.port,
      sourceRanges: [],
      action: 'forward',
      via: rule.via,
    })
    if (rule.via === 'svl') g.itp = 'Local'
    else g.itp ??= 'Cluster'
    g.missing.push(KUBE_SERVICES)
  }

  private reportOrphanSeps(): void {
    // As many live SEP chains jumped to as there are: none is an orphan, and the nat chains need no second pass.
    for (const chain of this.focused || this.jumpedSeps === this.liveSepChains
      ? []
      : this.natChains.values()) {
      if (
        chain.deletedLine === null &&
        chain.name.startsWith(SEP_PREFIX) &&
        chain.passMark !== this.jumpedMark
      ) {
        this.warn(
          'IPT_ORPHAN_CHAIN',
          `${chain.name} is not jumped to by any service chain; not read as an endpoint`,
          chain.line,
        )
      }
    }
  }

  // ---- 5. filter: no-endpoint REJECT / no-local-endpoint DROP, health checks, firewall.
  private readFilter(): void {
    for (const g of this.groups.values())
      if (g.spn !== null && g.protocol !== null) this.bySpn.set(`${g.spn}|${g.protocol}`, g)
    for (const {spn, protocol, rule} of this.byNameLater) {
      const g = protocol ? this.bySpn.get(`${spn}|${protocol}`) : undefined
      if (g) this.noteRef(g, rule)
      else if (!this.focused)
        this.warn(
          'IPT_UNATTRIBUTED_RULE',
          `masquerade rule for ${spn}, but no other rule of that service port; not read as a service`,
          rule.line,
          'info',
        )
    }
    this.readFilterServices()
    this.readHealthChecks()
    this.readFilterFirewalls()
  }

  private groupBySpn(spn: string, protocol: string): Group {
    const key = `${spn}|${protocol}`
    let g = this.bySpn.get(key)
    if (!g) {
      g = emptyGroup(null)
      g.spn = spn
      g.protocol = protocol
      this.bySpn.set(key, g)
      this.groups.set(`name:${key}`, g)
    }
    return g
  }
  /** filter KUBE-SERVICES and KUBE-EXTERNAL-SERVICES: a service port without (local) endpoints. */
  private readFilterServices(): void {
    for (const chainName of [KUBE_SERVICES, KUBE_EXTERNAL_SERVICES]) {
      const chain = this.filterChains.get(chainName)
      for (const rule of chain?.rules ?? []) {
        const comment = this.commentOf(rule)
        const action = rule.target === 'REJECT' ? 'reject' : rule.target === 'DROP' ? 'drop' : null
        if (
          !comment?.spn ||
          action === null ||
          (comment.kind !== 'no-endpoints' && comment.kind !== 'no-local-endpoints')
        ) {
          this.warn(
            'IPT_UNKNOWN_RULE',
            `rule in filter ${chainName} not understood; kept out of the service model`,
            rule.line,
          )
          continue
        }
        const protocol = rule.protocol?.value ?? null
        if (protocol === null) {
          this.warn(
            'IPT_UNKNOWN_RULE',
            `"${rule.comment}" rule has no -p; cannot tell which service port it is for`,
            rule.line,
          )
          continue
        }
        const g = this.groupBySpn(comment.spn, protocol)
        this.noteRef(g, rule)
        const port = parsePort(rule.dport?.value)
        const nodePort = !rule.destination && findMatch(rule, '--dst-type')?.values[0] === 'LOCAL'
        const ip = rule.destination && !rule.destination.negated ? rule.destination.value : null
        let fe = nodePort
          ? findFrontend(g, nodePortKey(port), (f) => f.type === 'NodePort' && f.port === port)
          : findFrontend(
              g,
              addressKey(ip, port),
              (f) => f.type !== 'NodePort' && f.ip === ip && f.port === port,
            )
        if (!fe) {
          // No nat rule names this address: a service without endpoints has no nat chains (docs/kube-proxy-layouts.md §2.4).
          // In filter KUBE-SERVICES it is the ClusterIP (≤1.2x also put externalIPs there, so only the
          // first address is taken as the ClusterIP); in KUBE-EXTERNAL-SERVICES an externalIP and a
          // LoadBalancer IP look the same, hence "External".
          const type: FrontendType = nodePort
            ? 'NodePort'
            : chainName === KUBE_SERVICES &&
                findFrontend(g, typeKey('ClusterIP'), (f) => f.type === 'ClusterIP') === undefined
              ? 'ClusterIP'
              : 'External'
          fe = this.addFrontend(g, {
            type,
            ip: nodePort ? null : ip,
            port,
            sourceRanges: [],
            action,
            via: null,
          })
        }
        fe.action = action
        if (comment.kind === 'no-local-endpoints') {
          if (fe.type === 'ClusterIP') g.itp = 'Local'
          else g.etp = 'Local'
        }
      }
    }
  }

  /** filter KUBE-NODEPORTS: health check node ports, joined to every protocol of the port name. */
  private readHealthChecks(): void {
    for (const rule of this.filterChains.get(KUBE_NODEPORTS)?.rules ?? []) {
      const comment = this.commentOf(rule)
      if (comment?.kind === 'health-check' && comment.spn && rule.target === 'ACCEPT') {
        this.healthChecks.push({spn: comment.spn, port: parsePort(rule.dport?.value), rule})
      } else {
        this.warn(
          'IPT_UNKNOWN_RULE',
          'rule in filter KUBE-NODEPORTS not understood; kept out of the service model',
          rule.line,
        )
      }
    }
    for (const g of this.groups.values()) {
      if (!g.spn) continue
      const list = this.spnGroups.get(g.spn)
      if (list) list.push(g)
      else this.spnGroups.set(g.spn, [g])
    }
    for (const hc of this.healthChecks) {
      const gs = (this.spnGroups.get(hc.spn) ?? []).filter((g) => g.frontends.length > 0)
      if (gs.length === 0) {
        this.warn(
          'IPT_HEALTH_CHECK_ONLY',
          `health check node port ${hc.port ?? '?'} for ${hc.spn}, but no other rule of that service; not read as a service`,
          hc.rule.line,
          'info',
        )
        continue
      }
      // The health check is always tcp (docs/kube-proxy-layouts.md §2.4) and belongs to every protocol of that port name.
      // A health check alone is not a service (fixtures/iptables/upstream-parse-basic: ns2/svc2).
      for (const g of gs) {
        g.healthCheckNodePort = hc.port
        this.noteRef(g, hc.rule)
      }
    }
  }

  /** filter KUBE-PROXY-FIREWALL, KUBE-FORWARD, KUBE-FIREWALL. */
  private readFilterFirewalls(): void {
    for (const rule of this.filterChains.get(KUBE_PROXY_FIREWALL)?.rules ?? []) {
      const comment = this.commentOf(rule)
      const gs = comment?.spn ? this.spnGroups.get(comment.spn) : undefined
      if (gs) for (const g of gs) this.noteRef(g, rule)
      else
        this.warn(
          'IPT_UNKNOWN_RULE',
          'rule in filter KUBE-PROXY-FIREWALL names no service kp knows; kept out of the service model',
          rule.line,
        )
    }
    for (const rule of this.filterChains.get(KUBE_FORWARD)?.rules ?? []) {
      const ct = findMatch(rule, '--ctstate')
      if (ct && !ct.negated && ct.values[0] === 'INVALID' && rule.target === 'DROP')
        this.node.conntrackInvalidDrop = true
    }
    if (this.filterChains.has(KUBE_FORWARD)) this.node.conntrackInvalidDrop ??= false
    for (const rule of this.filterChains.get(KUBE_FIREWALL)?.rules ?? []) {
      // kube-proxy adds "block incoming localnet connections" only for IPv4 with localhost NodePorts on (docs/kube-proxy-layouts.md §2.3).
      if (this.family === 'IPv4' && rule.comment === 'block incoming localnet connections')
        this.node.localhostNodePorts ??= true
    }
  }

  // ---- node settings from the fixed nat chains.
  private readNodeSettings(): void {
    for (const rule of this.liveTarget(KUBE_MARK_MASQ)?.rules ?? []) {
      if (rule.target === 'MARK') this.noteMarkTarget(rule)
    }
    const postrouting = [
      ...(this.liveTarget(KUBE_POSTROUTING)?.rules ?? []),
      ...(this.natChains.get('POSTROUTING')?.rules.filter((r) => r.comment === SNAT_COMMENT) ?? []),
    ]
    for (const rule of postrouting) {
      if (rule.target === 'MASQUERADE')
        this.node.randomFully =
          findTargetOption(rule, '--random-fully') !== undefined || (this.node.randomFully ?? false)
      const mark = findMatch(rule, '--mark')
      if (mark?.values[0] && rule.target === 'MASQUERADE')
        this.node.masqueradeMark ??= markValue(mark.values[0]) // 2015-era: mark tested on the MASQUERADE rule itself
    }
  }

  private reportEmptyDispatchChains(): void {
    for (const {g, chain} of this.emptyDispatchChains) {
      if (this.focused && g.frontends.length === 0) continue
      // ≤1.2x still jumped into an empty KUBE-SVC for a service without endpoints (the filter REJECT
      // did the work): expected there, suspicious anywhere else.
      const rejected = g.frontends.some((f) => f.action === 'reject')
      this.warn(
        'IPT_EMPTY_CHAIN',
        `${chain.name} is declared but has no rules; no endpoints are read from it${rejected ? ' (the service has no endpoints: its traffic is rejected in the filter table)' : ''}`,
        chain.line,
        rejected ? 'info' : 'warning',
      )
    }
  }
}
