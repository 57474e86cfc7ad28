/**
 * Builds the per-service-port plan (./plan-types.ts) from the model and runs kube-proxy's endpoint
 * categorisation (pkg/proxy/topology.go CategorizeEndpoints, docs/kube-proxy-layouts.md §1
 * "Endpoint categorisation"); every guess and every value left out becomes a finding.
 */
import type {Endpoint, Family, ProxyState, ServicePort} from '../model/types.js'
import {displayName} from '../core/state.js'
import {EVIDENCE_REFS_PER_PORT, type Finding} from '../analyze/findings.js'
import type {FindingId} from '../catalog/findings.js'
import {addressFamily, addressOrCidrFamily, isAddressCidr, joinHostPort} from '../core/address.js'
import {DEFAULT_AFFINITY_TIMEOUT_SECONDS} from '../kube-proxy/settings.js'
import {categorizeEndpoints, conditionsOfState, endpointUse} from '../kube-proxy/endpoints.js'
import {isSchedulerName} from './setting-values.js'
import {DOCS_VIRTUAL_IPS, finding, type RenderTarget} from './findings.js'
import type {PlannedEndpoint, PlannedFrontend, ServicePlan} from './plan-types.js'

const UNSAFE_NAME_CHARS = /[^A-Za-z0-9.-]/g
const SAFE_NAME = /^[A-Za-z0-9._-]*$/

/**
 * Restates one service port as kube-proxy's inputs. Everything the model cannot give and every
 * guess becomes a finding; nothing is dropped without one.
 */
export function planService(
  sp: ServicePort,
  target: RenderTarget,
  findings: Finding[],
): ServicePlan {
  const display = displayName(sp)
  const evidence = sp.rules.slice(0, EVIDENCE_REFS_PER_PORT)
  const note = (
    id: FindingId,
    severity: Finding['severity'],
    title: string,
    message: string,
    action: string,
    addresses: string[] = [],
  ) =>
    findings.push(
      finding(id, severity, title, message, {
        services: [display],
        addresses,
        evidence,
        action,
        docs: DOCS_VIRTUAL_IPS,
      }),
    )

  const clusterFe = sp.frontends.find((f) => f.type === 'ClusterIP') ?? null
  let syntheticName = false
  let namespace = sp.namespace
  let name = sp.name
  let portName = sp.portName
  const unsafe =
    isUnsafeName(namespace) ||
    isUnsafeName(name) ||
    isUnsafeName(portName) ||
    namespace === '' ||
    name === ''
  if (unsafe) {
    // Names land in rule comments and nft chain names; a crafted source must not be able to
    // break out of a quoted comment or inject a line.
    note(
      'RENDER_UNSAFE_NAME',
      'error',
      'service name has characters Kubernetes does not allow; a made-up name was used',
      'The namespace, name or port name of this service port contains characters outside [A-Za-z0-9._-], which no Kubernetes object can have. It was not written into the rules; a name made up from the ClusterIP was used instead.',
      'Check where this state came from.',
    )
    namespace = null
    name = null
  }
  if (namespace === null || name === null) {
    // kube-proxy's chain names hash the Service's name; without one, make a stable name from
    // the ClusterIP, port and protocol so the same state always renders the same chains.
    syntheticName = true
    const anchor = clusterFe ?? sp.frontends[0] ?? null
    namespace = 'kp-unnamed'
    name = `${(anchor?.ip ?? 'none').replace(UNSAFE_NAME_CHARS, '.')}-${anchor?.port ?? 'none'}-${sp.protocol.toLowerCase()}`
    portName = ''
    if (!unsafe && target !== 'ipvs')
      note(
        'RENDER_SYNTHETIC_NAME',
        'warning',
        'service name unknown; chain names made up from ClusterIP:port/protocol',
        `The source does not name this service port, so kube-proxy's chain-name hashes cannot be computed. It was rendered as ${namespace}/${name}; the chain names will differ from what kube-proxy programs.`,
        'Read the node together with the cluster objects (--cluster) so services have their names.',
      )
  } else if (portName === null) {
    portName = ''
    if (target !== 'ipvs')
      note(
        'RENDER_UNKNOWN_PORT_NAME',
        'warning',
        'port name unknown; rendered as an unnamed port',
        "The source does not show the port name, which is part of the chain-name hash. It was rendered as an unnamed port; if the port has a name, the chain names will differ from kube-proxy's.",
        'Read the node together with the cluster objects (--cluster).',
      )
  }
  const spn = portName ? `${namespace}/${name}:${portName}` : `${namespace}/${name}`
  const protocol = sp.protocol.toLowerCase()

  const withPort = (
    type: string,
    f: {ip: string | null; port: number | null; sourceRanges: string[]},
  ): PlannedFrontend | null => {
    if (f.ip !== null && addressFamily(f.ip) !== sp.family) {
      note(
        'RENDER_BAD_ADDRESS',
        'error',
        `${type} frontend address is not an ${sp.family} address; left out`,
        `The ${type} frontend address of this ${sp.family} service port is not a valid ${sp.family} address, so it was not rendered.`,
        'Check the source state.',
        [f.ip],
      )
      return null
    }
    if (f.port !== null && !isPort(f.port)) {
      note(
        'RENDER_BAD_PORT',
        'error',
        `${type} frontend port ${f.port} is not a port; left out`,
        `The ${type} frontend port is not an integer between 1 and 65535, so it was not rendered.`,
        'Check the source state.',
        f.ip ? [f.ip] : [],
      )
      return null
    }
    // The whole CIDR is checked, not only its address: ranges are written into the rules as they are.
    const badRanges = f.sourceRanges.filter(
      (r) => !isAddressCidr(r) || addressOrCidrFamily(r) !== sp.family,
    )
    if (badRanges.length > 0) {
      note(
        'RENDER_BAD_SOURCE_RANGE',
        'error',
        'source ranges that are not CIDRs of the service family left out',
        `loadBalancerSourceRanges ${badRanges.join(', ')} are not ${sp.family} CIDRs, so they were not rendered.`,
        'Check the source state.',
        badRanges,
      )
      const bad = new Set(badRanges)
      f = {...f, sourceRanges: f.sourceRanges.filter((r) => !bad.has(r))}
    }
    if (f.ip === null || f.port === null) {
      note(
        'RENDER_FRONTEND_INCOMPLETE',
        'warning',
        `${type} frontend without ${f.ip === null ? 'address' : 'port'} left out`,
        `A ${type} frontend of this service port has no ${f.ip === null ? 'address' : 'port'} in the source, so it cannot be rendered.`,
        'Read the node together with the cluster objects (--cluster).',
        f.ip ? [f.ip] : [],
      )
      return null
    }
    return {ip: f.ip, port: f.port, sourceRanges: f.sourceRanges}
  }
  const clusterIP = clusterFe ? withPort('ClusterIP', clusterFe) : null
  if (!clusterFe) {
    note(
      'RENDER_NO_CLUSTER_IP',
      'warning',
      'no ClusterIP known; ClusterIP rules left out',
      'kube-proxy always programs the ClusterIP of a service port; the source does not show it for this one, so only its other frontends were rendered.',
      'Read the node together with the cluster objects (--cluster).',
    )
  }
  const externalIPs: PlannedFrontend[] = []
  const loadBalancerIPs: PlannedFrontend[] = []
  const sourceRanges: string[] = []
  /** sourceRanges as a set, made for a port with ranges only: a union by scanning the list is quadratic. */
  let seenRanges: Set<string> | null = null
  let nodePort: number | null = null
  for (const f of sp.frontends) {
    if (f.type === 'ExternalIP') {
      const p = withPort('ExternalIP', f)
      if (p) externalIPs.push(p)
    } else if (f.redactedSourceRanges !== undefined && f.redactedSourceRanges.length > 0) {
      // Rendered without the hidden ranges it would admit too few clients, or with none of them
      // every client: neither is what the node does, so the frontend is left out.
      note(
        'RENDER_BAD_SOURCE_RANGE',
        'error',
        `${f.type} ${f.ip ?? '<redacted>'}:${f.port ?? '?'} left out: the input hid some of its source ranges`,
        `loadBalancerSourceRanges ${f.redactedSourceRanges.join(', ')} were redacted in the input, so who may connect to this frontend is not known and it was not rendered.`,
        'Give the unredacted dump (or the cluster objects, --cluster) to render it.',
        f.ip ? [f.ip] : [],
      )
    } else if (f.type === 'LoadBalancer' || (f.type === 'External' && f.sourceRanges.length > 0)) {
      // nftables shows externalIPs and LB IPs alike; one with source ranges is an LB IP.
      const p = withPort('LoadBalancer', f)
      if (p) loadBalancerIPs.push(p)
      // The ranges withPort kept (it reports the others); a frontend it left out keeps only its CIDRs of this family.
      const kept = p
        ? p.sourceRanges
        : f.sourceRanges.filter((r) => isAddressCidr(r) && addressOrCidrFamily(r) === sp.family)
      for (const r of kept) {
        seenRanges ??= new Set()
        if (seenRanges.has(r)) continue
        seenRanges.add(r)
        sourceRanges.push(r)
      }
    } else if (f.type === 'External') {
      const p = withPort('External', f)
      if (p) externalIPs.push(p)
      if (p && target !== 'nftables') {
        note(
          'RENDER_EXTERNAL_KIND_GUESSED',
          'info',
          `${f.ip} rendered as an externalIP; the source cannot tell an externalIP from a LoadBalancer IP`,
          `The source (nftables) writes externalIPs and LoadBalancer IPs the same way. ${target} treats them differently (comments${target === 'ipvs' ? ', ipsets' : ''}); ${f.ip} was rendered as an externalIP.`,
          'Read the node together with the cluster objects (--cluster) to know which it is.',
          [f.ip ?? ''],
        )
      }
    } else if (f.type === 'NodePort') {
      if (f.port !== null && !isPort(f.port)) {
        note(
          'RENDER_BAD_PORT',
          'error',
          `NodePort ${f.port} is not a port; left out`,
          'The NodePort is not an integer between 1 and 65535, so it was not rendered.',
          'Check the source state.',
        )
      } else if (f.port === null) {
        note(
          'RENDER_FRONTEND_INCOMPLETE',
          'warning',
          'NodePort frontend without port left out',
          'A NodePort frontend of this service port has no port in the source, so it cannot be rendered.',
          'Read the node together with the cluster objects (--cluster).',
        )
      } else if (nodePort === null) {
        nodePort = f.port
      } else if (nodePort !== f.port) {
        note(
          'RENDER_SEVERAL_NODEPORTS',
          'warning',
          `several NodePorts (${nodePort}, ${f.port}); kube-proxy has one per service port`,
          `The source shows more than one NodePort for this service port; only ${nodePort} was rendered.`,
          'Check the source for leftovers of an older Service definition.',
        )
      }
    }
  }

  const internalLocal = sp.internalTrafficPolicy === 'Local'
  const externalLocal = sp.externalTrafficPolicy === 'Local'
  const externallyAccessible =
    nodePort !== null || externalIPs.length > 0 || loadBalancerIPs.length > 0

  let affinitySeconds: number | null = null
  if (sp.sessionAffinity) {
    affinitySeconds = sp.sessionAffinity.timeoutSeconds ?? DEFAULT_AFFINITY_TIMEOUT_SECONDS
    if (sp.sessionAffinity.timeoutSeconds === null) {
      note(
        'RENDER_DEFAULT_AFFINITY_TIMEOUT',
        'info',
        `session affinity timeout not known; assumed ${DEFAULT_AFFINITY_TIMEOUT_SECONDS} s`,
        `The source shows ClientIP session affinity without its timeout; the API default (${DEFAULT_AFFINITY_TIMEOUT_SECONDS} s) was used.`,
        'Check sessionAffinityConfig.clientIP.timeoutSeconds of the Service.',
      )
    }
  }

  // The ipvs renderer writes the scheduler as it is (`-A -t VIP:PORT -s NAME`): a value that is no
  // scheduler name is left out, as a bad node setting is (badSetting).
  let scheduler = sp.scheduler
  if (scheduler !== null && !isSchedulerName(scheduler)) {
    const shown = JSON.stringify(scheduler)
    note(
      'RENDER_BAD_SETTING',
      'error',
      `IPVS scheduler ${shown} is not a scheduler name; left out`,
      `The source state gives this service port the IPVS scheduler ${shown}, which is not a scheduler name (lowercase letters and digits). It was not written into the ${target} rules; the default scheduler was used.`,
      'Check where this state came from.',
    )
    scheduler = null
  }
  if (scheduler !== null && scheduler !== 'rr' && target !== 'ipvs') {
    note(
      'RENDER_SCHEDULER_NOT_EXPRESSIBLE',
      'warning',
      `IPVS scheduler "${scheduler}" cannot be expressed in ${target}`,
      `${target} mode picks endpoints uniformly at random; the "${scheduler}" scheduler's behaviour (for example source hashing or least connections) is lost.`,
      scheduler === 'sh'
        ? 'Use sessionAffinity: ClientIP for source-IP stickiness.'
        : 'Check that uniform random balancing is acceptable for this service.',
    )
  }

  const allEndpoints: PlannedEndpoint[] = []
  const seenEndpoints = new Set<string>()
  // Shares over the cluster path (internalTrafficPolicy Cluster): an endpoint of unknown state with
  // share 0 is not on it in the source, only on the local path (a serving-terminating fallback
  // there; the readers of rules say so themselves now, a state made elsewhere may not). Taken as
  // ready, it went into the target's cluster cascade: an iptables node whose only local endpoint
  // was terminating under ETP=Local migrated to nftables rules that sent it a third of the
  // cluster's connections.
  const sharesOnClusterPath =
    sp.internalTrafficPolicy !== 'Local' &&
    sp.endpoints.some((ep) => ep.share !== null && ep.share > 0)
  let draining = 0
  let unequalWeights = false
  let unknownLocality = false
  for (const ep of sp.endpoints) {
    if (ep.ip === null) {
      note(
        'RENDER_ENDPOINT_INCOMPLETE',
        'warning',
        'redacted endpoint left out',
        'The input hid the address of an endpoint of this service port (a redaction placeholder), so it cannot be rendered; the others take its share.',
        'Render from an unredacted dump, or add the endpoint by hand.',
        [],
      )
      continue
    }
    if (ep.port === null) {
      note(
        'RENDER_ENDPOINT_INCOMPLETE',
        'warning',
        `endpoint ${ep.ip} without port left out`,
        `The source does not show the port of endpoint ${ep.ip}, so it cannot be rendered.`,
        'Read the node together with the cluster objects (--cluster).',
        [ep.ip],
      )
      continue
    }
    if (addressFamily(ep.ip) !== sp.family || !isPort(ep.port)) {
      note(
        'RENDER_BAD_ADDRESS',
        'error',
        `endpoint ${ep.ip}:${ep.port} is not a valid ${sp.family} address and port; left out`,
        `The endpoint is not a valid ${sp.family} address with a port between 1 and 65535, so it was not rendered.`,
        'Check the source state.',
        [ep.ip],
      )
      continue
    }
    if (isDraining(ep)) {
      draining++
      continue
    }
    if (ep.weight !== null && ep.weight !== 1) unequalWeights = true
    if (ep.local === null && (internalLocal || externalLocal)) unknownLocality = true
    const es = joinHostPort(ep.ip, ep.port)
    if (seenEndpoints.has(es)) continue
    seenEndpoints.add(es)
    const offClusterPath = sharesOnClusterPath && ep.state === null && ep.share === 0
    allEndpoints.push({
      ip: ep.ip,
      port: ep.port,
      local: ep.local === true,
      localKnown: ep.local !== null,
      ...conditionsOfState(offClusterPath ? 'serving-terminating' : ep.state),
      endpointString: es,
    })
  }
  if (allEndpoints.length === 0 && sp.frontends.some((f) => f.action === 'forward')) {
    // The source forwards this port's traffic, so it has endpoints, but they are not in the state
    // (nft -j of an iptables-nft node hides each DNAT in an xt target: fixtures/nft-json/
    // iptables-nft-multipleservices-older). Rendered as kube-proxy renders a port without
    // endpoints, the rules would reject traffic that is served today.
    note(
      'RENDER_ENDPOINTS_UNKNOWN',
      'error',
      'traffic is forwarded today but no endpoint is known; the rendered rules reject it',
      'The source forwards traffic to this service port, but none of its endpoints could be read. The target rules were rendered as kube-proxy renders a service port without endpoints, so they reject the traffic that reaches endpoints today.',
      'Collect the rules in a form that shows the endpoints (iptables-save rather than nft -j on an iptables-nft node), or read the node together with the cluster objects (--cluster).',
    )
  }
  if (draining > 0) {
    note(
      'RENDER_DRAINING_ENDPOINTS_LEFT_OUT',
      'info',
      `${draining} draining endpoint(s) (IPVS weight 0) left out`,
      'IPVS weight 0 means kube-proxy is deleting the real server; it is not a wanted endpoint, so it was not rendered.',
      'None; they disappear once their connections end.',
    )
  }
  if (unequalWeights && target !== 'ipvs') {
    note(
      'RENDER_WEIGHTS_NOT_EXPRESSIBLE',
      'warning',
      `IPVS weights cannot be expressed in ${target}`,
      `Some endpoints have an IPVS weight other than 1; ${target} mode gives every endpoint the same share.`,
      'Check that equal shares are acceptable for this service.',
    )
  }
  if (unknownLocality) {
    note(
      'RENDER_ENDPOINT_LOCALITY_UNKNOWN',
      'warning',
      'endpoint locality unknown under a Local traffic policy; treated as remote',
      'The service uses a Local traffic policy, but the source does not say which endpoints run on this node. They were treated as remote, so no local-policy chain was rendered for them.',
      'Read the node together with the cluster objects (--cluster) and --node.',
    )
  }
  // kube-proxy sorts a service's endpoints by their endpoint string (endpointslicecache.go).
  allEndpoints.sort((a, b) =>
    a.endpointString < b.endpointString ? -1 : a.endpointString > b.endpointString ? 1 : 0,
  )

  let healthCheckNodePort = sp.healthCheckNodePort
  if (healthCheckNodePort !== null && !isPort(healthCheckNodePort)) {
    note(
      'RENDER_BAD_PORT',
      'error',
      `health check NodePort ${healthCheckNodePort} is not a port; left out`,
      'The healthCheckNodePort is not an integer between 1 and 65535, so it was not rendered.',
      'Check the source state.',
    )
    healthCheckNodePort = null
  }

  const use = endpointUse(internalLocal, externalLocal, externallyAccessible)
  const {usesClusterEndpoints, usesLocalEndpoints} = use
  // Topology hints are not in the model and do not apply.
  const cats = categorizeEndpoints(allEndpoints, use, (e) => e.endpointString)
  const cat = {
    clusterEndpoints: cats.clusterEndpoints ?? [],
    localEndpoints: cats.localEndpoints ?? [],
    allLocallyReachable: cats.allReachableEndpoints,
    hasEndpoints: cats.hasAnyEndpoints,
  }
  const noLocal = cat.localEndpoints.length === 0

  return {
    sp,
    display,
    family: sp.family,
    namespace,
    name,
    portName: portName ?? '',
    spn,
    syntheticName,
    protocol,
    clusterIP,
    externalIPs,
    loadBalancerIPs,
    sourceRanges,
    nodePort,
    healthCheckNodePort,
    internalLocal,
    externalLocal,
    externallyAccessible,
    affinitySeconds,
    scheduler,
    allEndpoints,
    ...cat,
    usesClusterEndpoints,
    usesLocalEndpoints,
    usesClusterPolicyChain: cat.clusterEndpoints.length > 0 && usesClusterEndpoints,
    usesLocalPolicyChain: !noLocal && usesLocalEndpoints,
    hasInternalEndpoints: cat.hasEndpoints && !(internalLocal && noLocal),
    hasExternalEndpoints: cat.hasEndpoints && !(externalLocal && noLocal),
    usesExternalChain: cat.hasEndpoints && externallyAccessible,
    internalDropsNoLocal: !cat.hasEndpoints && internalLocal && clusterFe?.action === 'drop',
    externalDropsNoLocal:
      !cat.hasEndpoints &&
      externalLocal &&
      sp.frontends.some((f) => f.type !== 'ClusterIP' && f.action === 'drop'),
    evidence,
  }
}

function isUnsafeName(value: string | null): boolean {
  return value !== null && !SAFE_NAME.test(value)
}

function isPort(n: number): boolean {
  return Number.isInteger(n) && n > 0 && n < 65536
}

function isDraining(ep: Endpoint): boolean {
  return ep.state === 'draining' || ep.weight === 0
}

/** The families present in the state (services of each), IPv4 first. */
export function familiesOf(state: ProxyState): Family[] {
  const has = new Set(state.services.map((s) => s.family))
  return (['IPv4', 'IPv6'] as const).filter((f) => has.has(f))
}
