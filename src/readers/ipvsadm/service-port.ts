/**
 * Turns one group of virtual servers into a ServicePort: frontends, scheduler, persistence, and
 * endpoints with their weights, locality (KUBE-LOOP-BACK) and states.
 */
import {pushTo} from '../../core/arrays.js'
import {pushAll} from '../../core/arrays.js'
import {diag, uniqueSourceRefs} from '../../core/state.js'
import type {
  Diagnostic,
  Endpoint,
  Family,
  Frontend,
  ServicePort,
  SourceRef,
  TrafficPolicy,
} from '../../model/types.js'
import {joinHostPort} from '../../core/address.js'
import {REDACTED_SHOWN} from '../../core/redaction.js'
import {ipvsSetName} from '../../kube-proxy/ipvs-names.js'
import {endpointKey} from './protocol.js'
import type {Classified} from './classify.js'
import type {Group} from './group.js'
import type {KubeSets} from './kube-sets.js'
import type {RealServerSeen, VirtualServerSeen} from './virtual-servers.js'
import {activeSet} from './group.js'
import {ipvsFrontendSetsExplained} from '../../kube-proxy/endpoints.js'

function actionOf(vs: VirtualServerSeen): Frontend['action'] {
  const weights = [...vs.realServers.values()].map((rs) => rs.weight)
  if (weights.length > 0 && weights.some((w) => w === null || w > 0)) return 'forward'
  // No real server, or all draining: the kernel answers with ICMP port unreachable (ip_vs_leave, docs/ipvs-layouts.md (d), caveat 15).
  return 'reject'
}

const IPSET_SAVE = 'ipset save'
const IPVSADM = 'ipvsadm -Ln'

/**
 * A frontend whose kind only a guess or kube-ipvs0 gives (no `ipset save`, no cluster objects):
 * whether it is a LoadBalancer IP that only some clients may reach, or a NodePort or external
 * address under externalTrafficPolicy=Local, is in sets the input lacks.
 */
function unknownType(list: Classified[], family: Family): Pick<Frontend, 'incomplete'> {
  const cut = list.find((m) => m.vs.cut !== undefined)?.vs
  if (cut) {
    // A listing cut inside this virtual server's rows: what a connection gets here is unknown.
    const at = cut.cut!
    return {
      incomplete: {
        missing: [`the rest of ${cut.key} (the listing is cut at ${at.path}:${at.line})`],
        collect: IPVSADM,
      },
    }
  }
  if (!list.some((m) => m.evidence === 'guess' || m.evidence === 'ip-addr')) return {}
  const bases =
    list[0]!.type === 'NodePort'
      ? [`NODE-PORT-${list[0]!.vs.protocol}`, `NODE-PORT-LOCAL-${list[0]!.vs.protocol}`]
      : ['CLUSTER-IP', 'EXTERNAL-IP', 'LOAD-BALANCER', 'LOAD-BALANCER-SOURCE-CIDR']
  return {
    incomplete: {missing: bases.map((b) => ipvsSetName(b, family)), collect: IPSET_SAVE},
  }
}

export function toServicePort(
  group: Group,
  sets: KubeSets,
  diagnostics: Diagnostic[],
): ServicePort {
  const members = group.members
  const primary = members.find((m) => m.type === 'ClusterIP') ?? members[0]!
  const vs = primary.vs
  const cs = group.clusterService
  const frontends: {frontend: Frontend; members: Classified[]}[] = []
  const nodePorts = new Map<number, Classified[]>()
  const family = vs.family
  for (const m of members) {
    if (m.type === 'NodePort') {
      pushTo(nodePorts, m.vs.port, m)
      continue
    }
    frontends.push({
      frontend: {
        type: m.type,
        ip: m.vs.ip,
        port: m.vs.port,
        sourceRanges: m.sourceRanges,
        action: actionOf(m.vs),
        ...unknownType([m], family),
      },
      members: [m],
    })
  }

  const schedulers = new Set(
    members.map((m) => m.vs.scheduler).filter((s): s is string => s !== null),
  )
  if (schedulers.size > 1) {
    diagnostics.push(
      diag(
        'warning',
        'IPVS_MIXED_SCHEDULERS',
        `the virtual servers of ${vs.key} use different schedulers (${[...schedulers].join(', ')}); kube-proxy uses one for all`,
        vs.refs[0] ?? null,
      ),
    )
  }

  // Endpoints: the ClusterIP virtual server's real servers, then any only the others have.
  const loopbackKnown = sets.hasSet('LOOP-BACK', vs.family)
  const clusterEndpoints = new Map(
    (cs?.endpoints ?? []).map((e) => [joinHostPort(e.ip ?? REDACTED_SHOWN, e.port, vs.family), e]),
  )
  const toEndpoint = (rs: RealServerSeen, key: string): Endpoint => {
    const fromCluster = clusterEndpoints.get(key)
    // KUBE-LOOP-BACK holds every node-local endpoint as ip,proto:port,ip (a.4).
    const local = loopbackKnown
      ? sets.get('LOOP-BACK', vs.family, endpointKey(rs.ip, vs.protocol, rs.port)).length > 0
      : (fromCluster?.local ?? null)
    let state: Endpoint['state'] =
      rs.weight === 0 ? 'draining' : rs.weight === null ? null : 'ready'
    // Weight 1 is both a ready endpoint and a serving-terminating fallback (a.3); only the cluster tells.
    if (state === 'ready' && fromCluster?.state === 'serving-terminating')
      state = 'serving-terminating'
    if (state === null && fromCluster) state = fromCluster.state
    return {
      ip: rs.ip,
      port: rs.port,
      local,
      share: rs.weight === 0 ? 0 : null,
      weight: rs.weight,
      state,
    }
  }
  const endpoints = new Map<string, Endpoint>()
  const rules: SourceRef[] = []
  for (const m of [primary, ...members.filter((x) => x !== primary)]) {
    pushAll(rules, m.vs.refs)
    pushAll(rules, m.evidenceRefs)
    for (const [key, rs] of m.vs.realServers) {
      pushAll(rules, rs.refs)
      if (!endpoints.has(key)) endpoints.set(key, toEndpoint(rs, key))
    }
  }

  const externals = members.filter((m) => m.type !== 'ClusterIP')
  let externalTrafficPolicy: TrafficPolicy | null = null
  if (externals.some((m) => m.local === true)) externalTrafficPolicy = 'Local'
  else if (externals.length > 0 && externals.every((m) => m.local === false))
    externalTrafficPolicy = 'Cluster'
  else externalTrafficPolicy = cs?.externalTrafficPolicy ?? null

  const internalTrafficPolicy = cs?.internalTrafficPolicy ?? null
  const clusterIp = members.find((m) => m.type === 'ClusterIP') ?? null
  const external = members.filter((m) => m.type !== 'ClusterIP')
  const disagree = !ipvsFrontendSetsExplained(
    clusterIp === null ? null : new Set(activeSet(clusterIp.vs)),
    external.map((m) => new Set(activeSet(m.vs))),
    internalTrafficPolicy,
    externalTrafficPolicy,
  )
  pushAll(frontends, nodePortFrontends(nodePorts, disagree, family))
  if (disagree) {
    const own = (m: Classified) => [...m.vs.realServers].map(([key, rs]) => toEndpoint(rs, key))
    for (const f of frontends) {
      const mine = own(f.members[0]!)
      if (!sameEndpoints(mine, endpoints)) f.frontend.endpoints = mine
    }
    diagnostics.push(disagreement(frontends, clusterIp, vs.key))
  }

  // What the node's ipsets would have said (a.4): locality (KUBE-LOOP-BACK) without cluster
  // objects, and the sets the frontends above lack.
  const missing = new Set<string>()
  const collect = new Set<string>()
  for (const {frontend} of frontends) {
    for (const n of frontend.incomplete?.missing ?? []) missing.add(n)
    if (frontend.incomplete) collect.add(frontend.incomplete.collect)
  }
  if (!loopbackKnown && cs === null && endpoints.size > 0) {
    missing.add(ipvsSetName('LOOP-BACK', family))
    collect.add(IPSET_SAVE)
  }
  return {
    namespace: cs?.namespace ?? null,
    name: cs?.name ?? null,
    portName: cs?.portName ?? null,
    protocol: vs.protocol,
    family: vs.family,
    frontends: frontends.map((f) => f.frontend),
    // Not observable on the node (KUBE-HEALTH-CHECK-NODE-PORT does not say whose port it is), nor
    // internalTrafficPolicy: taken from the cluster objects when --cluster names the service.
    healthCheckNodePort: cs?.healthCheckNodePort ?? null,
    internalTrafficPolicy,
    externalTrafficPolicy,
    sessionAffinity: !vs.persistent
      ? null
      : // /proc/net/ip_vs shows no seconds (b.6): the Service's own timeout, when given, says.
        {
          type: 'ClientIP',
          timeoutSeconds: vs.persistentTimeout ?? cs?.sessionAffinity?.timeoutSeconds ?? null,
        },
    scheduler: vs.scheduler,
    endpoints: [...endpoints.values()],
    rules: uniqueSourceRefs(rules),
    ...(missing.size > 0
      ? {incomplete: {missing: [...missing].sort(), collect: [...collect].sort().join(' and ')}}
      : {}),
  }
}

/**
 * One NodePort frontend per port, on every node address (its addresses go to
 * node.nodePortAddresses). When the virtual servers of a service port disagree, a NodePort
 * address whose real servers differ from the port's other addresses is a frontend of its own, so
 * that its endpoints are kept (kubernetes #89923: 127.0.0.1 with one real server fewer).
 */
function nodePortFrontends(
  nodePorts: Map<number, Classified[]>,
  disagree: boolean,
  family: Family,
): {frontend: Frontend; members: Classified[]}[] {
  const out: {frontend: Frontend; members: Classified[]}[] = []
  for (const [port, list] of nodePorts) {
    const bySet = new Map<string, Classified[]>()
    if (disagree) for (const m of list) pushTo(bySet, activeSet(m.vs).join(','), m)
    else bySet.set('', list)
    // The set most addresses have stands for every address; ties go to the first listed.
    const [common, ...others] = [...bySet.values()].sort((a, b) => b.length - a.length)
    const actions = new Set(common!.map((m) => actionOf(m.vs)))
    out.push({
      frontend: {
        type: 'NodePort',
        ip: null,
        port,
        sourceRanges: [],
        action: actions.has('forward') ? 'forward' : 'reject',
        ...unknownType(common!, family),
      },
      members: common!,
    })
    for (const m of others.flat()) {
      out.push({
        frontend: {
          type: 'NodePort',
          ip: m.vs.ip,
          port,
          sourceRanges: [],
          action: actionOf(m.vs),
          ...unknownType([m], family),
        },
        members: [m],
      })
    }
  }
  return out
}

/** The same real servers with the same weights. */
function sameEndpoints(mine: Endpoint[], all: Map<string, Endpoint>): boolean {
  if (mine.length !== all.size) return false
  return mine.every((e) => {
    const other = all.get(joinHostPort(e.ip ?? '', e.port))
    return other !== undefined && other.weight === e.weight
  })
}

/** IPVS_FRONTENDS_DISAGREE with every frontend's real servers, at the first one that differs. */
function disagreement(
  frontends: {frontend: Frontend; members: Classified[]}[],
  clusterIp: Classified | null,
  label: string,
): Diagnostic {
  const reference = clusterIp === null ? null : activeSet(clusterIp.vs).join(',')
  const lists = frontends.map(({frontend: f, members}) => {
    const servers = activeSet(members[0]!.vs)
    return {
      text: `${f.type} ${joinHostPort(f.ip ?? '*', f.port)} has ${servers.length === 0 ? 'no ready real server' : servers.join(' ')}`,
      differs: reference !== null && servers.join(',') !== reference,
      at: members[0]!.vs.refs[0] ?? null,
    }
  })
  const at = lists.find((l) => l.differs)?.at ?? lists[0]?.at ?? null
  return diag(
    'warning',
    'IPVS_FRONTENDS_DISAGREE',
    `the virtual servers of ${label} have real servers kube-proxy would not give them (kubernetes #89923): ${lists.map((l) => l.text).join('; ')}; each frontend keeps its own endpoints`,
    at,
  )
}
