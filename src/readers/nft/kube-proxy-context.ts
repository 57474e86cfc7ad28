/**
 * What the readers of one kube-proxy nft table share: the table, the service ports gathered so
 * far, and the lookups that note which chains and sets something points at (leftovers are the rest).
 */
import {toCidr} from '../../core/address.js'
import type {
  Family,
  Frontend,
  FrontendAction,
  Protocol,
  SourceRef,
  TrafficPolicy,
} from '../../model/types.js'
import {CLUSTER_IPS_SET, HAIRPIN_CONNECTIONS_SET} from '../../kube-proxy/nftables-names.js'
import {FrontendIndex} from './frontends.js'
import type {NftChain, NftRule, NftSet, NftTable} from './ir.js'
import type {NodeFacts} from './node-facts.js'
import {parsePerServiceName, type PerServiceName} from './per-service-name.js'
import type {Reporter} from './reporter.js'
import {addressMatch, interfaceMatch, protocolOf} from './words.js'

export interface ServiceAcc {
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

export interface SelectedEndpoint {
  ip: string
  port: number | null
  share: number
}

/** The state of one table being read, and the lookups every stage of the reading uses. */
export class KubeProxyTableContext {
  readonly services = new Map<string, ServiceAcc>()
  /** `IP|proto|port` and `*|proto|port` -> the service that owns that frontend. */
  readonly byFrontend = new FrontendIndex<ServiceAcc>()
  /** Names of sets, and of chains not in the table, something points at (chains that are: NftChain.pointedAt). */
  readonly used = new Set<string>()
  readonly clusterIps: Set<string> | null
  /**
   * 1.36+: `IP|proto|port` of every endpoint on this node (hairpin-connections lists each as
   * `EP . EP . proto . port`); null when the table has no such set and locality is unknown.
   */
  readonly hairpin: Set<string> | null
  readonly family: Family

  constructor(
    readonly table: NftTable,
    readonly path: string,
    readonly facts: NodeFacts,
    readonly reporter: Reporter,
  ) {
    this.family = table.family === 'ip6' ? 'IPv6' : 'IPv4'
    const cips = table.sets.get(CLUSTER_IPS_SET)
    this.clusterIps = cips ? new Set(cips.elements.map((e) => e.key[0]!)) : null
    const hairpin = table.sets.get(HAIRPIN_CONNECTIONS_SET)
    this.hairpin = hairpin
      ? new Set(hairpin.elements.map((e) => `${e.key[0]}|${protocolOf(e.key[2])}|${e.key[3]}`))
      : null
    if (hairpin) facts.sign('hairpin-connections', {path, line: hairpin.line})
  }

  ref(line: number): SourceRef {
    return {path: this.path, line}
  }

  /** A per-service name a verdict points at; also for chains missing from a truncated dump. */
  nameOf(target: string): PerServiceName | undefined {
    return parsePerServiceName(target) ?? undefined
  }

  serviceFor(p: PerServiceName, protocol: Protocol, line: number): ServiceAcc {
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

  newAcc(
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

  addFrontend(
    acc: ServiceAcc,
    type: Frontend['type'],
    ip: string | null,
    port: number,
    action: FrontendAction,
    line: number,
  ): Frontend {
    return this.byFrontend.add(acc, type, ip, port, action, this.ref(line))
  }

  chain(name: string): NftChain | undefined {
    return this.table.chains.get(name)
  }

  use(chainName: string, line: number, from: string): NftChain | null {
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
  markPointedAt(chainName: string): NftChain | undefined {
    const chain = this.chain(chainName)
    if (chain) chain.pointedAt = true
    else this.used.add(chainName)
    return chain
  }

  set(name: string): NftSet | undefined {
    return this.table.sets.get(name)
  }

  /** The pod-traffic detector in a ClusterIP masquerade rule (`ip saddr != CIDR`, `iif != X`). */
  readDetector(words: readonly string[], rule: NftRule): void {
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
}
