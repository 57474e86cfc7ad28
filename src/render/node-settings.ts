/**
 * The node settings a renderer needs (from the options, else the state's node, else kube-proxy's
 * default, with a finding whenever a default or a gap decides), and the NodePort addresses per family.
 */
import type {Family, LocalDetector, ProxyState} from '../model/types.js'
import type {Finding} from '../analyze/findings.js'
import type {FindingId} from '../catalog/findings.js'
import type {RenderOptions} from './types.js'
import {addressOrCidrFamily, cidrContains, hostAddress, isLoopback} from '../core/address.js'
import {
  DEFAULT_MASQUERADE_MARK,
  isNodePortAddressKeyword,
  NFTABLES_DEFAULT_NODEPORT_ADDRESSES,
} from '../kube-proxy/settings.js'
import {expectedValue, isValidSetting, type CheckedSetting} from './setting-values.js'
import {DOCS_KUBE_PROXY_CONFIG, DOCS_VIRTUAL_IPS, finding, type RenderTarget} from './findings.js'

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
  } else if (nodePortAddresses === null && target === 'nftables') {
    // nftables mode's default is `primary`: written when the node's IPs say which that is; else
    // every local address, saying that kube-proxy would serve fewer.
    const nodeIPsGiven = (checkedList('nodeIPs', opts.nodeIPs, 'option') ?? []).length > 0
    nodePortAddresses = nodeIPsGiven ? [...NFTABLES_DEFAULT_NODEPORT_ADDRESSES] : []
    if (nodeIPsGiven)
      assumed(
        'RENDER_DEFAULT_NODEPORT_ADDRESSES',
        'nodePortAddresses',
        "primary (kube-proxy's nftables default: the first --node-ip of each family)",
        '--nodeport-addresses',
      )
    else
      findings.push(
        finding(
          'RENDER_NODEPORT_ADDRESSES_WIDER_THAN_DEFAULT',
          'warning',
          'nodePortAddresses and the node IPs not known; NodePorts rendered on every local address',
          "kube-proxy's nftables default is `primary`, the node's primary IP of each family, but the node's IPs are not known, so the rules accept NodePorts on every local address: more than a default-configured kube-proxy serves.",
          {
            action:
              'Pass --node-ip (the primary IP first) to render the default, or --nodeport-addresses.',
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
    (e) => isNodePortAddressKeyword(e) || addressOrCidrFamily(e) === family,
  )
  if (entries.length === 0 || entries.some((e) => e === 'all' || e === '0.0.0.0/0' || e === '::/0'))
    return {matchAll: true, ips, findings}
  for (const entry of entries) {
    if (entry === 'localhost') {
      add(family === 'IPv4' ? '127.0.0.1' : '::1')
      continue
    }
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
