/**
 * The IPVS part of a trace in kube-proxy's IPVS mode: the virtual server the connection hits
 * (from `ipvsadm -Ln`/`-Sn` as read) and the real server its scheduler picks, with the chance
 * of each; and the ipsets kube-proxy's IPVS-mode iptables rules match on (`-m set
 * --match-set`), from `ipset save`/`ipset list` as read. The iptables walk (./iptables.ts)
 * calls both: IPVS sits in the kernel's LOCAL_IN hook (after filter INPUT) for a connection
 * from outside, and in LOCAL_OUT (after nat OUTPUT) for the node's own.
 */
import {cidrContains, joinHostPort} from '../../core/address.js'
import type {IpsetDump, IpsetMember, IpsetSet} from '../../readers/ipset/parse.js'
import type {
  IpvsadmListing,
  IpvsRealServer,
  IpvsVirtualServer,
} from '../../readers/ipvsadm/parse.js'
import {sourceIn, type AddressFacts} from './addresses.js'
import {forkBranch, open, type Branch, type MatchValue} from './branch.js'
import type {Exit} from './walk.js'

/** Schedulers whose choice kp can give as a share: rr ignores weights but 0; the weighted ones follow them. */
const EQUAL = new Set(['rr'])
const WEIGHTED = new Set(['wrr'])

export class IpvsStage {
  constructor(
    private readonly listings: Array<{path: string; listing: IpvsadmListing}>,
    private readonly ipsets: Array<{path: string; dump: IpsetDump}>,
    private readonly facts: AddressFacts,
  ) {}

  /** The addresses of the virtual servers: bound to kube-ipvs0, so this node's own. */
  addresses(): string[] {
    const out = new Set<string>()
    for (const {listing} of this.listings)
      for (const vs of listing.virtualServers) if (vs.ip !== null) out.add(vs.ip)
    return [...out]
  }

  /** The address of a virtual server on `port`: one of `preferred` when there is one, else the first. */
  nodePortAddress(port: number, protocol: string, preferred: string[]): string | null {
    const found = this.listings.flatMap((l) =>
      l.listing.virtualServers.filter(
        (v) => v.port === port && v.protocol === protocol && v.ip !== null,
      ),
    )
    return (found.find((v) => preferred.includes(v.ip!)) ?? found[0])?.ip ?? null
  }

  private virtualServer(b: Branch): {path: string; vs: IpvsVirtualServer} | null {
    const protocol = this.facts.packet.protocol
    for (const {path, listing} of this.listings)
      for (const vs of listing.virtualServers) {
        if (vs.protocol !== protocol || vs.port !== b.port || vs.ip === null) continue
        if (vs.ip === b.destination) return {path, vs}
      }
    return null
  }

  /**
   * The virtual server's choice for the branch: one exit per real server it can pick (DNATed,
   * with its chance), a reject when it has none to pick; null when no virtual server takes the
   * connection (it goes on to the node).
   */
  balance(b: Branch): Exit[] | null {
    const found = this.virtualServer(b)
    if (!found) return null
    const {path, vs} = found
    const scheduler = vs.scheduler ?? 'unknown'
    const persistent = vs.persistent
      ? `, persistent ${vs.persistentTimeout ?? '?'} s (a client seen within that time goes back to its real server)`
      : ''
    b.steps.push({
      table: 'ipvs',
      chain: vs.key,
      rule: {source: {path, line: vs.line}, text: vs.key},
      note: `virtual server, scheduler ${scheduler}${persistent}`,
    })
    const usable = vs.realServers.filter((r) => r.weight === null || r.weight > 0)
    if (usable.length === 0)
      return [
        {
          branch: b,
          how: 'reject',
          reason:
            vs.realServers.length === 0
              ? 'the virtual server has no real server (the service has no ready endpoint): IPVS answers ICMP port unreachable'
              : 'every real server has weight 0 (terminating endpoints): IPVS schedules no new connection to them and answers ICMP port unreachable',
        },
      ]
    const weights = usable.map((r) => (EQUAL.has(scheduler) ? 1 : (r.weight ?? 1)))
    const total = weights.reduce((a, w) => a + w, 0)
    const how = EQUAL.has(scheduler)
      ? 'each real server of weight > 0 in turn'
      : WEIGHTED.has(scheduler)
        ? 'in proportion to the weights'
        : `by ${scheduler}, which follows live connection counts or a hash: the share shown is by weight`
    return usable.map((r, i) => {
      const br = usable.length === 1 ? b : forkBranch(b)
      br.probability *= weights[i]! / total
      const to = joinHostPort(r.ip, r.port, r.ip.includes(':') ? 'IPv6' : 'IPv4')
      br.destination = r.ip
      br.port = r.port
      br.dnat = to
      br.steps.push({
        table: 'ipvs',
        chain: vs.key,
        rule: {source: {path, line: r.line}, text: realServerText(r)},
        note: `real server ${to}, weight ${r.weight ?? '?'} (${how})`,
      })
      return {branch: br, how: 'accept', reason: null}
    })
  }

  /** `-m set --match-set NAME FLAGS` for the branch; null when no ipset input has the set. */
  setMatch(b: Branch, name: string, flags: string): MatchValue | null {
    const set = this.set(name)
    if (!set) return null
    const dirs = flags.split(',')
    const bitmapPort = set.type.startsWith('bitmap:port')
    const protocol = this.facts.packet.protocol
    const values: MatchValue[] = []
    for (const m of set.members) {
      const v = this.member(b, m, dirs, bitmapPort, protocol)
      if (v === true) return true
      if (v !== false) values.push(v)
    }
    return values[0] ?? false
  }

  private set(name: string): IpsetSet | undefined {
    for (const {dump} of this.ipsets) {
      const s = dump.sets.find((x) => x.name === name)
      if (s) return s
    }
    return undefined
  }

  /** Whether one element matches the branch: address, then port, then a source (address or CIDR). */
  private member(
    b: Branch,
    m: IpsetMember,
    dirs: string[],
    bitmapPort: boolean,
    protocol: string,
  ): MatchValue {
    if (bitmapPort) return dirs[0] === 'dst' && m.port === b.port
    if (dirs[0] !== 'dst' || m.ip === null) return false
    const ipOk = b.destination === null ? this.facts.nodeIps.includes(m.ip) : m.ip === b.destination
    if (!ipOk) return false
    if (dirs.length >= 2) {
      if (m.port !== b.port || (m.protocol !== null && m.protocol !== protocol)) return false
    }
    if (dirs.length >= 3 && dirs[2] === 'src') {
      if (m.third === null) return false
      const cidr = m.third
      const source = this.facts.packet.source
      if (source !== null)
        return cidrContains(
          cidr.includes('/') ? cidr : `${cidr}/${cidr.includes(':') ? 128 : 32}`,
          source,
        )
      return sourceIn(this.facts, cidr, b.destination)
    }
    return true
  }
}

function realServerText(r: IpvsRealServer): string {
  const at = joinHostPort(r.ip, r.port, r.ip.includes(':') ? 'IPv6' : 'IPv4')
  return `-> ${at} ${r.forward ?? ''} ${r.weight ?? ''}`.replace(/\s+/g, ' ').trim()
}

/** A set kp has no ipset input for: an open question, in words. */
export function unknownSet(name: string, flags: string): MatchValue {
  return open(
    `set ${name} ${flags}`,
    `the connection is in ipset ${name} (${flags}); add \`ipset save\` to the input to settle it`,
    `the connection is not in ipset ${name} (${flags})`,
  )
}
