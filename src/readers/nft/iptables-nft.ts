/**
 * iptables mode seen through `nft list ruleset` on an iptables-nft node: tables `ip nat` /
 * `ip filter` (and ip6) holding kube-proxy's KUBE-* chains, translated by nft
 * (fixtures/nft/iptables-nft-multipleservices-older). What changes against iptables-save:
 * * comments are usually gone (iptables-nft keeps them in rule userdata that nft does not
 *   print), so services are recovered by address and port: namespace/name are null and a
 *   service is identified by its ClusterIP:port/proto (docs/model.md);
 * * `-m statistic --probability P` is `meta random & 2147483647 < N`, with P = N / 2^31;
 * * `counter packets 0 bytes 0` on every rule, `xt match "..."` for untranslated matches.
 *
 * Grouping: KUBE-SVC-H, KUBE-SVL-H, KUBE-EXT-H and KUBE-FW-H of one service port share the
 * hash H (docs/kube-proxy-layouts.md §2.6), so frontends are grouped by H; filter-table REJECT/DROP rules join
 * the group that has the same address and port, or form their own.
 */
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
import {parsePort, splitHostPort, toCidr} from '../../core/address.js'
import {FrontendIndex, frontendKey} from './frontends.js'
import type {NftChain, NftTable} from './ir.js'
import type {NodeFacts} from './node-facts.js'
import type {Reporter} from './reporter.js'
import {
  addressMatch,
  hasSequence,
  interfaceMatch,
  markSetOr,
  protocolOf,
  valueAfter,
  verdictOf,
} from './words.js'
import {
  EXT_CHAIN_PREFIX,
  FW_CHAIN_PREFIX,
  KUBE_CHAIN_PREFIX,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FORWARD,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  SEP_CHAIN_PREFIX,
  SVC_CHAIN_PREFIX,
  SVL_CHAIN_PREFIX,
  XLB_CHAIN_PREFIX,
} from '../../kube-proxy/iptables-names.js'

const RANDOM_SCALE = 2 ** 31

interface Group {
  key: string
  protocol: Protocol
  namespace: string | null
  name: string | null
  portName: string | null
  frontends: Map<string, Frontend>
  svc: string | null
  svl: string | null
  ext: string | null
  fw: string | null
  itp: TrafficPolicy | null
  etp: TrafficPolicy | null
  affinity: boolean
  rules: SourceRef[]
}

/** Address, protocol, port and target of a KUBE-SERVICES / KUBE-NODEPORTS style rule. */
interface Dispatch {
  ip: string | null
  protocol: Protocol | null
  port: number | null
  target: string | null
  verdict: string | null
}

function dispatchOf(words: readonly string[]): Dispatch {
  const daddr = addressMatch(words, 'daddr')
  let protocol = protocolOf(valueAfter(words, 'meta', 'l4proto')?.value)
  let port: number | null = null
  for (let i = 0; i + 2 < words.length; i++) {
    if (
      words[i + 1] === 'dport' &&
      (words[i] === 'tcp' || words[i] === 'udp' || words[i] === 'sctp')
    ) {
      protocol ??= protocolOf(words[i])
      port = parsePort(words[i + 2])
      break
    }
  }
  const v = verdictOf(words)
  return {
    ip: daddr && !daddr.negated ? (daddr.values[0] ?? null) : null,
    protocol,
    port,
    target: v?.target ?? null,
    verdict: v?.kind ?? null,
  }
}

function hashOf(chain: string): string | null {
  for (const p of [
    SVC_CHAIN_PREFIX,
    SVL_CHAIN_PREFIX,
    EXT_CHAIN_PREFIX,
    FW_CHAIN_PREFIX,
    XLB_CHAIN_PREFIX,
  ])
    if (chain.startsWith(p)) return chain.slice(p.length)
  return null
}

export class IptablesNftReader {
  private readonly groups = new Map<string, Group>()
  private readonly byFrontend = new FrontendIndex<Group>()
  private readonly family: Family

  constructor(
    private readonly nat: NftTable | undefined,
    private readonly filter: NftTable | undefined,
    family: string,
    private readonly path: string,
    private readonly facts: NodeFacts,
    private readonly reporter: Reporter,
  ) {
    this.family = family === 'ip6' ? 'IPv6' : 'IPv4'
  }

  private ref(line: number): SourceRef {
    return {path: this.path, line}
  }

  private group(key: string, protocol: Protocol): Group {
    let g = this.groups.get(key)
    if (!g) {
      g = {
        key,
        protocol,
        namespace: null,
        name: null,
        portName: null,
        frontends: new Map(),
        svc: null,
        svl: null,
        ext: null,
        fw: null,
        itp: null,
        etp: null,
        affinity: false,
        rules: [],
      }
      this.groups.set(key, g)
    }
    return g
  }

  private frontend(
    g: Group,
    type: Frontend['type'],
    ip: string | null,
    port: number | null,
    action: FrontendAction,
    line: number,
  ): Frontend {
    return this.byFrontend.add(g, type, ip, port, action, this.ref(line))
  }

  read(): ServicePort[] {
    const nat = this.nat
    if (nat) {
      this.readNatServices(nat)
      this.readNatNodePorts(nat)
      this.readNodeChains(nat)
    }
    if (this.filter) this.readFilter(this.filter)
    return [...this.groups.values()].map((g) => this.finish(g))
  }

  private chain(name: string | null): NftChain | undefined {
    return name === null ? undefined : this.nat?.chains.get(name)
  }

  /** The comment kube-proxy writes on the ClusterIP rule, when nft shows it: `ns/svc:port cluster IP`. */
  private nameFromComment(g: Group, comment: string | null): void {
    if (comment === null || g.name !== null) return
    const space = comment.indexOf(' ')
    const spn = space < 0 ? comment : comment.slice(0, space)
    const slash = spn.indexOf('/')
    if (slash <= 0) return
    const colon = spn.indexOf(':', slash)
    g.namespace = spn.slice(0, slash)
    g.name = colon < 0 ? spn.slice(slash + 1) : spn.slice(slash + 1, colon)
    g.portName = colon < 0 ? '' : spn.slice(colon + 1)
  }

  private readNatServices(nat: NftTable): void {
    for (const rule of nat.chains.get(KUBE_SERVICES)?.rules() ?? []) {
      const d = dispatchOf(rule.tokens)
      if (d.target === KUBE_NODEPORTS) {
        if (d.ip) this.facts.addNodePortAddress(d.ip)
        else if (hasSequence(rule.tokens, 'fib', 'daddr', 'type', 'local'))
          this.facts.allNodeAddresses()
        continue
      }
      if (d.target === KUBE_MARK_MASQ) {
        this.readDetector(rule.tokens)
        continue
      }
      const h = d.target ? hashOf(d.target) : null
      if (!h || !d.ip || d.protocol === null || d.port === null) {
        this.reporter.report(
          'warning',
          'NFT_UNKNOWN_RULE',
          `KUBE-SERVICES: a rule kp does not recognise: ${rule.tokens.join(' ')}`,
          this.ref(rule.line),
        )
        continue
      }
      const g = this.group(h, d.protocol)
      this.nameFromComment(g, rule.comment)
      if (d.target!.startsWith(SVC_CHAIN_PREFIX) || d.target!.startsWith(SVL_CHAIN_PREFIX)) {
        this.frontend(g, 'ClusterIP', d.ip, d.port, 'forward', rule.line)
        if (d.target!.startsWith(SVL_CHAIN_PREFIX)) {
          g.itp = 'Local'
          g.svl = d.target
        } else {
          g.itp ??= 'Cluster'
          g.svc = d.target
        }
      } else if (d.target!.startsWith(FW_CHAIN_PREFIX)) {
        this.frontend(g, 'LoadBalancer', d.ip, d.port, 'forward', rule.line)
        g.fw = d.target
      } else {
        // KUBE-EXT-: an externalIP or a LoadBalancer IP; without comments nft cannot tell which.
        this.frontend(g, 'External', d.ip, d.port, 'forward', rule.line)
        g.ext ??= d.target
      }
    }
  }

  private readNatNodePorts(nat: NftTable): void {
    for (const rule of nat.chains.get(KUBE_NODEPORTS)?.rules() ?? []) {
      const d = dispatchOf(rule.tokens)
      if (d.target === KUBE_MARK_MASQ) continue
      const h = d.target ? hashOf(d.target) : null
      if (!h || d.protocol === null || d.port === null) {
        this.reporter.report(
          'warning',
          'NFT_UNKNOWN_RULE',
          `KUBE-NODEPORTS: a rule kp does not recognise: ${rule.tokens.join(' ')}`,
          this.ref(rule.line),
        )
        continue
      }
      const g = this.group(h, d.protocol)
      this.frontend(g, 'NodePort', null, d.port, 'forward', rule.line)
      if (d.target!.startsWith(EXT_CHAIN_PREFIX)) g.ext ??= d.target
      else g.svc ??= d.target
    }
  }

  /** KUBE-MARK-MASQ (the mark), KUBE-POSTROUTING (random-fully). */
  private readNodeChains(nat: NftTable): void {
    for (const rule of nat.chains.get(KUBE_MARK_MASQ)?.rules() ?? [])
      this.facts.masqueradeMark ??= markSetOr(rule.tokens)
    for (const rule of nat.chains.get(KUBE_POSTROUTING)?.rules() ?? []) {
      const i = rule.tokens.indexOf('masquerade')
      if (i >= 0)
        this.facts.randomFully =
          (this.facts.randomFully ?? false) ||
          rule.tokens.slice(i + 1).some((w) => w.includes('fully-random'))
    }
  }

  private readDetector(words: readonly string[]): void {
    const saddr = addressMatch(words, 'saddr')
    const iface = interfaceMatch(words)
    this.facts.sawInternalChain = true
    if (saddr?.negated) {
      for (const v of saddr.values) this.facts.addCidr(toCidr(v))
      this.facts.masqueradeAll ??= false
    } else if (iface?.negated) {
      this.facts.addInterface(iface.name)
      this.facts.masqueradeAll ??= false
    } else if (!saddr && !iface) {
      this.facts.masqueradeAll = true
    }
  }

  /** filter: KUBE-SERVICES (ClusterIP without endpoints), KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL, KUBE-FORWARD. */
  private readFilter(filter: NftTable): void {
    const place = (
      rule: {tokens: string[]; line: number},
      chain: string,
      external: boolean,
    ): void => {
      const d = dispatchOf(rule.tokens)
      const action: FrontendAction | null =
        d.verdict === 'reject' ? 'reject' : d.verdict === 'drop' ? 'drop' : null
      if (action === null || d.protocol === null || d.port === null) {
        this.reporter.report(
          'warning',
          'NFT_UNKNOWN_RULE',
          `${chain}: a rule kp does not recognise: ${rule.tokens.join(' ')}`,
          this.ref(rule.line),
        )
        return
      }
      // `-m addrtype --dst-type LOCAL`: `fib daddr type local` in nft text, `xt match "addrtype"` in nft JSON.
      const nodePort =
        d.ip === null &&
        (hasSequence(rule.tokens, 'fib', 'daddr', 'type', 'local') ||
          hasSequence(rule.tokens, 'xt', 'match', '"addrtype"'))
      if (d.ip === null && !nodePort) {
        this.reporter.report(
          'warning',
          'NFT_UNKNOWN_RULE',
          `${chain}: a rule kp does not recognise: ${rule.tokens.join(' ')}`,
          this.ref(rule.line),
        )
        return
      }
      const g =
        this.byFrontend.ownerOf(d.ip, d.protocol, d.port) ??
        this.group(`?${d.ip ?? '*'}|${d.protocol}|${d.port}`, d.protocol)
      const type: Frontend['type'] = nodePort ? 'NodePort' : external ? 'External' : 'ClusterIP'
      const fe = this.frontend(
        g,
        g.frontends.get(frontendKey(d.ip, d.port))?.type ?? type,
        d.ip,
        d.port,
        action,
        rule.line,
      )
      fe.action = action
      if (action === 'drop') {
        if (fe.type === 'ClusterIP') g.itp = 'Local'
        else g.etp = 'Local'
      }
    }
    for (const rule of filter.chains.get(KUBE_SERVICES)?.rules() ?? [])
      place(rule, KUBE_SERVICES, false)
    for (const rule of filter.chains.get(KUBE_EXTERNAL_SERVICES)?.rules() ?? [])
      place(rule, KUBE_EXTERNAL_SERVICES, true)
    for (const rule of filter.chains.get(KUBE_PROXY_FIREWALL)?.rules() ?? []) {
      const d = dispatchOf(rule.tokens)
      if (d.protocol === null) continue
      const fe = this.byFrontend
        .ownerOf(d.ip, d.protocol, d.port)
        ?.frontends.get(frontendKey(d.ip, d.port))
      if (fe && fe.type !== 'ClusterIP') fe.type = 'LoadBalancer'
    }
    const hc = filter.chains.get(KUBE_NODEPORTS)?.ruleCount ?? 0
    if (hc > 0) {
      this.reporter.report(
        'info',
        'NFT_HEALTHCHECK_UNATTRIBUTED',
        `${hc} healthCheckNodePort rules in filter KUBE-NODEPORTS cannot be tied to a service without their comments`,
        this.ref(filter.chains.get(KUBE_NODEPORTS)!.line),
      )
    }
    const fwd = filter.chains.get(KUBE_FORWARD)
    if (fwd)
      this.facts.conntrackInvalidDrop = fwd
        .rules()
        .some(
          (r) =>
            hasSequence(r.tokens, 'ct', 'state', 'invalid') && verdictOf(r.tokens)?.kind === 'drop',
        )
  }

  private finish(g: Group): ServicePort {
    if (g.fw) {
      const ranges: string[] = []
      for (const rule of this.chain(g.fw)?.rules() ?? []) {
        const saddr = addressMatch(rule.tokens, 'saddr')
        const v = verdictOf(rule.tokens)
        if (saddr && !saddr.negated && v?.target?.startsWith(KUBE_CHAIN_PREFIX))
          for (const x of saddr.values) ranges.push(toCidr(x))
      }
      for (const fe of g.frontends.values())
        if (fe.type === 'LoadBalancer') fe.sourceRanges = ranges
      g.ext ??= EXT_CHAIN_PREFIX + g.key
    }
    const ext = this.chain(g.ext)
    if (ext) {
      g.rules.push(this.ref(ext.line))
      for (const rule of ext.rules()) {
        const v = verdictOf(rule.tokens)
        if (
          hasSequence(rule.tokens, 'fib', 'saddr', 'type', 'local') ||
          v?.target?.startsWith(SVL_CHAIN_PREFIX)
        )
          g.etp = 'Local'
        if (v?.target?.startsWith(SVL_CHAIN_PREFIX)) g.svl ??= v.target
        if (v?.target?.startsWith(SVC_CHAIN_PREFIX)) {
          g.svc ??= v.target
          const saddr = addressMatch(rule.tokens, 'saddr')
          if (saddr && !saddr.negated) for (const x of saddr.values) this.facts.addCidr(toCidr(x))
        }
      }
      g.etp ??= 'Cluster'
    }
    const cluster = g.svc ? this.readSvcChain(g, g.svc) : null
    const local = g.svl ? this.readSvcChain(g, g.svl) : null
    const primary = g.itp === 'Local' ? local : (cluster ?? local)
    const localKnown = g.itp === 'Local' || g.etp === 'Local'
    const endpoints = new Map<string, Endpoint>()
    for (const list of [primary, cluster, local]) {
      for (const e of list ?? []) {
        const k = `${e.ip}|${e.port}`
        let ep = endpoints.get(k)
        if (!ep) {
          ep = {
            ip: e.ip,
            port: e.port,
            local: localKnown ? false : null,
            share: list === primary ? e.share : 0,
            weight: null,
            state: null,
          }
          endpoints.set(k, ep)
        }
        if (list === local && localKnown) ep.local = true
      }
    }
    const hasExternal = [...g.frontends.values()].some((f) => f.type !== 'ClusterIP')
    return {
      namespace: g.namespace,
      name: g.name,
      portName: g.portName,
      protocol: g.protocol,
      family: this.family,
      frontends: [...g.frontends.values()],
      healthCheckNodePort: null,
      internalTrafficPolicy: [...g.frontends.values()].some((f) => f.type === 'ClusterIP')
        ? g.itp
        : null,
      externalTrafficPolicy: hasExternal ? g.etp : null,
      sessionAffinity: g.affinity ? {type: 'ClientIP', timeoutSeconds: null} : null,
      scheduler: null,
      endpoints: [...endpoints.values()],
      rules: g.rules,
    }
  }

  /**
   * KUBE-SVC-H / KUBE-SVL-H: the cascade of `meta random & 2147483647 < N jump KUBE-SEP-X`,
   * each a conditional probability N / 2^31, then an unconditional last jump.
   */
  private readSvcChain(g: Group, name: string): {ip: string; port: number | null; share: number}[] {
    const chain = this.chain(name)
    if (!chain) {
      this.reporter.report(
        'warning',
        'NFT_MISSING_CHAIN',
        `chain ${name} is jumped to but not in table ${this.nat?.family} nat`,
        null,
      )
      return []
    }
    g.rules.push(this.ref(chain.line))
    let remaining = 1
    const out: {ip: string; port: number | null; share: number}[] = []
    for (const rule of chain.rules()) {
      const w = rule.tokens
      const v = verdictOf(w)
      if (v?.target === KUBE_MARK_MASQ) {
        this.readDetector(w)
        continue
      }
      if (!v?.target?.startsWith(SEP_CHAIN_PREFIX)) {
        this.reporter.report(
          'warning',
          'NFT_UNKNOWN_RULE',
          `${name}: a rule kp does not recognise: ${w.join(' ')}`,
          this.ref(rule.line),
        )
        continue
      }
      // ClientIP affinity (`-m recent --rcheck`, untranslated: `xt match "recent"`) comes before
      // the cascade and picks no new endpoint; nft cannot show its timeout.
      if (hasSequence(w, 'xt', 'match', '"recent"')) {
        g.affinity = true
        continue
      }
      let p = 1
      const r = w.indexOf('random')
      if (r >= 0 && w[r + 1] === '&' && w[r + 3] === '<') {
        p = Number(w[r + 4]) / RANDOM_SCALE
        // A threshold outside 0..2^31 (or not a number) would give shares outside 0..1.
        if (!(p >= 0 && p <= 1)) {
          this.reporter.report(
            'warning',
            'NFT_INCONSISTENT',
            `${name}: random threshold ${w[r + 4]} is not a number from 0 to ${RANDOM_SCALE}`,
            this.ref(rule.line),
          )
          p = p > 1 ? 1 : 0
        }
      }
      const ep = this.readSep(v.target, rule.line)
      const share = remaining * p
      remaining -= share
      if (ep) out.push({...ep, share})
    }
    return out
  }

  private readSep(name: string, line: number): {ip: string; port: number | null} | null {
    const chain = this.chain(name)
    if (!chain) {
      this.reporter.report(
        'warning',
        'NFT_MISSING_CHAIN',
        `chain ${name} is jumped to but not in the nat table`,
        this.ref(line),
      )
      return null
    }
    for (const rule of chain.rules()) {
      const dnat = rule.tokens.indexOf('dnat')
      if (dnat < 0) continue
      const to = rule.tokens.indexOf('to', dnat)
      const hp = to >= 0 && rule.tokens[to + 1] ? splitHostPort(rule.tokens[to + 1]!) : null
      if (hp) return hp
    }
    this.reporter.report(
      'warning',
      'NFT_NO_DNAT',
      `${name} has no dnat nft can show (an \`xt target "DNAT"\` hides the endpoint); its endpoint is unknown`,
      this.ref(chain.line),
    )
    return null
  }
}

/** Tables of iptables-nft that hold kube-proxy's iptables-mode chains. */
export function hasKubeChains(table: NftTable): boolean {
  if (table.name !== 'nat' && table.name !== 'filter') return false
  for (const name of table.chains.keys())
    if (name === KUBE_SERVICES || name.startsWith(SVC_CHAIN_PREFIX) || name === KUBE_NODEPORTS)
      return true
  return false
}
