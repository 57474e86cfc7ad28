/**
 * What the walk knows about addresses: the client's (a concrete address, or "some pod", "this
 * node", "some outside client"), and which destinations are this node's own. Questions it cannot
 * settle become open conditions, never guesses.
 */
import {addressFamily, cidrContains, isLoopback} from '../../core/address.js'
import {isRedacted} from '../../core/redaction.js'
import {open, type MatchValue} from './branch.js'
import type {TracePacket} from './types.js'

export interface AddressFacts {
  packet: TracePacket
  /** The pod CIDRs the rules show (a pod client's address is in one). */
  podCIDRs: string[]
  /** Addresses known to be this node's (`--node-ip`). */
  nodeIps: string[]
  /** Addresses known not to be this node's: the ClusterIPs (iptables mode binds them to nothing). */
  notLocal: ReadonlySet<string>
  /** Assumptions made along the way, in words (shown with the answer). */
  assumed: Set<string>
}

const LOOPBACK_V4 = '127.0.0.0/8'
const LOOPBACK_V6 = '::1/128'

function cidrOf(value: string): string {
  return value.includes('/') ? value : value.includes(':') ? `${value}/128` : `${value}/32`
}

function prefixOf(cidr: string): number {
  return Number(cidr.slice(cidr.indexOf('/') + 1))
}

function isHostRoute(cidr: string): boolean {
  return prefixOf(cidr) === (cidr.includes(':') ? 128 : 32)
}

/** Does CIDR `outer` hold all of `inner`? */
function covers(outer: string, inner: string): boolean {
  return (
    prefixOf(outer) <= prefixOf(inner) && cidrContains(outer, inner.slice(0, inner.indexOf('/')))
  )
}

function overlaps(a: string, b: string): boolean {
  return covers(a, b) || covers(b, a)
}

/** `-s CIDR` for the client. */
export function sourceIn(
  facts: AddressFacts,
  value: string,
  destination: string | null,
): MatchValue {
  const cidr = cidrOf(value)
  const {packet} = facts
  // A range the input hid (`-s x.x.x.x/25`): whether any source is in it is unknown, never "no".
  if (isRedacted(value))
    return open(
      `src ${value}`,
      `the source is in the redacted range ${value}`,
      `the source is not in the redacted range ${value}`,
    )
  if (packet.source !== null) return cidrContains(cidr, packet.source)
  const loopback = cidr.includes(':') ? LOOPBACK_V6 : LOOPBACK_V4
  // The node talks to a loopback destination from a loopback address, and to nothing else from one.
  if (packet.from === 'node' && destination !== null && isLoopback(destination))
    return cidrContains(cidr, destination.includes(':') ? '::1' : '127.0.0.1')
  if (covers(loopback, cidr)) return false
  // "A pod" is any pod but the endpoints themselves: a hairpin connection is traced by its address.
  if (packet.from === 'pod' && isHostRoute(cidr)) return false
  if (packet.from === 'pod' && facts.podCIDRs.length > 0) {
    if (facts.podCIDRs.every((p) => covers(cidr, p))) return true
    if (facts.podCIDRs.every((p) => !overlaps(cidr, p))) return false
  }
  if (packet.from !== 'pod' && facts.podCIDRs.some((p) => covers(p, cidr))) return false
  const who =
    packet.from === 'pod'
      ? "the pod's address"
      : packet.from === 'node'
        ? "the node's source address"
        : "the client's address"
  return open(`src ${cidr}`, `${who} is in ${cidr}`, `${who} is not in ${cidr}`)
}

/** `-d CIDR` for the current destination (null: an address of this node). */
export function destinationIn(destination: string | null, value: string): MatchValue {
  const cidr = cidrOf(value)
  if (destination !== null) return cidrContains(cidr, destination)
  const loopback = cidr.includes(':') ? LOOPBACK_V6 : LOOPBACK_V4
  if (covers(loopback, cidr)) return false
  // "A node address" is one no rule names: one that is (an externalIP, say) is traced by its address.
  if (isHostRoute(cidr)) return false
  return open(
    `node address ${cidr}`,
    `the node address is in ${cidr}`,
    `the node address is not in ${cidr}`,
  )
}

/**
 * `-m addrtype --dst-type LOCAL`, and the routing decision: is the destination an address of this
 * node? A DNAT target is an endpoint, a pod's address unless the user names it as the node's.
 */
export function destinationLocal(
  facts: AddressFacts,
  destination: string | null,
  dnatTarget: boolean,
): MatchValue {
  if (destination === null || isLoopback(destination)) return true
  if (facts.nodeIps.includes(destination)) return true
  if (facts.notLocal.has(destination)) return false
  if (facts.podCIDRs.some((p) => cidrContains(p, destination))) return false
  if (dnatTarget) {
    facts.assumed.add(
      'endpoints are not addresses of this node (name a hostNetwork endpoint with --node-ip)',
    )
    return false
  }
  return open(
    `local ${destination}`,
    `${destination} is an address of this node`,
    `${destination} is not an address of this node`,
  )
}

/** `-m addrtype --src-type LOCAL`: is the client this node? */
export function sourceLocal(facts: AddressFacts): MatchValue {
  if (facts.packet.from === 'node') return true
  const s = facts.packet.source
  if (s !== null && facts.nodeIps.includes(s)) return true
  return false
}

/** The address family of the packet, from whichever address it has. */
export function packetFamily(packet: TracePacket): 'IPv4' | 'IPv6' | null {
  const a = packet.destination ?? packet.source
  return a === null ? null : addressFamily(a)
}
