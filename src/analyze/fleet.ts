/**
 * Questions over a fleet of nodes, from the states of the nodes that could be read:
 * which migration findings hit which nodes (`kp migrate --check --fleet|--all-nodes`), and which
 * nodes are not like the others (`kp diff --fleet|--all-nodes`). Pure data, the `--json` output.
 */
import type {Finding} from './findings.js'
import {
  type FieldDifference,
  type ServiceDiff,
  compareServicePorts,
  describeEndpoint,
  describeFrontend,
  diffStates,
} from './diff.js'
import {displayName, serviceKey} from '../core/state.js'
import type {ProxyState, ServicePort} from '../model/types.js'
import type {FailOn, ProxyMode} from './migrate.js'
import type {KubeProxyVersion} from '../kube-proxy/versions.js'

/** One node of a fleet answer: read or not, and why not. */
export interface FleetNode {
  name: string
  /** false when the node could not be read (collect failed, timed out, unreadable bundle). */
  ok: boolean
  /** false when part of the node's input could not be read (its answer is partial). */
  complete: boolean
  /** Why the node could not be read, and the code of that error; null when it was. */
  error: string | null
  code: string | null
}

// ---------------------------------------------------------------------------------------------
// kp migrate --check over a fleet

/** A finding as the fleet sees it: once, with every node it hits. */
export interface FleetFinding extends Omit<Finding, 'evidence'> {
  /** The nodes this finding was reported on, sorted. */
  nodes: string[]
}

export interface FleetMigrateNode extends FleetNode {
  /** The mode the node runs today; null when unknown or not read. */
  from: ProxyMode | null
  /** How many findings of each severity the node has. */
  counts: {error: number; warning: number; info: number}
}

export interface FleetMigrateResult {
  schemaVersion: 1
  kind: 'FleetMigrateResult'
  to: ProxyMode
  kubeProxyVersion: KubeProxyVersion
  failOn: FailOn
  nodes: FleetMigrateNode[]
  /** Every distinct finding once, most severe first, with the nodes it hits. */
  findings: FleetFinding[]
}

/**
 * The same finding on several nodes is one entry: same id, title, services and addresses. Its
 * evidence (file:line of one node's bundle) is left out: each node's bundle has its own.
 */
export function mergeFindings(perNode: Array<{node: string; findings: Finding[]}>): FleetFinding[] {
  const merged = new Map<string, FleetFinding>()
  for (const {node, findings} of perNode) {
    for (const f of findings) {
      const key = JSON.stringify([f.id, f.title, f.services, f.addresses])
      const seen = merged.get(key)
      if (seen) {
        if (!seen.nodes.includes(node)) seen.nodes.push(node)
        continue
      }
      const {evidence: _evidence, ...rest} = f
      merged.set(key, {...rest, nodes: [node]})
    }
  }
  const list = [...merged.values()]
  for (const f of list) f.nodes.sort()
  // The order of sortFindings, with the findings on most nodes first within one id.
  const rank = {error: 0, warning: 1, info: 2} as const
  return list.sort(
    (a, b) =>
      rank[a.severity] - rank[b.severity] ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) ||
      b.nodes.length - a.nodes.length ||
      ((a.services[0] ?? '') < (b.services[0] ?? '') ? -1 : 1),
  )
}

// ---------------------------------------------------------------------------------------------
// kp diff over a fleet: which nodes are not like the others

/** The nodes that program one service port one way. */
export interface FleetVariant {
  nodes: string[]
  /** How this variant differs from the majority's (a: majority, b: these nodes); [] for the majority. */
  differences: FieldDifference[]
  /** The service port is not on these nodes at all (present on the majority). */
  absent: boolean
}

export interface FleetServiceDiff {
  service: string
  /** The nodes most alike (the largest group); null when no group is larger than every other. */
  majority: string[] | null
  /** Every other group, largest first. */
  odd: FleetVariant[]
}

export interface FleetClusterDiff {
  node: string
  /** What the node has that the cluster objects, read from its point of view, do not (a: objects, b: node). */
  services: ServiceDiff[]
}

export interface FleetDiffResult {
  schemaVersion: 1
  kind: 'FleetDiffResult'
  /** The service argument the comparison was limited to; null for all. */
  service: string | null
  nodes: FleetNode[]
  /** Service ports not programmed alike on every node that was read, sorted by name. */
  services: FleetServiceDiff[]
  /** Nodes that differ from the majority somewhere (or from the cluster objects), sorted. */
  oddNodes: string[]
  /** Per node, against the cluster objects (`--cluster`); null when none were given. */
  cluster: FleetClusterDiff[] | null
  /** Every read node is alike, and like the cluster objects when given. */
  equal: boolean
}

/**
 * Fields that differ between nodes by design: which endpoints are on this node, and so what a
 * Local-policy frontend does (forward to the local endpoints, or drop). Compared against the
 * cluster objects instead (FleetClusterDiff), where each node's point of view is known.
 */
function perNodeByDesign(sp: ServicePort, d: FieldDifference): boolean {
  if (d.field.endsWith('.local')) return true
  const local = sp.externalTrafficPolicy === 'Local' || sp.internalTrafficPolicy === 'Local'
  return local && /^frontends\[.*\]\.(action|endpoints)$/.test(d.field)
}

function fleetDifferences(x: ServicePort, y: ServicePort): FieldDifference[] {
  return compareServicePorts(x, y).filter((d) => !perNodeByDesign(x, d) && !perNodeByDesign(y, d))
}

/** What a service port is, as the differences of one that is absent elsewhere. */
function presentAs(sp: ServicePort, side: 'a' | 'b'): FieldDifference[] {
  const put = (field: string, v: string): FieldDifference =>
    side === 'a' ? {field, a: v, b: null} : {field, a: null, b: v}
  return [
    ...sp.frontends.map((f) => put('frontend', describeFrontend(f))),
    ...sp.endpoints.map((e) => put('endpoint', describeEndpoint(e))),
  ]
}

interface Group {
  rep: ServicePort | null
  nodes: string[]
}

/**
 * Groups the nodes by how they program each service port (compareServicePorts, without what
 * differs by design) and names the groups that are not the majority. A service port only some
 * nodes have is "absent" on the others: stale rules left by a crashed kube-proxy show as a
 * service on one node that the majority lacks.
 */
export function oddOneOut(
  states: Array<{node: string; state: ProxyState}>,
  keep: (sp: ServicePort) => boolean = () => true,
): FleetServiceDiff[] {
  const byKey = new Map<string, {name: string; on: Map<string, ServicePort>}>()
  for (const {node, state} of states) {
    for (const sp of state.services) {
      if (!keep(sp)) continue
      const key = serviceKey(sp)
      let entry = byKey.get(key)
      if (!entry) byKey.set(key, (entry = {name: displayName(sp), on: new Map()}))
      entry.on.set(node, sp)
    }
  }
  const out: FleetServiceDiff[] = []
  for (const {name, on} of byKey.values()) {
    const groups: Group[] = []
    for (const {node} of states) {
      const sp = on.get(node) ?? null
      const group = groups.find((g) =>
        g.rep === null || sp === null ? g.rep === sp : fleetDifferences(g.rep, sp).length === 0,
      )
      if (group) group.nodes.push(node)
      else groups.push({rep: sp, nodes: [node]})
    }
    if (groups.length < 2) continue
    groups.sort((a, b) => b.nodes.length - a.nodes.length)
    const [first, second] = groups as [Group, Group]
    const clear = first.nodes.length > second.nodes.length
    // Without a clear majority, the others are told apart from the first group all the same.
    const base = first
    out.push({
      service: name,
      majority: clear ? [...first.nodes].sort() : null,
      odd: groups.slice(1).map((g) => ({
        nodes: [...g.nodes].sort(),
        absent: g.rep === null,
        differences:
          g.rep === null
            ? presentAs(base.rep!, 'a')
            : base.rep === null
              ? presentAs(g.rep, 'b')
              : fleetDifferences(base.rep, g.rep),
      })),
    })
  }
  return out.sort((a, b) => (a.service < b.service ? -1 : a.service > b.service ? 1 : 0))
}

/** Each node against the cluster objects read from that node's point of view. */
export function clusterDiff(
  node: string,
  expected: ProxyState,
  actual: ProxyState,
): FleetClusterDiff {
  return {node, services: diffStates(expected, actual).services}
}
