/**
 * Stage 2 of the cluster-objects reader: Services + EndpointSlices -> the ProxyState kube-proxy
 * would program on one node (`--node`, default this host's name when the objects name it), or the
 * cluster-wide view when no node is given and this host is none of theirs (./cluster-wide.ts),
 * in state.mode 'cluster'.
 *
 * Endpoint selection is kube-proxy's own (pkg/proxy/endpointslicecache.go here, topology.go
 * CategorizeEndpoints and serviceport.go in src/kube-proxy/endpoints.ts;
 * docs/ipvs-layouts.md c.2-c.4 and docs/kube-proxy-layouts.md §1). Where the modes differ the state is built for the target
 * mode (`opts.mode`, nftables when not given):
 *   * iptables / nftables (§2.4, §3.4): a frontend whose policy is Local and that has no local
 *     endpoint gets `drop`; a service without any endpoint gets `reject`.
 *   * ipvs (a.3, PR #97081): a virtual server that should use local endpoints but has none
 *     falls back to the cluster endpoints; a virtual server without real servers answers with
 *     ICMP port unreachable (the kernel's ip_vs_leave), which is `reject`.
 * Every frontend of a service port therefore has its own action, while the service port keeps
 * one endpoint list: every endpoint some frontend can reach, with `share` over the path a
 * ClusterIP connection takes (the local endpoints under internalTrafficPolicy=Local).
 */
import {pushAll} from '../../core/arrays.js'
import {parseCidrSloppy, parseIpSloppy} from '../../core/address.js'
import {hostname} from 'node:os'
import {diag, emptyState, sortState} from '../../core/state.js'
import {categorizeEndpoints, endpointUse, localOrCluster} from '../../kube-proxy/endpoints.js'
import {DEFAULT_AFFINITY_TIMEOUT_SECONDS} from '../../kube-proxy/settings.js'
import type {
  Diagnostic,
  Endpoint,
  Family,
  Frontend,
  FrontendAction,
  Mode,
  ProxyState,
  ServicePort,
  SourceRef,
} from '../../model/types.js'
import type {ParsedSource, ReadOptions, SourceText} from '../types.js'
import {binaryDataProblem, SNIFF_BYTES} from '../bytes.js'
import {sniffFormat} from '../registry.js'
import {emptyKubeObjects, parseKube} from './parse.js'
import {LABEL_SERVICE_NAME, slicesFromLegacy} from './legacy-endpoints.js'
import {localSetsByNode, nodesNamed, pointOfView} from './cluster-wide.js'
import {
  type CachedEndpoint,
  collectEndpoints,
  nsName,
  portKey,
  redactedIp,
} from './endpoint-slices.js'

export {frontendKey, indexFrontends, type FrontendMatch} from './frontend-index.js'
import type {
  KubeEndpointSlice,
  KubeLegacyEndpoints,
  KubeObjects,
  KubeService,
  KubeServicePort,
} from './parse.js'

/** The label kube-proxy's informers exclude: the object belongs to another service proxy (c.2). */
const LABEL_SERVICE_PROXY_NAME = 'service.kubernetes.io/service-proxy-name'
/** Set by the EndpointSlice controller on the slices of headless Services (c.2). */
const LABEL_HEADLESS = 'service.kubernetes.io/headless'
/** EndpointSliceMirroring does not mirror Endpoints carrying this label set to "true" (c.2). */
const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror'

type TargetMode = Exclude<Mode, 'cluster'>

/** One endpoint after kube-proxy's cache: addresses[0], deduplicated by ip:port, conditions defaulted. */
const endpointKey = (e: CachedEndpoint): string =>
  e.redactedAt === undefined ? `${e.ip}|${e.port}` : `${e.ip}|${e.port}|${e.redactedAt}`

/** pkg/api/v1/service/util.go ExternallyAccessible: decided by the Service's type. */
function serviceExternallyAccessible(svc: KubeService): boolean {
  return (
    svc.type === 'LoadBalancer' ||
    svc.type === 'NodePort' ||
    (svc.type === 'ClusterIP' && svc.externalIPs.length > 0)
  )
}

export interface ServiceWork {
  svc: KubeService
  slices: KubeEndpointSlice[]
}

/** Options of the cluster builder: `mode` is the proxy mode the state is built for, `node` the point of view. */
export type ClusterBuildOptions = Pick<ReadOptions, 'mode' | 'node'>

/**
 * Builds the ProxyState for one node from parsed kube sources. Never throws on bad input.
 * state.mode is 'cluster'; endpoint selection and frontend actions follow `opts.mode`
 * (default nftables).
 */
export function buildClusterState(parsed: ParsedSource[], opts: ClusterBuildOptions): ProxyState {
  const state = emptyState('cluster')
  const diagnostics: Diagnostic[] = []
  const target: TargetMode =
    opts.mode === undefined || opts.mode === 'cluster' ? 'nftables' : opts.mode
  state.sources = parsed.map((p) => p.source)

  const all = emptyKubeObjects()
  for (const p of parsed) {
    const data = p.format === 'kube' ? (p.data as KubeObjects | null) : null
    if (!data) continue
    pushAll(all.services, data.services)
    pushAll(all.slices, data.slices)
    pushAll(all.legacyEndpoints, data.legacyEndpoints)
  }

  // Services by namespace/name. A second copy of the same Service replaces the first, with a warning.
  const services = new Map<string, ServiceWork>()
  for (const svc of all.services) {
    const key = nsName(svc.namespace, svc.name)
    const prev = services.get(key)
    if (prev)
      diagnostics.push(
        diag(
          'warning',
          'KUBE_DUPLICATE_OBJECT',
          `Service ${key} appears again (first at ${prev.svc.ref.path}:${prev.svc.ref.line}); the later one is used`,
          svc.ref,
        ),
      )
    services.set(key, {svc, slices: []})
  }

  // kube-proxy's slice cache is keyed by namespace/name: a later copy replaces the earlier one.
  const slicesByName = new Map<string, KubeEndpointSlice>()
  for (const slice of all.slices) {
    const key = nsName(slice.namespace, slice.name)
    const prev = slicesByName.get(key)
    if (prev)
      diagnostics.push(
        diag(
          'warning',
          'KUBE_DUPLICATE_OBJECT',
          `EndpointSlice ${key} appears again (first at ${prev.ref.path}:${prev.ref.line}); the later one is used`,
          slice.ref,
        ),
      )
    slicesByName.set(key, slice)
  }

  // Slices joined to their Service through the kubernetes.io/service-name label (c.4).
  for (const slice of slicesByName.values()) {
    const what = `EndpointSlice ${nsName(slice.namespace, slice.name)}`
    if (LABEL_SERVICE_PROXY_NAME in slice.labels) {
      diagnostics.push(
        diag(
          'info',
          'KUBE_OTHER_PROXY',
          `${what} is labelled ${LABEL_SERVICE_PROXY_NAME}=${slice.labels[LABEL_SERVICE_PROXY_NAME]}; kube-proxy leaves it to that proxy`,
          slice.ref,
        ),
      )
      continue
    }
    if (LABEL_HEADLESS in slice.labels) {
      diagnostics.push(
        diag(
          'info',
          'KUBE_HEADLESS',
          `${what} belongs to a headless Service; kube-proxy ignores it`,
          slice.ref,
        ),
      )
      continue
    }
    const svcName = slice.labels[LABEL_SERVICE_NAME]
    if (!svcName) {
      diagnostics.push(
        diag(
          'warning',
          'KUBE_SLICE_NO_SERVICE_LABEL',
          `${what} has no ${LABEL_SERVICE_NAME} label; kube-proxy ignores it`,
          slice.ref,
        ),
      )
      continue
    }
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') {
      diagnostics.push(
        diag(
          'info',
          'KUBE_SLICE_ADDRESS_TYPE',
          `${what} has addressType ${slice.addressType || '(none)'}; kube-proxy reads only IPv4 and IPv6 slices`,
          slice.ref,
        ),
      )
      continue
    }
    const work = services.get(nsName(slice.namespace, svcName))
    if (!work) {
      diagnostics.push(
        diag(
          'info',
          'KUBE_SLICE_WITHOUT_SERVICE',
          `${what} is for Service ${nsName(slice.namespace, svcName)}, which is not in the input`,
          slice.ref,
        ),
      )
      continue
    }
    work.slices.push(slice)
  }

  // Legacy Endpoints stand in only for Services that have no slice at all (issue 3 §3).
  const legacyByService = new Map<string, KubeLegacyEndpoints>()
  for (const ep of all.legacyEndpoints) legacyByService.set(nsName(ep.namespace, ep.name), ep)
  for (const [key, ep] of legacyByService) {
    const work = services.get(key)
    if (!work || work.slices.length > 0) continue
    if (ep.labels[LABEL_SKIP_MIRROR] === 'true') {
      diagnostics.push(
        diag(
          'info',
          'KUBE_SKIP_MIRROR',
          `Endpoints ${key} is labelled ${LABEL_SKIP_MIRROR}=true; it is never mirrored into a slice, so kube-proxy does not see it`,
          ep.ref,
        ),
      )
      continue
    }
    diagnostics.push(
      diag(
        'warning',
        'KUBE_LEGACY_ENDPOINTS',
        `Service ${key} has no EndpointSlice in the input; its endpoints are taken from the legacy v1 Endpoints object (kube-proxy reads only EndpointSlices; include them with kubectl get endpointslices)`,
        ep.ref,
      ),
    )
    pushAll(work.slices, slicesFromLegacy(ep))
  }
  if (all.services.length > 0 && all.slices.length === 0 && all.legacyEndpoints.length === 0) {
    diagnostics.push(
      diag(
        'warning',
        'KUBE_NO_ENDPOINTSLICES',
        'the input has Services but no EndpointSlices, so every service shows no endpoints; use `kubectl get svc,endpointslices -A -o yaml`',
        all.services[0]?.ref ?? null,
      ),
    )
  }

  // kube-proxy's default node name is the host name, trimmed and lower-cased (nodeutil.GetHostname);
  // without --node, a host the objects do not name gets the cluster-wide view (./cluster-wide.ts).
  const named = nodesNamed([...services.values()].flatMap((w) => w.slices))
  const node = pointOfView(opts.node, hostname().trim().toLowerCase(), named)
  state.node.name = node
  state.node.view = node === null ? 'cluster-wide' : 'node'
  const zone = node === null ? null : nodeZone(slicesByName.values(), node, diagnostics)
  // A List cut off (KUBE_TRUNCATED): kubectl lists the Services before the slices, so a Service
  // without a slice read may have its slices after the cut: its endpoints are unknown, not none.
  const cut = parsed.some((p) => p.diagnostics.some((d) => d.code === 'KUBE_TRUNCATED'))
  for (const work of services.values()) {
    const before = state.services.length
    buildService(
      work,
      {target, node, zone, weight: target === 'ipvs' ? 1 : null},
      state.services,
      diagnostics,
    )
    if (cut && work.slices.length === 0)
      for (const sp of state.services.slice(before)) markSlicesUnknown(sp, work.svc)
  }

  state.diagnostics = diagnostics
  return sortState(state)
}

function markSlicesUnknown(sp: ServicePort, svc: KubeService): void {
  const incomplete = {
    missing: [`an EndpointSlice of Service ${nsName(svc.namespace, svc.name)}`],
    collect: 'kubectl get svc,endpointslices -A -o yaml',
  }
  sp.incomplete = incomplete
  for (const fe of sp.frontends) fe.incomplete = incomplete
}

export interface BuildContext {
  target: TargetMode
  /** The node kube-proxy runs on; null for the cluster-wide view. */
  node: string | null
  /** The node's topology.kubernetes.io/zone as far as the objects tell; null when unknown. */
  zone: string | null
  weight: number | null
}

/**
 * The zone of `node`, for zone hints. The Node object is not in the input, but an endpoint's
 * `zone` is its node's zone label (the EndpointSlice controller copies it), so any endpoint
 * running on this node tells it.
 */
function nodeZone(
  slices: Iterable<KubeEndpointSlice>,
  node: string,
  diagnostics: Diagnostic[],
): string | null {
  const zones = new Set<string>()
  let ref: SourceRef | null = null
  for (const slice of slices) {
    for (const e of slice.endpoints) {
      if (e.nodeName !== node || e.zone === null) continue
      zones.add(e.zone)
      ref ??= slice.ref
    }
  }
  if (zones.size <= 1) return zones.values().next().value ?? null
  diagnostics.push(
    diag(
      'warning',
      'KUBE_NODE_ZONE_CONFLICT',
      `endpoints on node ${node} name different zones (${[...zones].sort().join(', ')}); zone hints are not applied`,
      ref,
    ),
  )
  return null
}

/** Which Services kube-proxy skips (ShouldSkipService, and the informer's label selector; c.2). */
function skipReason(svc: KubeService): string | null {
  if (LABEL_SERVICE_PROXY_NAME in svc.labels)
    return `it is labelled ${LABEL_SERVICE_PROXY_NAME}=${svc.labels[LABEL_SERVICE_PROXY_NAME]}, so another proxy handles it`
  if (svc.type === 'ExternalName') return 'it is an ExternalName Service'
  if (svc.clusterIPs.length === 0 || svc.clusterIPs[0] === 'None' || svc.clusterIPs[0] === '')
    return 'it is headless (no cluster IP)'
  return null
}

function buildService(
  work: ServiceWork,
  ctx: BuildContext,
  out: ServicePort[],
  diagnostics: Diagnostic[],
): void {
  const {svc} = work
  const key = nsName(svc.namespace, svc.name)
  const skip = skipReason(svc)
  if (skip) {
    diagnostics.push(
      diag(
        'info',
        'KUBE_SERVICE_IGNORED',
        `Service ${key} is ignored by kube-proxy: ${skip}`,
        svc.ref,
      ),
    )
    return
  }
  if (svc.ports.length === 0) {
    diagnostics.push(
      diag(
        'warning',
        'KUBE_SERVICE_NO_PORTS',
        `Service ${key} has no ports; kube-proxy programs nothing for it`,
        svc.ref,
      ),
    )
    return
  }

  // One proxier per family (a.1): each family with a cluster IP gets its own service ports.
  const clusterIpByFamily = new Map<Family, string>()
  for (const raw of svc.clusterIPs) {
    const ip = parseIpSloppy(raw) ?? redactedIp(raw)
    if (!ip) {
      diagnostics.push(
        diag(
          'warning',
          'KUBE_BAD_IP',
          `Service ${key}: cluster IP ${JSON.stringify(raw)} is not an IP address; ignored`,
          svc.ref,
        ),
      )
      continue
    }
    // GetClusterIPByFamily takes the first cluster IP of each family.
    if (!clusterIpByFamily.has(ip.family)) clusterIpByFamily.set(ip.family, ip.text)
  }

  // externalIPs, LB IPs and source ranges are filtered to each proxier's family (serviceport.go).
  const byFamily = (
    values: string[],
    what: string,
    parse: (s: string) => {family: Family; text: string} | null,
  ): Map<Family, string[]> => {
    const m = new Map<Family, string[]>()
    for (const raw of values) {
      const v = parse(raw)
      if (!v) {
        diagnostics.push(
          diag(
            'warning',
            'KUBE_BAD_IP',
            `Service ${key}: ${what} ${JSON.stringify(raw)} is not valid; ignored`,
            svc.ref,
          ),
        )
        continue
      }
      const list = m.get(v.family) ?? []
      list.push(v.text)
      m.set(v.family, list)
    }
    return m
  }
  const ipOrRedacted = (raw: string) => parseIpSloppy(raw) ?? redactedIp(raw)
  const externalIPs = byFamily(svc.externalIPs, 'externalIP', ipOrRedacted)
  const sourceRanges = byFamily(
    svc.loadBalancerSourceRanges,
    'loadBalancerSourceRange',
    // A redacted range is kept as written; the state's address check marks it (valid-addresses.ts).
    (raw) => parseCidrSloppy(raw) ?? redactedIp(raw),
  )
  // ipMode Proxy: the load balancer proxies itself, so kube-proxy does not program the IP (c.3).
  const lbIPs = byFamily(
    svc.loadBalancerIngress.filter((i) => i.ipMode !== 'Proxy').map((i) => i.ip),
    'status.loadBalancer.ingress ip',
    ipOrRedacted,
  )

  const internalPolicyLocal = svc.internalTrafficPolicy === 'Local'
  const externalPolicyLocal =
    serviceExternallyAccessible(svc) && svc.externalTrafficPolicy === 'Local'
  // NeedsHealthCheck: only a LoadBalancer with an effective Local external policy.
  const healthCheckNodePort =
    svc.type === 'LoadBalancer' && externalPolicyLocal && svc.healthCheckNodePort > 0
      ? svc.healthCheckNodePort
      : null
  const sessionAffinity =
    svc.sessionAffinity === 'ClientIP'
      ? {
          type: 'ClientIP' as const,
          timeoutSeconds: svc.affinityTimeoutSeconds ?? DEFAULT_AFFINITY_TIMEOUT_SECONDS,
        }
      : null

  for (const slice of work.slices) {
    if (clusterIpByFamily.has(slice.addressType as Family)) continue
    diagnostics.push(
      diag(
        'info',
        'KUBE_SLICE_FAMILY_UNUSED',
        `EndpointSlice ${nsName(slice.namespace, slice.name)} is ${slice.addressType} but Service ${key} has no ${slice.addressType} cluster IP; kube-proxy does not use it`,
        slice.ref,
      ),
    )
  }
  for (const [fam, clusterIP] of clusterIpByFamily) {
    const endpointsByPort = collectEndpoints(work, fam, ctx, diagnostics)
    for (const port of svc.ports) {
      const joined = endpointsByPort.get(portKey(port.name, port.protocol))
      const famExternalIPs = externalIPs.get(fam) ?? []
      const famLbIPs = lbIPs.get(fam) ?? []
      const sp = buildServicePort({
        svc,
        port,
        family: fam,
        clusterIP,
        externalIPs: famExternalIPs,
        lbIPs: famLbIPs,
        sourceRanges: sourceRanges.get(fam) ?? [],
        internalPolicyLocal,
        externalPolicyLocal,
        endpoints: joined ? [...joined.endpoints.values()] : [],
        ctx,
        diagnostics,
      })
      sp.healthCheckNodePort = healthCheckNodePort
      sp.sessionAffinity = sessionAffinity ? {...sessionAffinity} : null
      sp.rules = [svc.ref, ...(joined?.refs ?? [])]
      out.push(sp)
    }
  }
}

interface ServicePortInput {
  svc: KubeService
  port: KubeServicePort
  family: Family
  clusterIP: string
  externalIPs: string[]
  lbIPs: string[]
  sourceRanges: string[]
  internalPolicyLocal: boolean
  externalPolicyLocal: boolean
  endpoints: CachedEndpoint[]
  ctx: BuildContext
  diagnostics: Diagnostic[]
}

function buildServicePort(input: ServicePortInput): ServicePort {
  const {svc, port, family: fam, ctx} = input
  // serviceport.go: these use the family-filtered lists, unlike ExternalPolicyLocal above.
  const portExternallyAccessible =
    port.nodePort !== 0 || input.lbIPs.length > 0 || input.externalIPs.length > 0
  const use = endpointUse(
    input.internalPolicyLocal,
    input.externalPolicyLocal,
    portExternallyAccessible,
  )
  const usesCluster = use.usesClusterEndpoints
  // Cluster-wide, hints apply per node (each uses its own zone's); kp shows every ready endpoint.
  const topology = ctx.node === null ? null : {node: ctx.node, zone: ctx.zone}
  const cats = categorizeEndpoints(input.endpoints, use, endpointKey, topology)
  const cluster = cats.clusterEndpoints ?? []
  const local = cats.localEndpoints ?? []
  // Cluster-wide, a Local policy forwards on the nodes that have a local set, to that set.
  const localByNode =
    ctx.node === null && use.usesLocalEndpoints ? localSetsByNode(input.endpoints) : null
  const forwardingNodes = localByNode === null ? [] : [...localByNode.keys()].sort()
  const where = ctx.node === null ? 'any node' : `node ${ctx.node}`

  const spName = `Service ${nsName(svc.namespace, svc.name)} port ${JSON.stringify(port.name)}/${port.protocol} (${fam})`
  if (cats.topologyMode !== '') {
    const hinted = cats.topologyMode === 'PreferSameNode' ? where : `zone ${ctx.zone}`
    input.diagnostics.push(
      diag(
        'info',
        'KUBE_TOPOLOGY_HINTS',
        `${spName}: topology hints for ${hinted} apply; the cluster path uses ${cluster.length} of ${input.endpoints.filter((e) => e.ready).length} ready endpoints`,
        svc.ref,
      ),
    )
  } else if (usesCluster && ctx.zone === null) {
    const ready = input.endpoints.filter((e) => e.ready)
    if (ready.length > 0 && ready.every((e) => e.zoneHints.length > 0)) {
      const why =
        ctx.node === null
          ? 'this is the cluster-wide view (no --node), and each node uses only the endpoints hinted for its zone'
          : `the zone of node ${ctx.node} is not known from these objects (no endpoint runs on it); kube-proxy would use only the endpoints hinted for its zone`
      input.diagnostics.push(
        diag(
          'warning',
          'KUBE_TOPOLOGY_ZONE_UNKNOWN',
          `${spName}: endpoints carry zone hints, but ${why}, kp shows every ready endpoint`,
          svc.ref,
        ),
      )
    }
  }

  const internalAction = (): FrontendAction => {
    if (ctx.target === 'ipvs') {
      // ClusterIP VS: local endpoints under ITP=Local, falling back to the cluster set.
      const rs = localOrCluster(input.internalPolicyLocal, cluster, local)
      return rs.length > 0 ? 'forward' : 'reject'
    }
    const hasInternal = input.internalPolicyLocal
      ? local.length > 0 || forwardingNodes.length > 0
      : cats.hasAnyEndpoints
    return hasInternal ? 'forward' : cats.hasAnyEndpoints ? 'drop' : 'reject'
  }
  const externalAction = (): FrontendAction => {
    if (ctx.target === 'ipvs') {
      const rs = localOrCluster(input.externalPolicyLocal, cluster, local)
      return rs.length > 0 ? 'forward' : 'reject'
    }
    const hasExternal = input.externalPolicyLocal
      ? local.length > 0 || forwardingNodes.length > 0
      : cats.hasAnyEndpoints
    return hasExternal ? 'forward' : cats.hasAnyEndpoints ? 'drop' : 'reject'
  }
  const ext = externalAction()
  const frontends: Frontend[] = [
    {
      type: 'ClusterIP',
      ip: input.clusterIP,
      port: port.port,
      sourceRanges: [],
      action: internalAction(),
    },
  ]
  for (const ip of input.externalIPs)
    frontends.push({type: 'ExternalIP', ip, port: port.port, sourceRanges: [], action: ext})
  for (const ip of input.lbIPs)
    frontends.push({
      type: 'LoadBalancer',
      ip,
      port: port.port,
      sourceRanges: [...input.sourceRanges],
      action: ext,
    })
  // NodePorts are not subject to loadBalancerSourceRanges (§2.4).
  if (port.nodePort !== 0)
    frontends.push({type: 'NodePort', ip: null, port: port.nodePort, sourceRanges: [], action: ext})
  // IPVS falls back to every endpoint where no local one runs: no node drops, so none is named.
  if (forwardingNodes.length > 0 && ctx.target !== 'ipvs') {
    for (const fe of frontends)
      if (fe.type === 'ClusterIP' ? input.internalPolicyLocal : input.externalPolicyLocal)
        fe.forwardedOnNodes = [...forwardingNodes]
  }

  // Every endpoint some frontend can reach (allLocallyReachableEndpoints), with shares over the
  // path a ClusterIP connection takes (a share is for a new connection from inside the cluster):
  // the local set under internalTrafficPolicy=Local, else the cluster set. Under ITP=Local the
  // readers of the node's rules see the shares of KUBE-SVL- / the local chain, which takes only
  // this node's endpoints, even when a NodePort makes the service use the cluster set as well;
  // shares over the cluster set made `kp diff cluster.yaml node-dump` report every endpoint of
  // such a service as changed. Without a local endpoint the ClusterIP has no local chain (it
  // drops, or IPVS falls back to the cluster set), and the readers give the cluster chain's shares.
  const reachable = new Map<string, CachedEndpoint>()
  const reach = (list: readonly CachedEndpoint[]): void => {
    for (const e of list) reachable.set(endpointKey(e), e)
  }
  if (ctx.target === 'ipvs') {
    // IPVS has no short-circuit of pod traffic to the cluster set under ETP=Local: an endpoint is
    // reachable only as a real server of some virtual server (the readers of ipvsadm see no other).
    reach(localOrCluster(input.internalPolicyLocal, cluster, local))
    if (portExternallyAccessible) reach(localOrCluster(input.externalPolicyLocal, cluster, local))
  } else {
    reach(cats.allReachableEndpoints)
  }
  if (localByNode !== null) for (const set of localByNode.values()) reach(set)
  const sharePath = localOrCluster(input.internalPolicyLocal, cluster, local)
  const inSharePath = new Set(sharePath.map(endpointKey))
  // Cluster-wide, the ClusterIP's path under internalTrafficPolicy=Local is each node's own.
  const sharesPerNode = ctx.node === null && input.internalPolicyLocal
  const endpoints: Endpoint[] = [...reachable.entries()].map(([id, e]) => ({
    ip: e.ip,
    port: e.port,
    local: ctx.node === null ? null : e.local,
    share: sharesPerNode ? null : inSharePath.has(id) ? 1 / sharePath.length : 0,
    weight: ctx.weight,
    state: e.ready ? 'ready' : 'serving-terminating',
  }))
  const unused = input.endpoints.length - reachable.size
  if (unused > 0) {
    input.diagnostics.push(
      diag(
        'info',
        'KUBE_ENDPOINTS_UNUSED',
        `${spName}: ${unused} endpoint(s) not used by kube-proxy on ${where} (not ready, terminating while ready ones exist, outside the topology hints, or remote under a Local-only policy)`,
        svc.ref,
      ),
    )
  }

  return {
    namespace: svc.namespace,
    name: svc.name,
    portName: port.name,
    protocol: port.protocol,
    family: fam,
    frontends,
    healthCheckNodePort: null,
    internalTrafficPolicy: input.internalPolicyLocal ? 'Local' : 'Cluster',
    externalTrafficPolicy: input.externalPolicyLocal ? 'Local' : 'Cluster',
    sessionAffinity: null,
    scheduler: null,
    endpoints,
    rules: [],
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers for other readers (the IPVS builder names virtual servers from cluster objects).

/**
 * Reads cluster-object sources (`--cluster`) straight into the state kube-proxy would program
 * for `opts.node` in `opts.mode`; parse diagnostics come first. Never throws on bad input.
 */
export function readClusterSources(sources: SourceText[], opts: ClusterBuildOptions): ProxyState {
  const misplaced: Diagnostic[] = []
  const parsed: ParsedSource[] = []
  for (const src of sources) {
    const head = src.text.slice(0, SNIFF_BYTES)
    // Refused as read-state.ts refuses any input: the YAML reader would take NUL bytes for one long string.
    const binary = binaryDataProblem(head)
    if (binary !== null) {
      misplaced.push(diag('error', 'INPUT_BINARY', binary, {path: src.path, line: 1}))
      continue
    }
    // A node dump given as cluster objects would only produce YAML syntax errors; say what it is.
    const format = src.format ?? sniffFormat(head)
    if (format !== null && format !== 'kube') {
      misplaced.push(
        diag(
          'error',
          'KUBE_NOT_CLUSTER_OBJECTS',
          `this looks like ${format} input, not Kubernetes objects (kubectl get svc,endpointslices -A -o yaml)`,
          {path: src.path, line: 1},
        ),
      )
      continue
    }
    parsed.push(parseKube(src))
  }
  const state = buildClusterState(parsed, opts)
  state.sources = sources.map((s) => ({path: s.path, format: 'kube', tool: s.tool ?? null}))
  state.diagnostics = [...misplaced, ...parsed.flatMap((p) => p.diagnostics), ...state.diagnostics]
  return state
}
