/**
 * What the three renderers share: the node settings they need (from the options, else the
 * state's node, else kube-proxy's default, with a finding whenever a default or a gap decides),
 * and a "plan" per service port that restates the model as kube-proxy's own inputs
 * (ClusterIP, externalIPs, LB IPs, nodePort, policies, endpoints) and runs kube-proxy's endpoint
 * categorisation (pkg/proxy/topology.go CategorizeEndpoints, docs/kube-proxy-layouts.md §1 "Endpoint
 * categorisation"). Each renderer then writes its own layout from the plans.
 */
import type {
  Endpoint,
  Family,
  LocalDetector,
  ProxyState,
  ServicePort,
  SourceRef,
} from '../model/types.js'
import {displayName} from '../core/state.js'
import {EVIDENCE_REFS_PER_PORT, type Finding} from '../analyze/findings.js'
import type {RenderOptions} from './types.js'
import {
  addressFamily,
  addressOrCidrFamily,
  cidrContains,
  hostAddress,
  isAddressCidr,
  isLoopback,
  joinHostPort,
} from '../core/address.js'
import {DEFAULT_AFFINITY_TIMEOUT_SECONDS, DEFAULT_MASQUERADE_MARK} from '../kube-proxy/settings.js'
import {
  categorizeEndpoints,
  conditionsOfState,
  endpointUse,
  type CategorizableEndpoint,
} from '../kube-proxy/endpoints.js'
import {
  expectedValue,
  isSchedulerName,
  isValidSetting,
  type CheckedSetting,
} from './setting-values.js'
import type {FindingId} from '../catalog/findings.js'

export type RenderTarget = 'iptables' | 'nftables' | 'ipvs'

const DOCS_VIRTUAL_IPS = 'https://kubernetes.io/docs/reference/networking/virtual-ips/'
const DOCS_KUBE_PROXY_CONFIG =
  'https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/'

export function finding(
  id: FindingId,
  severity: Finding['severity'],
  title: string,
  message: string,
  more: Partial<Pick<Finding, 'services' | 'addresses' | 'evidence' | 'action' | 'docs'>> = {},
): Finding {
  return {
    id,
    severity,
    title,
    message,
    services: more.services ?? [],
    addresses: more.addresses ?? [],
    evidence: more.evidence ?? [],
    action: more.action ?? '',
    docs: more.docs ?? null,
  }
}

/** The local-traffic detector for one family (pkg/proxy/util/localdetector.go). */
export interface FamilyDetector {
  kind: LocalDetector
  /** The pod CIDR (cidr) or interface name / prefix without `+`/`*` (interface, interface-prefix). */
  value: string | null
}

export interface NodeSettings {
  detector: Record<Family, FamilyDetector>
  masqueradeMark: string
  masqueradeAll: boolean
  randomFully: boolean
  localhostNodePorts: boolean
  /** [] means every local address (kube-proxy's default). */
  nodePortAddresses: string[]
  nodeIPs: string[]
  conntrackInvalidDrop: boolean
  nfacct: boolean
  serviceCIDRs: string[]
}

/**
 * Resolves the node settings a renderer needs. Order: options (flags), then the state's node,
 * then kube-proxy's default. Every default and every gap becomes a finding, so the operator sees
 * what the rendering assumed.
 */
export function resolveNodeSettings(
  state: ProxyState,
  opts: RenderOptions,
  target: RenderTarget,
  families: Set<Family>,
): {settings: NodeSettings; findings: Finding[]} {
  const node = state.node
  const findings: Finding[] = []
  const assumed = (
    id: FindingId,
    what: string,
    value: string,
    flag: string,
    severity: Finding['severity'] = 'info',
  ) =>
    findings.push(
      finding(
        id,
        severity,
        `${what} not known; assumed ${value}`,
        `The source state does not show ${what}, and no option gave it, so the ${target} rules were rendered with kube-proxy's default (${value}).`,
        {
          action: `Check the node's kube-proxy configuration and pass ${flag} if it differs.`,
          docs: DOCS_KUBE_PROXY_CONFIG,
        },
      ),
    )

  // Values written into the rules as they are: one that is not of its kind is left out (and said
  // so), never written (./setting-values.ts).
  const checked = <T extends string | null | undefined>(
    setting: CheckedSetting,
    value: T,
    from: SettingSource,
  ): T | undefined => {
    if (value === null || value === undefined || isValidSetting(setting, value)) return value
    findings.push(badSetting(setting, value, from, target))
    return undefined
  }
  const checkedList = <T extends string[] | null | undefined>(
    setting: CheckedSetting,
    values: T,
    from: SettingSource,
  ): T => {
    if (values === null || values === undefined || values.every((v) => isValidSetting(setting, v)))
      return values
    return values.filter((v) => checked(setting, v, from) !== undefined) as T
  }
  const optionMark = checked('masqueradeMark', opts.masqueradeMark, 'option')
  const sourceMark = checked('masqueradeMark', node.masqueradeMark, 'source') ?? null
  const masqueradeMark = optionMark ?? sourceMark ?? DEFAULT_MASQUERADE_MARK
  if (optionMark === undefined && sourceMark === null)
    assumed(
      'RENDER_DEFAULT_MASQUERADE_MARK',
      'the masquerade mark',
      DEFAULT_MASQUERADE_MARK,
      '--masquerade-mark',
    )

  const masqueradeAll = opts.masqueradeAll ?? node.masqueradeAll ?? false
  if (opts.masqueradeAll === undefined && node.masqueradeAll === null)
    assumed('RENDER_DEFAULT_MASQUERADE_ALL', 'masqueradeAll', 'false', '--masquerade-all')

  // nftables always writes `masquerade fully-random`; only iptables and ipvs make it optional.
  const randomFully = opts.randomFully ?? node.randomFully ?? true
  if (target !== 'nftables' && opts.randomFully === undefined && node.randomFully === null)
    assumed(
      'RENDER_DEFAULT_RANDOM_FULLY',
      'whether MASQUERADE uses --random-fully',
      'true (every iptables since 1.6.2 supports it)',
      '--random-fully',
    )

  // Only the iptables proxier implements localhost NodePorts (IPv4, route_localnet).
  const localhostNodePorts = opts.localhostNodePorts ?? node.localhostNodePorts ?? true
  if (
    target === 'iptables' &&
    families.has('IPv4') &&
    opts.localhostNodePorts === undefined &&
    node.localhostNodePorts === null
  )
    assumed(
      'RENDER_DEFAULT_LOCALHOST_NODEPORTS',
      'localhostNodePorts',
      'true',
      '--localhost-nodeports',
    )

  const conntrackInvalidDrop = opts.conntrackInvalidDrop ?? node.conntrackInvalidDrop ?? true
  if (
    target === 'iptables' &&
    opts.conntrackInvalidDrop === undefined &&
    node.conntrackInvalidDrop === null
  )
    assumed(
      'RENDER_DEFAULT_CONNTRACK_INVALID_DROP',
      'whether conntrack INVALID packets are dropped (nf_conntrack_tcp_be_liberal=0)',
      'true',
      '--conntrack-invalid-drop',
    )

  // NodePort frontends with an address (IPVS virtual servers on node IPs) show where NodePorts
  // are accepted when nothing else says.
  const nodePortFrontendIPSet = new Set<string>()
  for (const sp of state.services)
    for (const f of sp.frontends)
      if (f.type === 'NodePort' && f.ip !== null) nodePortFrontendIPSet.add(f.ip)
  const nodePortFrontendIPs = [...nodePortFrontendIPSet].sort()
  let nodePortAddresses =
    checkedList('nodePortAddresses', opts.nodePortAddresses, 'option') ??
    checkedList('nodePortAddresses', node.nodePortAddresses, 'source')
  if (nodePortAddresses === null && nodePortFrontendIPs.length > 0) {
    nodePortAddresses = nodePortFrontendIPs
    findings.push(
      finding(
        'RENDER_NODEPORT_ADDRESSES_FROM_FRONTENDS',
        'info',
        `NodePorts rendered on the addresses the source shows them on (${nodePortFrontendIPs.join(', ')})`,
        'The source state does not show nodePortAddresses, but its NodePort frontends listen on specific node addresses; the rendered NodePorts accept traffic on those addresses only.',
        {
          addresses: nodePortFrontendIPs,
          action: 'Pass --nodeport-addresses if kube-proxy is configured otherwise.',
          docs: DOCS_KUBE_PROXY_CONFIG,
        },
      ),
    )
  } else if (nodePortAddresses === null) {
    nodePortAddresses = []
    assumed(
      'RENDER_DEFAULT_NODEPORT_ADDRESSES',
      'nodePortAddresses',
      'every local address',
      '--nodeport-addresses',
    )
  }

  // A nodePortAddresses entry that is a single host is a node address; use those when the node's
  // addresses are not given (an IPVS state shows its NodePort virtual servers' addresses there).
  const nodeIPs =
    checkedList('nodeIPs', opts.nodeIPs, 'option') ??
    nodePortAddresses.map(hostAddress).filter((ip): ip is string => ip !== null && !isLoopback(ip))
  const serviceCIDRs = checkedList('serviceCIDRs', opts.serviceCIDRs, 'option') ?? []
  if (target === 'nftables' && serviceCIDRs.length === 0) {
    findings.push(
      finding(
        'RENDER_MISSING_SERVICE_CIDRS',
        'info',
        'service CIDRs not known; the "Drop traffic to unallocated ClusterIPs" rule is left out',
        'kube-proxy in nftables mode drops traffic to addresses of the service CIDRs that no Service uses. The source state does not show the service CIDRs, so that rule is not rendered.',
        {
          action: "Pass --service-cidr with the cluster's service CIDRs to render it.",
          docs: DOCS_KUBE_PROXY_CONFIG,
        },
      ),
    )
  }

  const podCIDRs =
    checkedList('podCIDRs', opts.podCIDRs, 'option') ??
    checkedList('podCIDRs', node.podCIDRs, 'source')
  let detectorKind: LocalDetector | null =
    opts.localDetector ?? node.localDetector ?? (podCIDRs.length > 0 ? 'cidr' : null)
  const localInterface =
    checked('localInterface', opts.localInterface, 'option') ??
    checked('localInterface', node.localInterface, 'source') ??
    null
  if (detectorKind === null) {
    findings.push(
      finding(
        'RENDER_MISSING_LOCAL_DETECTOR',
        'warning',
        'pod CIDR / local-traffic detector not known; masquerade rules for off-cluster traffic left out',
        'kube-proxy tells pod traffic from other traffic with a local-traffic detector (pod CIDR or interface). Neither the source state nor the options say which, so the rendered rules behave like kube-proxy without a detector: traffic from outside the cluster to a ClusterIP is not masqueraded and ETP=Local services lose the pod short-circuit.',
        {
          action: 'Pass --pod-cidr (or --local-detector interface --local-interface NAME).',
          docs: DOCS_VIRTUAL_IPS,
        },
      ),
    )
    detectorKind = 'none'
  }
  const detector: Record<Family, FamilyDetector> = {
    IPv4: {kind: 'none', value: null},
    IPv6: {kind: 'none', value: null},
  }
  for (const family of ['IPv4', 'IPv6'] as const) {
    if (detectorKind === 'cidr') {
      const cidrs = podCIDRs.filter((c) => addressOrCidrFamily(c) === family)
      if (cidrs.length > 0) {
        detector[family] = {kind: 'cidr', value: cidrs[0]!}
        if (cidrs.length > 1) {
          findings.push(
            finding(
              'RENDER_SEVERAL_POD_CIDRS',
              'warning',
              `several ${family} pod CIDRs; kube-proxy's detector uses one`,
              `kube-proxy's cidr detector takes one CIDR per family; ${cidrs[0]} was used and ${cidrs.slice(1).join(', ')} ignored.`,
              {
                addresses: cidrs,
                action: 'Pass the cluster CIDR that kube-proxy is configured with as --pod-cidr.',
                docs: DOCS_KUBE_PROXY_CONFIG,
              },
            ),
          )
        }
      } else if (families.has(family)) {
        findings.push(
          finding(
            'RENDER_MISSING_POD_CIDR',
            'warning',
            `no ${family} pod CIDR; ${family} masquerade rules for off-cluster traffic left out`,
            `The local-traffic detector is "cidr" but no ${family} pod CIDR is known, so the ${family} rules were rendered without the pod-CIDR matches (as kube-proxy does without a detector).`,
            {
              action: `Pass the ${family} cluster CIDR with --pod-cidr.`,
              docs: DOCS_VIRTUAL_IPS,
            },
          ),
        )
      }
    } else if (detectorKind === 'interface' || detectorKind === 'interface-prefix') {
      if (localInterface) detector[family] = {kind: detectorKind, value: localInterface}
      else if (families.has(family) && family === 'IPv4') {
        findings.push(
          finding(
            'RENDER_MISSING_LOCAL_INTERFACE',
            'warning',
            `the ${detectorKind} detector needs an interface name, which is not known`,
            'The local-traffic detector is by interface, but the interface (or prefix) is not known, so the rules were rendered without the detector matches.',
            {
              action: 'Pass --local-interface.',
              docs: DOCS_VIRTUAL_IPS,
            },
          ),
        )
      }
    }
  }

  return {
    settings: {
      detector,
      masqueradeMark,
      masqueradeAll,
      randomFully,
      localhostNodePorts,
      nodePortAddresses,
      nodeIPs,
      conntrackInvalidDrop,
      nfacct: opts.nfacct ?? false,
      serviceCIDRs,
    },
    findings,
  }
}

/** Where a node setting came from: a renderer option (a `kp migrate` flag) or the source state. */
export type SettingSource = 'option' | 'source'

const SETTING_LABELS: Record<CheckedSetting, string> = {
  podCIDRs: 'pod CIDR',
  localInterface: 'local interface',
  masqueradeMark: 'masquerade mark',
  nodePortAddresses: 'nodePortAddresses entry',
  nodeIPs: 'node IP',
  serviceCIDRs: 'service CIDR',
  scheduler: 'IPVS scheduler',
}

/** The finding for a setting value that is not of its kind, and was left out of the rules. */
export function badSetting(
  setting: CheckedSetting,
  value: string,
  from: SettingSource,
  target: RenderTarget,
): Finding {
  const label = SETTING_LABELS[setting]
  const shown = JSON.stringify(value)
  return finding(
    'RENDER_BAD_SETTING',
    'error',
    `${label} ${shown} is not ${expectedValue(setting)}; left out`,
    `The ${from === 'option' ? 'options give' : 'source state gives'} the ${label} ${shown}, which is not ${expectedValue(setting)}. It was not written into the ${target} rules; they were rendered as if it were not known.`,
    {
      addresses:
        setting === 'localInterface' || setting === 'masqueradeMark' || setting === 'scheduler'
          ? []
          : [value],
      action:
        from === 'option'
          ? 'Correct the value given.'
          : 'Check where this state came from; pass the right value as a flag.',
      docs: DOCS_KUBE_PROXY_CONFIG,
    },
  )
}

/**
 * Which addresses of one family accept NodePorts (kube-proxy's NodePortAddresses): entries of the
 * other family are ignored; no entry of this family, or a zero CIDR, means "every local address"
 * (matchAll). Otherwise single hosts are taken as they are, and CIDR entries (and the `primary`
 * keyword) select the known node IPs inside them (GetNodeIPs). What cannot be resolved becomes a
 * finding.
 */
export function nodePortIPs(
  settings: NodeSettings,
  family: Family,
  target: RenderTarget,
): {matchAll: boolean; ips: string[]; findings: Finding[]} {
  const ips: string[] = []
  const findings: Finding[] = []
  const seen = new Set<string>()
  const add = (ip: string) => {
    if (!seen.has(ip)) {
      seen.add(ip)
      ips.push(ip)
    }
  }
  const familyNodeIPs = settings.nodeIPs.filter((ip) => addressOrCidrFamily(ip) === family)
  const entries = settings.nodePortAddresses.filter(
    (e) => e === 'primary' || addressOrCidrFamily(e) === family,
  )
  if (entries.length === 0 || entries.some((e) => e === '0.0.0.0/0' || e === '::/0'))
    return {matchAll: true, ips, findings}
  for (const entry of entries) {
    const host = entry === 'primary' ? null : hostAddress(entry)
    if (host !== null) {
      add(host)
      continue
    }
    const inside =
      entry === 'primary'
        ? familyNodeIPs.slice(0, 1)
        : familyNodeIPs.filter((ip) => cidrContains(entry, ip))
    if (inside.length === 0) {
      findings.push(
        finding(
          'RENDER_MISSING_NODE_IPS',
          'warning',
          `nodePortAddresses ${entry} selects node IPs that are not known`,
          `kube-proxy accepts NodePorts on the node addresses selected by ${entry}; the node's addresses are not known, so no ${target} NodePort address was rendered for it.`,
          {
            addresses: [entry],
            action: 'Pass the node addresses with --node-ip.',
            docs: DOCS_KUBE_PROXY_CONFIG,
          },
        ),
      )
    }
    for (const ip of inside) add(ip)
  }
  return {matchAll: false, ips, findings}
}

/** One endpoint as kube-proxy sees it. */
export interface PlannedEndpoint extends CategorizableEndpoint {
  ip: string
  port: number
  local: boolean
  /** Go net.JoinHostPort: `ip:port`, `[ipv6]:port`. */
  endpointString: string
}

export interface PlannedFrontend {
  ip: string
  port: number
  sourceRanges: string[]
}

export interface ServicePlan {
  sp: ServicePort
  /** displayName(sp), for findings. */
  display: string
  family: Family
  namespace: string
  name: string
  portName: string
  /** ServicePortName.String(): `ns/name:port`, or `ns/name` for an unnamed port. */
  spn: string
  /** true when the names were made up because the source does not show them. */
  syntheticName: boolean
  /** `tcp`, `udp`, `sctp`. */
  protocol: string
  clusterIP: PlannedFrontend | null
  externalIPs: PlannedFrontend[]
  loadBalancerIPs: PlannedFrontend[]
  /** The loadBalancerSourceRanges (the union over LB frontends). */
  sourceRanges: string[]
  nodePort: number | null
  healthCheckNodePort: number | null
  internalLocal: boolean
  externalLocal: boolean
  externallyAccessible: boolean
  affinitySeconds: number | null
  /** The source's IPVS scheduler when it is a scheduler name (setting-values.ts isSchedulerName); null when unknown or left out. */
  scheduler: string | null
  /** Endpoints in kube-proxy's order (sorted by endpoint string). */
  allEndpoints: PlannedEndpoint[]
  clusterEndpoints: PlannedEndpoint[]
  localEndpoints: PlannedEndpoint[]
  allLocallyReachable: PlannedEndpoint[]
  hasEndpoints: boolean
  usesClusterEndpoints: boolean
  usesLocalEndpoints: boolean
  /** The decisions syncProxyRules makes per service port, shared by both rule-writing modes. */
  usesClusterPolicyChain: boolean
  usesLocalPolicyChain: boolean
  /** false: ClusterIP traffic is rejected (no endpoints) or dropped (ITP=Local, none local). */
  hasInternalEndpoints: boolean
  /** false: external traffic is rejected (no endpoints) or dropped (ETP=Local, none local). */
  hasExternalEndpoints: boolean
  /** The external chain exists when there are endpoints anywhere and the port is reachable from outside. */
  usesExternalChain: boolean
  /**
   * No endpoint is known, yet the source drops (does not reject) this port's ClusterIP /
   * external traffic under a Local policy: what kube-proxy does when the service has endpoints,
   * none of them on this node, and all it writes then (fixtures/iptables/realsave-handmade-ipv6,
   * ns10/svc10). The target drops that traffic too instead of rejecting it as "no endpoints".
   */
  internalDropsNoLocal: boolean
  externalDropsNoLocal: boolean
  evidence: SourceRef[]
}

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

/** The same node-wide finding can come from each family; keep one. */
export function dedupeFindings(findings: Finding[]): Finding[] {
  const seen = new Set<string>()
  return findings.filter((f) => {
    const key = `${f.id}\u0000${f.title}\u0000${f.services.join(',')}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * kube-proxy adds its jump rules to the built-in chains once with `iptables -I` (EnsureRule), not
 * in its restore input; the rendered files therefore do not contain them either.
 */
export function jumpRulesFinding(target: RenderTarget, jumps: string[]): Finding {
  return finding(
    'RENDER_JUMP_RULES_NOT_INCLUDED',
    'info',
    'the jump rules in the built-in chains are not part of the rendered restore input',
    `kube-proxy inserts its jump rules into the built-in chains once (iptables -I) rather than through its restore input, and the ${target} files follow it. Until kube-proxy runs (or they are added by hand), the rendered chains are not reached: ${jumps.join('; ')}.`,
    {
      action:
        'Let kube-proxy start in the new mode (it adds them), or insert them by hand with iptables -I when testing the files alone.',
    },
  )
}
