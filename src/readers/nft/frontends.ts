/**
 * The frontends of the service ports an nft reader recovers, indexed by address, protocol and
 * port, so that a later element or rule about the same destination (a no-endpoint verdict, a
 * firewall entry) finds the service port it belongs to. Shared by the nftables-mode reader
 * (kube-proxy-table.ts) and the iptables-nft one (iptables-nft.ts).
 */
import type {Frontend, FrontendAction, Protocol, SourceRef} from '../../model/types.js'

export interface FrontendOwner {
  protocol: Protocol
  /** By `frontendKey(ip, port)`. */
  frontends: Map<string, Frontend>
  rules: SourceRef[]
}

export const frontendKey = (ip: string | null, port: number | null): string =>
  `${ip ?? '*'}|${port}`

export class FrontendIndex<T extends FrontendOwner> {
  private readonly owners = new Map<string, T>()

  /** Adds the frontend to its owner (once per address and port), and records where it was seen. */
  add(
    owner: T,
    type: Frontend['type'],
    ip: string | null,
    port: number | null,
    action: FrontendAction,
    ref: SourceRef,
  ): Frontend {
    const key = frontendKey(ip, port)
    let fe = owner.frontends.get(key)
    if (!fe) {
      fe = {type, ip, port, sourceRanges: [], action}
      owner.frontends.set(key, fe)
      this.owners.set(`${key}|${owner.protocol}`, owner)
    }
    owner.rules.push(ref)
    return fe
  }

  ownerOf(ip: string | null, protocol: Protocol, port: number | null): T | undefined {
    return this.owners.get(`${frontendKey(ip, port)}|${protocol}`)
  }
}
