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
import {ipvsSetName} from '../../kube-proxy/ipvs-names.js'
import {endpointKey} from './protocol.js'
import type {Classified} from './classify.js'
import type {Group} from './group.js'
import type {KubeSets} from './kube-sets.js'
import type {VirtualServerSeen} from './virtual-servers.js'

function actionOf(vs: VirtualServerSeen): Frontend['action'] {
  const weights = [...vs.realServers.values()].map((rs) => rs.weight)
  if (weights.length > 0 && weights.some((w) => w === null || w > 0)) return 'forward'
  // No real server, or all draining: the kernel answers with ICMP port unreachable (ip_vs_leave, docs/ipvs-layouts.md (d), caveat 15).
  return 'reject'
}

const IPSET_SAVE = 'ipset save'

/**
 * A frontend whose kind only a guess or kube-ipvs0 gives (no `ipset save`, no cluster objects):
 * whether it is a LoadBalancer IP that only some clients may reach, or a NodePort or external
 * address under externalTrafficPolicy=Local, is in sets the input lacks.
 */
function unknownType(list: Classified[], family: Family): Pick<Frontend, 'incomplete'> {
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
  const frontends: Frontend[] = []
  const nodePorts = new Map<number, Classified[]>()
  const family = vs.family
  for (const m of members) {
    if (m.type === 'NodePort') {
      pushTo(nodePorts, m.vs.port, m)
      continue
    }
    frontends.push({
      type: m.type,
      ip: m.vs.ip,
      port: m.vs.port,
      sourceRanges: m.sourceRanges,
      action: actionOf(m.vs),
      ...unknownType([m], family),
    })
  }
  for (const [port, list] of nodePorts) {
    // A NodePort listens on every node address kube-proxy chose; the addresses go to node.nodePortAddresses.
    const actions = new Set(list.map((m) => actionOf(m.vs)))
    frontends.push({
      type: 'NodePort',
      ip: null,
      port,
      sourceRanges: [],
      action: actions.has('forward') ? 'forward' : 'reject',
      ...unknownType(list, family),
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
    (cs?.endpoints ?? []).map((e) => [joinHostPort(e.ip, e.port, vs.family), e]),
  )
  const endpoints = new Map<string, Endpoint>()
  const rules: SourceRef[] = []
  for (const m of [primary, ...members.filter((x) => x !== primary)]) {
    pushAll(rules, m.vs.refs)
    pushAll(rules, m.evidenceRefs)
    for (const [key, rs] of m.vs.realServers) {
      pushAll(rules, rs.refs)
      if (endpoints.has(key)) continue
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
      endpoints.set(key, {
        ip: rs.ip,
        port: rs.port,
        local,
        share: rs.weight === 0 ? 0 : null,
        weight: rs.weight,
        state,
      })
    }
  }

  const externals = members.filter((m) => m.type !== 'ClusterIP')
  let externalTrafficPolicy: TrafficPolicy | null = null
  if (externals.some((m) => m.local === true)) externalTrafficPolicy = 'Local'
  else if (externals.length > 0 && externals.every((m) => m.local === false))
    externalTrafficPolicy = 'Cluster'
  else externalTrafficPolicy = cs?.externalTrafficPolicy ?? null

  // What the node's ipsets would have said (a.4): locality (KUBE-LOOP-BACK) without cluster
  // objects, and the sets the frontends above lack.
  const missing = new Set<string>()
  for (const fe of frontends) for (const n of fe.incomplete?.missing ?? []) missing.add(n)
  if (!loopbackKnown && cs === null && endpoints.size > 0)
    missing.add(ipvsSetName('LOOP-BACK', family))
  return {
    namespace: cs?.namespace ?? null,
    name: cs?.name ?? null,
    portName: cs?.portName ?? null,
    protocol: vs.protocol,
    family: vs.family,
    frontends,
    // Not observable on the node (KUBE-HEALTH-CHECK-NODE-PORT does not say whose port it is), nor
    // internalTrafficPolicy: taken from the cluster objects when --cluster names the service.
    healthCheckNodePort: cs?.healthCheckNodePort ?? null,
    internalTrafficPolicy: cs?.internalTrafficPolicy ?? null,
    externalTrafficPolicy,
    sessionAffinity:
      vs.persistentTimeout === null
        ? null
        : {type: 'ClientIP', timeoutSeconds: vs.persistentTimeout},
    scheduler: vs.scheduler,
    endpoints: [...endpoints.values()],
    rules: uniqueSourceRefs(rules),
    ...(missing.size > 0 ? {incomplete: {missing: [...missing].sort(), collect: IPSET_SAVE}} : {}),
  }
}
