/**
 * The maps and sets that name every frontend of an nftables-mode table (`service-ips`,
 * `service-nodeports`, `no-endpoint-*`, `firewall-ips`): each element becomes a service port's frontend.
 */
import {parsePort} from '../../core/address.js'
import type {Frontend, FrontendAction, Protocol} from '../../model/types.js'
import {
  FIREWALL_IPS_MAP,
  NFT_COMMENT_MAX_BYTES,
  REJECT_CHAIN,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
} from '../../kube-proxy/nftables-names.js'
import type {NftElement} from './ir.js'
import type {KubeProxyTableContext, ServiceAcc} from './kube-proxy-context.js'
import type {PerServiceName} from './per-service-name.js'
import {protocolOf} from './words.js'

/** Reads the map elements into the context's service ports and notes the chains they point at. */
export class ServiceMapReader {
  constructor(private readonly ctx: KubeProxyTableContext) {}

  private elementTarget(value: string[] | null): {kind: string; target: string | null} | null {
    if (!value || value.length === 0) return null
    if ((value[0] === 'goto' || value[0] === 'jump') && value[1] !== undefined)
      return {kind: value[0], target: value[1]}
    return {kind: value[0]!, target: null}
  }

  /** The per-service chain a map element jumps or goes to, with its name read; null when it names none. */
  private elementChain(el: NftElement): {target: string; name: PerServiceName} | null {
    const target = this.elementTarget(el.value)?.target
    const name = target ? this.ctx.nameOf(target) : undefined
    return target && name ? {target, name} : null
  }

  private unexpectedElement(mapName: string, el: NftElement): void {
    this.ctx.reporter.report(
      'warning',
      'NFT_UNEXPECTED_ELEMENT',
      `${mapName} element not in kube-proxy's shape: ${el.key.join(' . ')} : ${(el.value ?? []).join(' ')}`,
      this.ctx.ref(el.line),
    )
  }

  readServiceIps(): void {
    const map = this.ctx.set(SERVICE_IPS_MAP)
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
      const acc = this.ctx.serviceFor(p, protocol, el.line)
      this.ctx.use(target, el.line, SERVICE_IPS_MAP)
      if (p.prefix === 'external') {
        this.ctx.addFrontend(acc, 'External', ip, port, 'forward', el.line)
        acc.externalChain = target
      } else {
        this.ctx.addFrontend(acc, 'ClusterIP', ip, port, 'forward', el.line)
        if (this.ctx.clusterIps && !this.ctx.clusterIps.has(ip)) {
          this.ctx.reporter.report(
            'warning',
            'NFT_INCONSISTENT',
            `${ip} points at ${target} like a ClusterIP but is not in the cluster-ips set`,
            this.ctx.ref(el.line),
          )
        }
        acc.internalChain = target
        acc.itp = p.prefix === 'local' ? 'Local' : 'Cluster'
        if (p.prefix === 'local') acc.localChain = target
        else acc.clusterChain = target
      }
    }
  }

  readNodePorts(): void {
    const map = this.ctx.set(SERVICE_NODEPORTS_MAP)
    for (const el of map?.elements ?? []) {
      const [protoWord, portWord] = el.key
      const protocol = protocolOf(protoWord)
      const port = parsePort(portWord)
      const chain = this.elementChain(el)
      if (protocol === null || port === null || !chain || chain.name.prefix !== 'external') {
        this.unexpectedElement(SERVICE_NODEPORTS_MAP, el)
        continue
      }
      const acc = this.ctx.serviceFor(chain.name, protocol, el.line)
      this.ctx.use(chain.target, el.line, SERVICE_NODEPORTS_MAP)
      this.ctx.addFrontend(acc, 'NodePort', null, port, 'forward', el.line)
      acc.externalChain = chain.target
    }
  }

  /** `no-endpoint-services` / `no-endpoint-nodeports`: `KEY comment "SPN" : goto reject-chain | drop`. */
  readNoEndpoints(mapName: string, nodePorts: boolean): void {
    const map = this.ctx.set(mapName)
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
        (this.ctx.clusterIps
          ? this.ctx.clusterIps.has(ip!)
          : ![...acc.frontends.values()].some((f) => f.type === 'ClusterIP'))
      const type: Frontend['type'] = nodePorts ? 'NodePort' : isClusterIp ? 'ClusterIP' : 'External'
      const fe = this.ctx.addFrontend(acc, type, ip ?? null, port, action, el.line)
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
    if (comment !== null && Buffer.byteLength(comment) >= NFT_COMMENT_MAX_BYTES) {
      const cut = this.serviceForCutComment(comment, ip, protocol, port, line)
      if (cut) return cut
    }
    if (comment !== null) {
      const slash = comment.indexOf('/')
      const colon = comment.indexOf(':', slash + 1)
      if (slash > 0) {
        const namespace = comment.slice(0, slash)
        const name = colon < 0 ? comment.slice(slash + 1) : comment.slice(slash + 1, colon)
        const portName = colon < 0 ? '' : comment.slice(colon + 1)
        const base = `${namespace}/${name}/${protocol.toLowerCase()}/${portName}`
        return (
          this.ctx.services.get(base) ?? this.ctx.newAcc(base, namespace, name, portName, protocol)
        )
      }
      this.ctx.reporter.report(
        'warning',
        'NFT_UNEXPECTED_ELEMENT',
        `element comment "${comment}" is not a service port name (ns/name:port)`,
        this.ctx.ref(line),
      )
    }
    const known = this.ctx.byFrontend.ownerOf(ip, protocol, port)
    if (known) return known
    const key = `?${ip}|${protocol}|${port}`
    return this.ctx.services.get(key) ?? this.ctx.newAcc(key, null, null, null, protocol)
  }

  /**
   * A comment as long as nft keeps may be a longer name cut there (kube-proxy 1.37): the service
   * whose frontend this is (its chains carry the whole name and its hash), else one whose name
   * starts with the comment; else the namespace and name when the cut left them whole, with the
   * port name unknown. Never a name the comment does not prove.
   */
  private serviceForCutComment(
    comment: string,
    ip: string,
    protocol: Protocol,
    port: number,
    line: number,
  ): ServiceAcc | null {
    const named = (a: ServiceAcc): string => `${a.namespace}/${a.name}:${a.portName}`
    let acc: ServiceAcc | undefined = this.ctx.byFrontend.ownerOf(ip, protocol, port)
    if (acc && (acc.namespace === null || !named(acc).startsWith(comment))) acc = undefined
    acc ??= [...this.ctx.services.values()].find(
      (a) => a.namespace !== null && a.protocol === protocol && named(a).startsWith(comment),
    )
    this.ctx.reporter.report(
      'info',
      'NFT_COMMENT_CUT',
      acc
        ? `element comment of ${NFT_COMMENT_MAX_BYTES} bytes, maybe cut: matched to ${named(acc)} by its frontend and chains`
        : `element comment of ${NFT_COMMENT_MAX_BYTES} bytes, maybe cut: its port name is not known`,
      this.ctx.ref(line),
    )
    if (acc) return acc
    const slash = comment.indexOf('/')
    const colon = comment.indexOf(':', slash + 1)
    if (slash <= 0 || colon < 0) return null
    const key = `?${comment.slice(0, colon)}|${ip}|${protocol}|${port}`
    return (
      this.ctx.services.get(key) ??
      this.ctx.newAcc(key, comment.slice(0, slash), comment.slice(slash + 1, colon), null, protocol)
    )
  }

  readFirewallIps(): void {
    const map = this.ctx.set(FIREWALL_IPS_MAP)
    for (const el of map?.elements ?? []) {
      const [ip, protoWord, portWord] = el.key
      const protocol = protocolOf(protoWord)
      const port = parsePort(portWord)
      const chain = this.elementChain(el)
      if (!ip || protocol === null || port === null || !chain || chain.name.prefix !== 'firewall') {
        this.unexpectedElement(FIREWALL_IPS_MAP, el)
        continue
      }
      const acc = this.ctx.serviceFor(chain.name, protocol, el.line)
      this.ctx.use(chain.target, el.line, FIREWALL_IPS_MAP)
      // Only LoadBalancer IPs have source ranges, so this External frontend is a LoadBalancer.
      const fe = this.ctx.addFrontend(acc, 'LoadBalancer', ip, port, 'forward', el.line)
      fe.type = 'LoadBalancer'
      acc.firewallChains.add(chain.target)
    }
  }
}
