/**
 * Classifies each kube-proxy virtual server (ClusterIP, NodePort, externalIP, LoadBalancer) from
 * the strongest evidence at hand: cluster objects, ipsets, `ip addr`, and only then a guess.
 */
import {diag} from '../../core/state.js'
import type {
  Diagnostic,
  Frontend,
  FrontendType,
  Protocol,
  ServicePort,
  SourceRef,
} from '../../model/types.js'
import {joinHostPort} from '../../core/address.js'
import {endpointKey} from './protocol.js'
import type {KubeSets, SetMember} from './kube-sets.js'
import {inNodePortRange, NODE_PORT_RANGE, type Addresses} from './node-addresses.js'
import type {KubeVirtualServer} from './virtual-servers.js'

type Evidence = 'cluster' | 'ipset' | 'ip-addr' | 'guess'

export interface Classified {
  vs: KubeVirtualServer
  type: FrontendType
  /** Local external traffic policy of this frontend; null when not known. */
  local: boolean | null
  sourceRanges: string[]
  evidence: Evidence
  evidenceRefs: SourceRef[]
  /** The cluster service port this virtual server belongs to, when --cluster named it. */
  clusterService: ServicePort | null
}

export interface ClusterIndex {
  byKey: Map<string, {service: ServicePort; frontend: Frontend}[]>
  key: (ip: string | null, port: number | null, protocol: Protocol) => string
}

export function classify(
  vs: KubeVirtualServer,
  sets: KubeSets,
  addrs: Addresses,
  cluster: ClusterIndex | null,
  nodePortOnlyAddresses: Set<string>,
  diagnostics: Diagnostic[],
): Classified | {foreign: string} {
  const refs = (members: SetMember[]) => members.map((m) => m.source)
  const key = endpointKey(vs.ip, vs.protocol, vs.port)
  const base: Omit<Classified, 'type' | 'evidence'> = {
    vs,
    local: null,
    sourceRanges: [],
    evidenceRefs: [],
    clusterService: null,
  }

  // The node's ipsets say what kube-proxy programmed on this node (a.4).
  let fromSets: Classified | null = null
  if (sets.known(vs.family)) {
    const f = vs.family
    const hit = (setBase: string) => sets.get(setBase, f, key)
    const clusterIp = hit('CLUSTER-IP')
    const extCluster = hit('EXTERNAL-IP')
    const extLocal = hit('EXTERNAL-IP-LOCAL')
    const lb = hit('LOAD-BALANCER')
    if (clusterIp.length > 0)
      fromSets = {...base, type: 'ClusterIP', evidence: 'ipset', evidenceRefs: refs(clusterIp)}
    else if (extCluster.length > 0 || extLocal.length > 0) {
      fromSets = {
        ...base,
        type: 'ExternalIP',
        local: extLocal.length > 0,
        evidence: 'ipset',
        evidenceRefs: refs([...extCluster, ...extLocal]),
      }
    } else if (lb.length > 0) {
      const local = hit('LOAD-BALANCER-LOCAL')
      const fw = hit('LOAD-BALANCER-FW')
      const cidrs = fw.length > 0 ? hit('LOAD-BALANCER-SOURCE-CIDR') : []
      fromSets = {
        ...base,
        type: 'LoadBalancer',
        local: local.length > 0,
        sourceRanges: [
          ...new Set(cidrs.map((m) => m.third).filter((c): c is string => c !== null)),
        ],
        evidence: 'ipset',
        evidenceRefs: refs([...lb, ...local, ...fw, ...cidrs]),
      }
    } else if (!addrs.bound.has(vs.ip)) {
      // NodePorts: a port bitmap per protocol for TCP/UDP, an ip,port hash for SCTP (a.4).
      let np: SetMember[]
      let npLocal: SetMember[]
      if (vs.protocol === 'SCTP') {
        np = [...hit('NODE-PORT-SCTP-HASH'), ...sets.get('NODE-PORT-SCTP', f, String(vs.port))]
        npLocal = [
          ...hit('NODE-PORT-LOCAL-SCTP-HASH'),
          ...sets.get('NODE-PORT-LOCAL-SCTP', f, String(vs.port)),
        ]
      } else {
        np = sets.get(`NODE-PORT-${vs.protocol}`, f, String(vs.port))
        npLocal = sets.get(`NODE-PORT-LOCAL-${vs.protocol}`, f, String(vs.port))
      }
      if (np.length > 0 || npLocal.length > 0)
        fromSets = {
          ...base,
          type: 'NodePort',
          local: npLocal.length > 0,
          evidence: 'ipset',
          evidenceRefs: refs([...np, ...npLocal]),
        }
    }
  }

  if (cluster) {
    const exact = cluster.byKey.get(cluster.key(vs.ip, vs.port, vs.protocol)) ?? []
    const nodePort =
      exact.length > 0
        ? []
        : (cluster.byKey.get(cluster.key(null, vs.port, vs.protocol)) ?? []).filter(
            (m) => m.frontend.type === 'NodePort' && m.service.family === vs.family,
          )
    const matches = exact.length > 0 ? exact : nodePort
    const match = matches[0]
    if (matches.length > 1) {
      const names = matches.map(
        (m) => `${m.service.namespace}/${m.service.name}:${m.service.portName}`,
      )
      diagnostics.push(
        diag(
          'warning',
          'IPVS_CLUSTER_AMBIGUOUS',
          `virtual server ${vs.key} is a frontend of several Services in the cluster objects (${names.join(', ')}); it is named after the first`,
          vs.refs[0] ?? null,
        ),
      )
    }
    if (match) {
      const external = match.frontend.type !== 'ClusterIP'
      const clusterLocal =
        external && match.service.externalTrafficPolicy !== null
          ? match.service.externalTrafficPolicy === 'Local'
          : null
      return {
        ...base,
        // The node's own ipsets, when they classify it, say what is programmed; the cluster names it.
        type: fromSets?.type ?? match.frontend.type,
        local: fromSets ? fromSets.local : clusterLocal,
        sourceRanges: fromSets ? fromSets.sourceRanges : [...match.frontend.sourceRanges],
        evidence: fromSets ? 'ipset' : 'cluster',
        evidenceRefs: fromSets?.evidenceRefs ?? [],
        clusterService: match.service,
      }
    }
  }
  if (fromSets) return fromSets
  if (sets.known(vs.family)) {
    return {
      foreign: `${vs.protocol} ${joinHostPort(vs.ip, vs.port, vs.family)} is in none of kube-proxy's ipsets (KUBE-CLUSTER-IP, KUBE-EXTERNAL-IP, KUBE-LOAD-BALANCER, KUBE-NODE-PORT-*)`,
    }
  }

  // Without ipsets: kube-ipvs0 holds every ClusterIP, externalIP and LB IP (a.2), and NodePorts
  // listen on the node's own addresses.
  if (addrs.boundKnown || addrs.nodeKnown) {
    const bound = addrs.bound.get(vs.ip)
    if (bound) return {...base, type: 'ClusterIP', evidence: 'ip-addr', evidenceRefs: [bound]}
    const nodeAddr = addrs.node.get(vs.ip)
    // A node address also carries keepalived's or kube-vip's virtual servers (kube-vip: the
    // apiserver port 6443); only a port of the default NodePort range makes it kube-proxy's here.
    if (nodeAddr && inNodePortRange(vs.port))
      return {...base, type: 'NodePort', evidence: 'ip-addr', evidenceRefs: [nodeAddr]}
    if (nodeAddr) {
      return {
        foreign: `on the node address ${vs.ip}, but port ${vs.port} is outside the default NodePort range ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max} (with another --service-node-port-range, \`ipset save\` or --cluster tells)`,
      }
    }
    if (addrs.nodeKnown)
      return {
        foreign: `address ${vs.ip} is neither bound to kube-ipvs0 nor one of the node's addresses`,
      }
    if (!inNodePortRange(vs.port))
      return {
        foreign: `address ${vs.ip} is not bound to kube-ipvs0, and port ${vs.port} is outside the NodePort range ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}`,
      }
    return {...base, type: 'NodePort', evidence: 'guess'}
  }

  // Nothing but ipvsadm. Most virtual servers of a node are ClusterIPs (one per Service port;
  // externalIPs and LB IPs are few), and 'External' in the model means "an externalIP or an LB
  // IP", which would be wrong for every one of them. So a virtual server is shown as ClusterIP,
  // unless its address serves only ports of the default NodePort range (then it is taken for a
  // node address), and the IPVS_UNCLASSIFIED warning says that this is a guess.
  return {
    ...base,
    type: nodePortOnlyAddresses.has(vs.ip) ? 'NodePort' : 'ClusterIP',
    evidence: 'guess',
  }
}

/** One diagnostic per kind of weak evidence, so that an operator knows which parts are guessed. */
export function reportEvidence(
  classified: Classified[],
  withCluster: boolean,
  diagnostics: Diagnostic[],
): void {
  const guessed = classified.filter((c) => c.evidence === 'guess')
  if (guessed.length > 0) {
    const np = guessed.filter((c) => c.type === 'NodePort').length
    diagnostics.push(
      diag(
        'warning',
        'IPVS_UNCLASSIFIED',
        `${guessed.length} virtual server(s) are classified by a guess: without \`ipset save\` or --cluster kp cannot tell a ClusterIP from an externalIP or LoadBalancer IP, nor, without the node's \`ip addr\` too, a NodePort. ` +
          `They are shown as ClusterIP${np > 0 ? `, except ${np} on addresses that serve only ports ${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}, shown as NodePort` : ''}; traffic policies are unknown (null)`,
        guessed[0]!.vs.refs[0] ?? null,
      ),
    )
  }
  const bound = classified.filter((c) => c.evidence === 'ip-addr' && c.type === 'ClusterIP')
  if (bound.length > 0) {
    diagnostics.push(
      diag(
        'info',
        'IPVS_BOUND_ADDRESS_TYPE',
        `${bound.length} virtual server(s) on kube-ipvs0 addresses are shown as ClusterIP: kube-ipvs0 also holds externalIPs and LoadBalancer IPs, which only \`ipset save\` or --cluster tell apart`,
        bound[0]!.vs.refs[0] ?? null,
      ),
    )
  }
  if (withCluster) {
    for (const c of classified) {
      if (c.clusterService === null) {
        diagnostics.push(
          diag(
            'warning',
            'IPVS_NOT_IN_CLUSTER',
            `virtual server ${c.vs.key} matches no Service in the cluster objects (a stale virtual server, or cluster objects of another time or cluster)`,
            c.vs.refs[0] ?? null,
          ),
        )
      }
    }
  }
}
