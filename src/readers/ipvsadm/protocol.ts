/**
 * Shared by the IPVS-mode readers (ipvsadm, ipset): the protocol words they print and the key a
 * virtual server and an ipset entry join on. Addresses and ports: src/core/address.ts.
 */
import type {Protocol} from '../../model/types.js'

// A Map, not an object literal: `constructor` from the input must not find Object's prototype.
const PROTOCOLS = new Map<string, Protocol>([
  ['tcp', 'TCP'],
  ['udp', 'UDP'],
  ['sctp', 'SCTP'],
])

/** `tcp` / `TCP` → 'TCP'; null for anything kube-proxy does not program. */
export function parseProtocol(text: string): Protocol | null {
  return PROTOCOLS.get(text.toLowerCase()) ?? null
}

/** The join key of a virtual server or ipset entry: address, port and protocol. */
export function endpointKey(ip: string, protocol: Protocol, port: number): string {
  return `${ip}|${protocol}|${port}`
}
