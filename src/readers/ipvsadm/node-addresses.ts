/**
 * The addresses of one node's `ip addr` (kube-ipvs0 and the node's own) and KUBE-IPVS-IPS:
 * the evidence that classifies a virtual server when kube-proxy's other ipsets are missing.
 */
import type {SourceRef} from '../../model/types.js'
import type {IpAddrDump} from '../ip-addr/parse.js'
import type {ParsedSource} from '../types.js'
import type {KubeSets} from './kube-sets.js'

/** The apiserver's default --service-node-port-range; only for classify.ts's documented guesses. */
export const NODE_PORT_RANGE = {min: 30000, max: 32767} as const

export interface Addresses {
  /** Addresses bound to kube-ipvs0 (ip addr) or listed in KUBE-IPVS-IPS. */
  bound: Map<string, SourceRef>
  boundKnown: boolean
  /** The node's own addresses: other interfaces, less loopback and IPv6 link-local (a.2). */
  node: Map<string, SourceRef>
  nodeKnown: boolean
}

/** fe80::/10, as the canonical (lower-case) IPv6 text starts. */
const IPV6_LINK_LOCAL = /^fe[89ab][0-9a-f]?:/

export function readAddresses(dumps: ParsedSource<IpAddrDump>[], sets: KubeSets): Addresses {
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

export function inNodePortRange(port: number): boolean {
  return port >= NODE_PORT_RANGE.min && port <= NODE_PORT_RANGE.max
}
