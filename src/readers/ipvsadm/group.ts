/**
 * Groups classified virtual servers into service ports: by the cluster's name when known, else
 * by folding NodePort / externalIP / LB ones into the ClusterIP one with the same real servers.
 */
import {pushAll} from '../../core/arrays.js'
import {diag} from '../../core/state.js'
import type {Diagnostic, ServicePort} from '../../model/types.js'
import type {Classified} from './classify.js'
import {pushTo} from '../../core/arrays.js'
import type {KubeVirtualServer, VirtualServerSeen} from './virtual-servers.js'

export interface Group {
  members: Classified[]
  clusterService: ServicePort | null
}

/** Real servers that take new connections: weight-0 ones drain per virtual server (a.6), so they are left out of the comparison. */
export function activeSet(vs: VirtualServerSeen): string[] {
  const out: string[] = []
  for (const [key, rs] of vs.realServers) if (rs.weight !== 0) out.push(key)
  return out.sort()
}

/**
 * The ClusterIP virtual servers that NodePort / externalIP / LB virtual servers fold into,
 * indexed so that each fold is a lookup, not a scan of every service (thousands on a big node).
 */
class AnchorIndex {
  /** `PROTO family rs1,rs2,...` (active real servers, sorted) → groups. */
  private readonly bySignature = new Map<string, Group[]>()
  /** `PROTO family rs` → groups whose active real servers include rs. */
  private readonly byRealServer = new Map<string, Group[]>()
  private readonly active = new Map<Group, Set<string>>()

  add(g: Group): void {
    const vs = g.members[0]!.vs
    const active = activeSet(vs)
    this.active.set(g, new Set(active))
    pushTo(this.bySignature, `${vs.protocol} ${vs.family} ${active.join(',')}`, g)
    for (const rs of active) pushTo(this.byRealServer, `${vs.protocol} ${vs.family} ${rs}`, g)
  }

  /** Anchors with exactly these active real servers. */
  same(vs: KubeVirtualServer, active: string[]): Group[] {
    return this.bySignature.get(`${vs.protocol} ${vs.family} ${active.join(',')}`) ?? []
  }

  /** Anchors whose active real servers include all of these (none when the list is empty). */
  superset(vs: KubeVirtualServer, active: string[]): Group[] {
    if (active.length === 0) return []
    const withFirst = this.byRealServer.get(`${vs.protocol} ${vs.family} ${active[0]}`) ?? []
    return withFirst.filter((g) => active.every((rs) => this.active.get(g)!.has(rs)))
  }
}

export function groupVirtualServers(classified: Classified[], diagnostics: Diagnostic[]): Group[] {
  const groups: Group[] = []
  const byCluster = new Map<ServicePort, Group>()
  const anchors = new AnchorIndex()
  const pending: Classified[][] = []
  const nodePortUnits = new Map<string, Classified[]>()

  for (const c of classified) {
    if (c.clusterService) {
      let g = byCluster.get(c.clusterService)
      if (!g) {
        g = {members: [], clusterService: c.clusterService}
        byCluster.set(c.clusterService, g)
        groups.push(g)
      }
      g.members.push(c)
    } else if (c.type === 'ClusterIP') {
      const g = {members: [c], clusterService: null}
      anchors.add(g)
      groups.push(g)
    } else if (c.type === 'NodePort') {
      // One NodePort frontend per (protocol, family, nodePort): the same port on every node address.
      const key = `${c.vs.protocol} ${c.vs.family} ${c.vs.port}`
      const unit = nodePortUnits.get(key)
      if (unit) unit.push(c)
      else {
        const u = [c]
        nodePortUnits.set(key, u)
        pending.push(u)
      }
    } else pending.push([c])
  }

  for (const unit of pending) {
    const first = unit[0]!
    // The addresses of one NodePort may disagree (kubernetes #89923: 127.0.0.1 with a real server
    // fewer): the unit folds by what any of them has, and toServicePort keeps each one's own.
    const active =
      unit.length === 1
        ? activeSet(first.vs)
        : [...new Set(unit.flatMap((c) => activeSet(c.vs)))].sort()
    // externalIPs and LB IPs use the service port itself (a.3); a NodePort has its own port.
    const portFits = (g: Group) =>
      first.type === 'NodePort' || g.members[0]!.vs.port === first.vs.port
    let matches = anchors.same(first.vs, active).filter(portFits)
    // A Local policy keeps only this node's endpoints (a.3): a subset of the ClusterIP's.
    if (matches.length === 0 && first.local !== false)
      matches = anchors.superset(first.vs, active).filter(portFits)
    const what =
      first.type === 'NodePort'
        ? `NodePort ${first.vs.port}/${first.vs.protocol}`
        : `${first.type} ${first.vs.key}`
    if (matches.length === 1) {
      pushAll(matches[0]!.members, unit)
      continue
    }
    const why =
      matches.length === 0
        ? 'no ClusterIP virtual server has the same protocol and real servers'
        : `${matches.length} ClusterIP virtual servers have the same protocol and real servers (${matches.map((g) => g.members[0]!.vs.key).join(', ')})`
    diagnostics.push(
      diag(
        'warning',
        'IPVS_UNFOLDED',
        `${what}: ${why}, so kp cannot tell which service port it belongs to; it is listed as a service port of its own`,
        first.vs.refs[0] ?? null,
      ),
    )
    groups.push({members: unit, clusterService: null})
  }
  return groups
}
