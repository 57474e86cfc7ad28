/**
 * ProxyState -> an `nft -f` script for kube-proxy's nftables mode: `table ip kube-proxy` and/or
 * `table ip6 kube-proxy`, in the knftables transaction syntax kube-proxy itself sends
 * (`add chain ip kube-proxy ...`, `add rule ...`, `add element ...`).
 *
 * Each table is first created and deleted (`add table` + `delete table`, so the script works
 * whether or not the table exists) and then written in full, so the script replaces whatever
 * kube-proxy table is there and can be re-run.
 *
 * Layout: the current one by default (base chains `filter-prerouting-pre-dnat` /
 * `filter-output-pre-dnat` and the masquerade rule without `P dport PORT`), as in kube-proxy's
 * tests at 81810de (fixtures/render/upstream/nftables-*.dump; docs/kube-proxy-layouts.md §3.2-3.4); `older` on
 * request (see NftablesLayout). Per-service objects follow
 * pkg/proxy/nftables/proxier.go syncProxyRules; chain names use the hashes of §3.6.
 */
import {pushAll} from '../../core/arrays.js'
import type {Family, ProxyState} from '../../model/types.js'
import {
  CLUSTER_IPS_CHECK_CHAIN,
  CLUSTER_IPS_SET,
  endpointBaseName,
  FIREWALL_CHECK_CHAIN,
  FIREWALL_IPS_MAP,
  hashAndTruncate,
  MARK_FOR_MASQUERADE_CHAIN,
  MASQUERADING_CHAIN,
  NO_ENDPOINT_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  NODEPORT_ENDPOINTS_CHECK_CHAIN,
  NODEPORT_IPS_SET,
  HAIRPIN_CONNECTIONS_SET,
  NFT_COMMENT_MAX_BYTES,
  perServiceName,
  REJECT_CHAIN,
  SERVICE_ENDPOINTS_CHECK_CHAIN,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  servicePortBaseName,
  SERVICES_CHAIN,
} from '../../kube-proxy/nftables-names.js'
import {
  cutToBytes,
  type NftRenderChoices,
  nftRenderChoices,
} from '../../kube-proxy/nftables-layouts.js'
import {NEWEST_KUBE_PROXY_VERSION} from '../../kube-proxy/versions.js'
import {sortFindings} from '../../analyze/findings.js'
import type {Finding} from '../../analyze/findings.js'
import {addressOrCidrFamily, cidrContains, isLoopback} from '../../core/address.js'
import {
  dedupeFindings,
  finding,
  familiesOf,
  nodePortIPs,
  planService,
  resolveNodeSettings,
} from '../common.js'
import type {NodeSettings, PlannedEndpoint, ServicePlan} from '../common.js'
import {TidyTextSink} from '../text.js'
import type {RenderOptions, RenderResult, TextSink} from '../types.js'

interface FamilyWords {
  /** `ip` / `ip6`, the table family and the address match keyword. */
  ipX: string
  /** `ipv4_addr` / `ipv6_addr`. */
  addrType: string
  /** The localhost guard of the "every address" NodePort rules. */
  noLocalhost: string
}

function wordsFor(family: Family): FamilyWords {
  return family === 'IPv4'
    ? {ipX: 'ip', addrType: 'ipv4_addr', noLocalhost: 'ip daddr != 127.0.0.0/8'}
    : {ipX: 'ip6', addrType: 'ipv6_addr', noLocalhost: 'ip6 daddr != ::1'}
}

/**
 * The two layouts of kube-proxy's base chains (docs/kube-proxy-layouts.md §3.2). `current`: the tests at 81810de
 * (fixtures/render/upstream/nftables-*.dump). `older`: proxier.go @b0f823e, whose filter chains
 * all run at dstnat-10 plus a `filter-output-post-dnat` at dstnat+10, and whose ClusterIP
 * masquerade rule also matches `P dport PORT` (§3.4). Priorities are written as numbers
 * (dstnat = -100, srcnat = 100), as the tests' dumps do.
 */
export type NftablesLayout = 'current' | 'older'

const BASE_CHAINS: Record<NftablesLayout, [string, string][]> = {
  current: [
    ['filter-prerouting-pre-dnat', 'type filter hook prerouting priority -110'],
    ['filter-output-pre-dnat', 'type filter hook output priority -110'],
    ['filter-forward', 'type filter hook forward priority 0'],
    ['filter-input', 'type filter hook input priority 0'],
    ['filter-output', 'type filter hook output priority 0'],
  ],
  older: [
    ['filter-prerouting', 'type filter hook prerouting priority -110'],
    ['filter-input', 'type filter hook input priority -110'],
    ['filter-forward', 'type filter hook forward priority -110'],
    ['filter-output', 'type filter hook output priority -110'],
    ['filter-output-post-dnat', 'type filter hook output priority -90'],
  ],
}

/** `ct state new` jumps from the filter base chains, in kube-proxy's order within each chain. */
const FILTER_JUMPS: Record<NftablesLayout, [string, string][]> = {
  current: [
    ['filter-prerouting-pre-dnat', FIREWALL_CHECK_CHAIN],
    ['filter-forward', SERVICE_ENDPOINTS_CHECK_CHAIN],
    ['filter-forward', CLUSTER_IPS_CHECK_CHAIN],
    ['filter-input', NODEPORT_ENDPOINTS_CHECK_CHAIN],
    ['filter-input', SERVICE_ENDPOINTS_CHECK_CHAIN],
    ['filter-output', SERVICE_ENDPOINTS_CHECK_CHAIN],
    ['filter-output-pre-dnat', FIREWALL_CHECK_CHAIN],
    ['filter-output', CLUSTER_IPS_CHECK_CHAIN],
  ],
  older: [
    ['filter-input', NODEPORT_ENDPOINTS_CHECK_CHAIN],
    ['filter-input', SERVICE_ENDPOINTS_CHECK_CHAIN],
    ['filter-forward', SERVICE_ENDPOINTS_CHECK_CHAIN],
    ['filter-output', SERVICE_ENDPOINTS_CHECK_CHAIN],
    ['filter-prerouting', FIREWALL_CHECK_CHAIN],
    ['filter-output', FIREWALL_CHECK_CHAIN],
    ['filter-forward', CLUSTER_IPS_CHECK_CHAIN],
    ['filter-output-post-dnat', CLUSTER_IPS_CHECK_CHAIN],
  ],
}

/** Pass a table's text on to the sink in pieces of about this many characters. */
const PIECE_CHARS = 1 << 16

/**
 * Lines of one table, written with the `add OBJECT FAMILY kube-proxy` prefix. The text is passed
 * on in pieces (flush) rather than kept: a 10,000-service table is ~45 MB.
 */
class Script {
  private text = ''
  private readonly addRule: string
  private readonly addChain: string
  private readonly addElement: string
  constructor(
    private readonly prefix: string,
    private readonly out: TidyTextSink,
  ) {
    this.addRule = `add rule ${prefix} `
    this.addChain = `add chain ${prefix} `
    this.addElement = `add element ${prefix} `
  }
  line(text: string): void {
    this.text += text + '\n'
  }
  blank(): void {
    this.text += '\n'
  }
  comment(text: string): void {
    this.text += '# ' + text + '\n'
  }
  add(kind: 'table' | 'chain' | 'rule' | 'set' | 'map' | 'element', rest = ''): void {
    this.text += rest ? `add ${kind} ${this.prefix} ${rest}\n` : `add ${kind} ${this.prefix}\n`
  }
  chain(name: string, spec = ''): void {
    this.text += spec ? this.addChain + name + ' { ' + spec + ' ; }\n' : this.addChain + name + '\n'
  }
  rule(chain: string, rule: string): void {
    this.text += this.addRule + chain + ' ' + rule + '\n'
  }
  element(container: string, body: string): void {
    this.text += this.addElement + container + ' { ' + body + ' }\n'
  }
  /** Passes the text so far on once it is long enough (always with `all`). */
  flush(all = false): void {
    if (this.text.length >= PIECE_CHARS || (all && this.text.length > 0)) {
      this.out.write(this.text)
      this.text = ''
    }
  }
}

/**
 * The detector's nftables match (pkg/proxy/util/localdetector.go, current version). Older
 * copies (docs/kube-proxy-layouts.md §1, localdetector.go @3db434d6be34) wrote `iif`, which nft rejects for a prefix
 * (`iif veth*`: "Interface does not exist"); the current `iifname` is written.
 */
function detector(
  settings: NodeSettings,
  family: Family,
  ipX: string,
  local: boolean,
): string | null {
  const d = settings.detector[family]
  if (d.kind === 'none' || d.value === null) return null
  const op = local ? '' : '!= '
  switch (d.kind) {
    case 'cidr':
      return `${ipX} saddr ${op}${d.value}`
    case 'interface':
      return `iifname ${op}${d.value}`
    case 'interface-prefix':
      return `iifname ${op}${d.value}*`
  }
}

function writeBase(
  s: Script,
  w: FamilyWords,
  settings: NodeSettings,
  family: Family,
  layout: NftablesLayout,
  choices: NftRenderChoices,
  findings: Finding[],
): void {
  const mark = settings.masqueradeMark
  s.add('table', '{ comment "rules for kube-proxy" ; }')
  s.blank()
  s.add('set', `${CLUSTER_IPS_SET} { type ${w.addrType} ; comment "Active ClusterIPs" ; }`)
  if (choices.hairpinSet)
    s.add(
      'set',
      `${HAIRPIN_CONNECTIONS_SET} { type ${w.addrType} . ${w.addrType} . inet_proto . inet_service ; comment "service hairpin connections" ; }`,
    )
  const np = nodePortIPs(settings, family, 'nftables')
  findings.push(...np.findings)
  if (!np.matchAll)
    s.add(
      'set',
      `nodeport-ips { type ${w.addrType} ; comment "IPs that accept NodePort traffic" ; }`,
    )
  s.blank()
  s.add(
    'map',
    `${FIREWALL_IPS_MAP} { type ${w.addrType} . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`,
  )
  s.add(
    'map',
    'no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }',
  )
  s.add(
    'map',
    `no-endpoint-services { type ${w.addrType} . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`,
  )
  s.add(
    'map',
    `${SERVICE_IPS_MAP} { type ${w.addrType} . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`,
  )
  s.add(
    'map',
    `${SERVICE_NODEPORTS_MAP} { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`,
  )
  s.blank()
  s.chain(CLUSTER_IPS_CHECK_CHAIN)
  for (const [name, spec] of BASE_CHAINS[layout]) s.chain(name, spec)
  s.chain(FIREWALL_CHECK_CHAIN)
  if (!choices.inlineMasquerade) s.chain(MARK_FOR_MASQUERADE_CHAIN)
  s.chain(MASQUERADING_CHAIN)
  s.chain('nat-output', 'type nat hook output priority -100')
  s.chain('nat-postrouting', 'type nat hook postrouting priority 100')
  s.chain('nat-prerouting', 'type nat hook prerouting priority -100')
  s.chain(NODEPORT_ENDPOINTS_CHECK_CHAIN)
  s.add(
    'chain',
    'reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }',
  )
  s.chain(SERVICES_CHAIN)
  s.chain(SERVICE_ENDPOINTS_CHECK_CHAIN)
  s.blank()
  s.rule(
    CLUSTER_IPS_CHECK_CHAIN,
    `${w.ipX} daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"`,
  )
  const serviceCIDRs = settings.serviceCIDRs.filter((c) => addressOrCidrFamily(c) === family)
  if (serviceCIDRs.length > 0)
    s.rule(
      CLUSTER_IPS_CHECK_CHAIN,
      `${w.ipX} daddr { ${serviceCIDRs.join(' , ')} } drop comment "Drop traffic to unallocated ClusterIPs"`,
    )
  for (const [chain, target] of FILTER_JUMPS[layout]) s.rule(chain, `ct state new jump ${target}`)
  s.rule(FIREWALL_CHECK_CHAIN, `${w.ipX} daddr . meta l4proto . th dport vmap @${FIREWALL_IPS_MAP}`)
  if (choices.inlineMasquerade) {
    s.rule(
      MASQUERADING_CHAIN,
      `mark and ${mark} != 0 mark set mark xor ${mark} masquerade fully-random`,
    )
    s.rule(
      MASQUERADING_CHAIN,
      `ct status dnat ${w.ipX} saddr . ${w.ipX} daddr . meta l4proto . th dport @${HAIRPIN_CONNECTIONS_SET} masquerade fully-random`,
    )
  } else {
    s.rule(MARK_FOR_MASQUERADE_CHAIN, `mark set mark or ${mark}`)
    s.rule(MASQUERADING_CHAIN, `mark and ${mark} == 0 return`)
    s.rule(MASQUERADING_CHAIN, `mark set mark xor ${mark}`)
    s.rule(MASQUERADING_CHAIN, 'masquerade fully-random')
  }
  s.rule('nat-output', 'jump services')
  s.rule('nat-postrouting', 'jump masquerading')
  s.rule('nat-prerouting', 'jump services')
  if (np.matchAll)
    s.rule(
      NODEPORT_ENDPOINTS_CHECK_CHAIN,
      `${w.noLocalhost} meta l4proto . th dport vmap @no-endpoint-nodeports`,
    )
  else
    s.rule(
      NODEPORT_ENDPOINTS_CHECK_CHAIN,
      `${w.ipX} daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports`,
    )
  s.rule(REJECT_CHAIN, 'reject')
  if (choices.inlineMasquerade) {
    // 1.36+: one rule marks ClusterIP traffic from outside the pod network, for every service.
    const notLocal = detector(settings, family, w.ipX, false)
    if (settings.masqueradeAll)
      s.rule(
        SERVICES_CHAIN,
        `${w.ipX} daddr @${CLUSTER_IPS_SET} mark set mark or ${mark} comment "masquerade all clusterIP traffic"`,
      )
    else if (notLocal)
      s.rule(
        SERVICES_CHAIN,
        `${w.ipX} daddr @${CLUSTER_IPS_SET} ${notLocal} mark set mark or ${mark} comment "masquerade clusterIP traffic from outside cluster"`,
      )
  }
  s.rule(SERVICES_CHAIN, `${w.ipX} daddr . meta l4proto . th dport vmap @${SERVICE_IPS_MAP}`)
  if (np.matchAll)
    s.rule(
      SERVICES_CHAIN,
      `fib daddr type local ${w.noLocalhost} meta l4proto . th dport vmap @service-nodeports`,
    )
  else
    s.rule(
      SERVICES_CHAIN,
      `${w.ipX} daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`,
    )
  s.blank()
  if (!np.matchAll) {
    for (const ip of np.ips) {
      if (isLoopback(ip)) {
        findings.push(
          finding(
            'RENDER_LOCALHOST_NODEPORTS_UNSUPPORTED',
            'warning',
            `nodePortAddresses includes ${ip}; nftables mode has no localhost NodePorts`,
            'kube-proxy in nftables mode never accepts NodePort traffic on loopback addresses (it logs an error and skips them); clients that use localhost:NODEPORT stop working.',
            {
              addresses: [ip],
              action: 'Make clients use a node address instead of localhost.',
              docs: 'https://kubernetes.io/docs/reference/networking/virtual-ips/',
            },
          ),
        )
        continue
      }
      s.element(NODEPORT_IPS_SET, ip)
    }
  }
  s.rule(
    SERVICE_ENDPOINTS_CHECK_CHAIN,
    `${w.ipX} daddr . meta l4proto . th dport vmap @no-endpoint-services`,
  )
}

function writeService(
  s: Script,
  w: FamilyWords,
  settings: NodeSettings,
  family: Family,
  layout: NftablesLayout,
  choices: NftRenderChoices,
  plan: ServicePlan,
  findings: Finding[],
): void {
  const base = servicePortBaseName(plan.namespace, plan.name, plan.protocol, plan.portName)
  const chainBase = hashAndTruncate(base)
  const clusterPolicyChain = perServiceName('service', chainBase)
  const localPolicyChain = perServiceName('local', chainBase)
  const externalChain = perServiceName('external', chainBase)
  const fwChain = perServiceName('firewall', chainBase)
  // Every locally reachable endpoint has a chain (and the cluster and local endpoints are among
  // them); its hashed name is used up to five times, so it is computed once.
  const epBases = new Map<PlannedEndpoint, string>()
  for (const ep of plan.allLocallyReachable)
    epBases.set(ep, hashAndTruncate(endpointBaseName(base, ep.ip, ep.port)))
  const epBase = (ep: PlannedEndpoint): string =>
    epBases.get(ep) ?? hashAndTruncate(endpointBaseName(base, ep.ip, ep.port))
  const {
    hasEndpoints,
    clusterEndpoints,
    localEndpoints,
    usesClusterPolicyChain,
    usesLocalPolicyChain,
    hasInternalEndpoints,
    hasExternalEndpoints,
    usesExternalChain,
  } = plan
  const internalChain = plan.internalLocal ? localPolicyChain : clusterPolicyChain
  const externalPolicyChain = plan.externalLocal ? localPolicyChain : clusterPolicyChain
  // Unlike iptables, the firewall chain does not depend on endpoints (docs/kube-proxy-layouts.md §3.4).
  const usesFWChain = plan.loadBalancerIPs.length > 0 && plan.sourceRanges.length > 0
  const internalVerdict = !hasEndpoints && !plan.internalDropsNoLocal ? 'goto reject-chain' : 'drop'
  const externalVerdict = !hasEndpoints && !plan.externalDropsNoLocal ? 'goto reject-chain' : 'drop'
  const p = plan.protocol
  // Every release is written with the comment cut, so the file always loads; kube-proxy before
  // 1.37 failed its syncs instead (the migrate finding MIGRATE_NFT_LONG_NAME says so).
  const comment = `comment "${cutToBytes(plan.spn, NFT_COMMENT_MAX_BYTES)}"`
  const mark = settings.masqueradeMark
  // 1.36+: endpoint chains only carry ClientIP affinity; otherwise the service chain DNATs.
  const endpointChains = !choices.inlineDnat || plan.affinitySeconds !== null

  s.comment(plan.spn)
  // Chains first, in kube-proxy's order (endpoint, service, local, external, firewall): `nft -f`
  // needs a chain to exist before a rule or verdict map jumps to it.
  if (endpointChains)
    for (const ep of plan.allLocallyReachable) s.chain(perServiceName('endpoint', epBase(ep)))
  if (usesClusterPolicyChain) s.chain(clusterPolicyChain)
  if (usesLocalPolicyChain) s.chain(localPolicyChain)
  if (usesExternalChain) s.chain(externalChain)
  if (usesFWChain) s.chain(fwChain)
  if (plan.affinitySeconds !== null) {
    for (const ep of plan.allLocallyReachable) {
      s.add(
        'set',
        `${perServiceName('affinity', epBase(ep))} { type ${w.addrType} ; flags dynamic,timeout ; timeout ${plan.affinitySeconds}s ; }`,
      )
    }
  }

  // Service chains: masquerade, affinity, endpoint dispatch.
  const writeDispatch = (chain: string, endpoints: PlannedEndpoint[]) => {
    if (plan.affinitySeconds !== null) {
      for (const ep of endpoints)
        s.rule(chain, `${w.ipX} saddr @affinity-${epBase(ep)} goto endpoint-${epBase(ep)}`)
    }
    if (!endpointChains) {
      if (endpoints.length === 1 && choices.singleEndpointDirect) {
        s.rule(chain, `meta l4proto ${p} dnat to ${endpoints[0]!.endpointString}`)
        return
      }
      let map = ''
      for (let i = 0; i < endpoints.length; i++)
        map += (i === 0 ? '' : ' , ') + i + ' : ' + endpoints[i]!.ip + ' . ' + endpoints[i]!.port
      s.rule(
        chain,
        `meta l4proto ${p} dnat ${w.ipX} to numgen random mod ${endpoints.length} map { ${map} }`,
      )
      return
    }
    let vmap = ''
    for (let i = 0; i < endpoints.length; i++)
      vmap += (i === 0 ? '' : ' , ') + i + ' : goto endpoint-' + epBase(endpoints[i]!)
    s.rule(chain, `numgen random mod ${endpoints.length} vmap { ${vmap} }`)
  }
  const cip = plan.clusterIP
  const masqueradeRule = (chain: string) => {
    if (choices.inlineMasquerade) return
    if (!hasInternalEndpoints || !cip || chain !== internalChain) return
    const notLocal = detector(settings, family, w.ipX, false)
    const dest =
      layout === 'older'
        ? `${w.ipX} daddr ${cip.ip} ${p} dport ${cip.port}`
        : `${w.ipX} daddr ${cip.ip}`
    if (settings.masqueradeAll) s.rule(chain, `${dest} jump mark-for-masquerade`)
    else if (notLocal) s.rule(chain, `${dest} ${notLocal} jump mark-for-masquerade`)
  }
  if (usesClusterPolicyChain) {
    masqueradeRule(clusterPolicyChain)
    writeDispatch(clusterPolicyChain, clusterEndpoints)
  }
  if (usesLocalPolicyChain) {
    masqueradeRule(localPolicyChain)
    writeDispatch(localPolicyChain, localEndpoints)
  }

  if (usesExternalChain) {
    if (!plan.externalLocal) {
      s.rule(
        externalChain,
        choices.inlineMasquerade
          ? `mark set mark or ${mark} comment "masquerade"`
          : 'jump mark-for-masquerade',
      )
    } else {
      const local = detector(settings, family, w.ipX, true)
      if (local)
        s.rule(
          externalChain,
          `${local} goto ${clusterPolicyChain} comment "short-circuit pod traffic"`,
        )
      s.rule(
        externalChain,
        choices.inlineMasquerade
          ? `fib saddr type local mark set mark or ${mark} comment "masquerade local traffic"`
          : 'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"',
      )
      s.rule(
        externalChain,
        `fib saddr type local goto ${clusterPolicyChain} comment "short-circuit local traffic"`,
      )
    }
    if (hasExternalEndpoints) s.rule(externalChain, `goto ${externalPolicyChain}`)
  }

  for (const ep of endpointChains ? plan.allLocallyReachable : []) {
    const chain = perServiceName('endpoint', epBase(ep))
    if (!choices.hairpinSet) s.rule(chain, `${w.ipX} saddr ${ep.ip} jump mark-for-masquerade`)
    if (plan.affinitySeconds !== null)
      s.rule(chain, `update @affinity-${epBase(ep)} { ${w.ipX} saddr }`)
    s.rule(chain, `meta l4proto ${p} dnat to ${ep.endpointString}`)
  }

  if (usesFWChain) {
    const sources = [...plan.sourceRanges]
    const familyNodeIPs = settings.nodeIPs.filter((ip) => addressOrCidrFamily(ip) === family)
    if (familyNodeIPs.length === 0) {
      findings.push(
        finding(
          'RENDER_NODE_IP_UNKNOWN_FOR_SOURCE_RANGES',
          'info',
          'node IP not known; LB IPs not added to the source-range allow-list',
          'kube-proxy also allows the LoadBalancer IPs themselves as sources when a loadBalancerSourceRange contains the node IP (so the node can reach its own LB). The node IP is not known, so they were left out.',
          {
            services: [plan.display],
            addresses: plan.sourceRanges,
            evidence: plan.evidence,
            action: 'Pass the node addresses with --node-ip.',
          },
        ),
      )
    }
    if (plan.sourceRanges.some((r) => familyNodeIPs.some((ip) => cidrContains(r, ip))))
      pushAll(
        sources,
        plan.loadBalancerIPs.map((lb) => lb.ip),
      )
    s.rule(fwChain, `${w.ipX} saddr != { ${sources.join(' , ')} } drop`)
  }

  // Map and set elements.
  if (choices.hairpinSet) writeHairpin(s, plan, findings)
  if (cip) {
    s.element(CLUSTER_IPS_SET, cip.ip)
    if (hasInternalEndpoints)
      s.element(SERVICE_IPS_MAP, `${cip.ip} . ${p} . ${cip.port} : goto ${internalChain}`)
    else
      s.element(
        NO_ENDPOINT_SERVICES_MAP,
        `${cip.ip} . ${p} . ${cip.port} ${comment} : ${internalVerdict}`,
      )
  }
  for (const eip of plan.externalIPs) {
    if (hasEndpoints)
      s.element(SERVICE_IPS_MAP, `${eip.ip} . ${p} . ${eip.port} : goto ${externalChain}`)
    if (!hasExternalEndpoints)
      s.element(
        NO_ENDPOINT_SERVICES_MAP,
        `${eip.ip} . ${p} . ${eip.port} ${comment} : ${externalVerdict}`,
      )
  }
  for (const lb of plan.loadBalancerIPs) {
    if (hasEndpoints)
      s.element(SERVICE_IPS_MAP, `${lb.ip} . ${p} . ${lb.port} : goto ${externalChain}`)
    if (usesFWChain) s.element(FIREWALL_IPS_MAP, `${lb.ip} . ${p} . ${lb.port} : goto ${fwChain}`)
  }
  if (!hasExternalEndpoints) {
    for (const lb of plan.loadBalancerIPs)
      s.element(
        NO_ENDPOINT_SERVICES_MAP,
        `${lb.ip} . ${p} . ${lb.port} ${comment} : ${externalVerdict}`,
      )
  }
  if (plan.nodePort !== null) {
    if (hasEndpoints)
      s.element(SERVICE_NODEPORTS_MAP, `${p} . ${plan.nodePort} : goto ${externalChain}`)
    if (!hasExternalEndpoints)
      s.element(
        NO_ENDPOINT_NODEPORTS_MAP,
        `${p} . ${plan.nodePort} ${comment} : ${externalVerdict}`,
      )
  }
  if (plan.healthCheckNodePort !== null) {
    findings.push(
      finding(
        'RENDER_HEALTH_CHECK_NODEPORT_NO_RULE',
        'info',
        `health check NodePort ${plan.healthCheckNodePort} needs no nftables rule`,
        "iptables and IPVS modes accept the healthCheckNodePort with a filter rule (IPVS through the KUBE-HEALTH-CHECK-NODE-PORT set); nftables mode writes none (kube-proxy serves it on a host socket). If the node's firewall drops incoming traffic by default, allow this port there.",
        {
          services: [plan.display],
          evidence: plan.evidence,
          action: `Make sure the node firewall allows TCP ${plan.healthCheckNodePort}.`,
        },
      ),
    )
  }
  s.blank()
}

/**
 * 1.36+: one hairpin-connections element per endpoint on this node, so a pod that reaches itself
 * through the service is masqueraded. An endpoint whose locality the source does not show is
 * listed too: for a remote endpoint the element never matches, while leaving out a local one
 * would break its hairpin traffic.
 */
function writeHairpin(s: Script, plan: ServicePlan, findings: Finding[]): void {
  const unknown: string[] = []
  for (const ep of plan.allLocallyReachable) {
    if (!ep.local && ep.localKnown) continue
    if (!ep.localKnown) unknown.push(ep.endpointString)
    s.element(HAIRPIN_CONNECTIONS_SET, `${ep.ip} . ${ep.ip} . ${plan.protocol} . ${ep.port}`)
  }
  if (unknown.length > 0)
    findings.push(
      finding(
        'RENDER_HAIRPIN_LOCALITY_UNKNOWN',
        'info',
        `${unknown.length} endpoint(s) of unknown locality listed in hairpin-connections`,
        'kube-proxy 1.36+ lists only the endpoints on this node in hairpin-connections. The source does not say where these run, so they were listed: harmless for a remote endpoint, and a local one keeps its hairpin masquerade. Read back, they show as local.',
        {
          services: [plan.display],
          addresses: unknown,
          evidence: plan.evidence,
          action: 'Read the node together with the cluster objects (--cluster) and --node.',
        },
      ),
    )
}

/**
 * Renders the state as an `nft -f` script (`opts.nftablesLayout`: 'current' by default, or 'older').
 * `text` holds every family's table (`table ip` first);
 * `files` has that one script. With `opts.bare` the leading `#` comments and the
 * `add table` + `delete table` replacement preamble are left out, which gives exactly the form
 * of kube-proxy's own test expectations.
 */
export function renderNftables(
  state: ProxyState,
  opts: RenderOptions & {bare?: boolean} = {},
): RenderResult {
  const pieces: string[] = []
  const findings = writeNftables(state, opts, (piece) => pieces.push(piece))
  const text = pieces.join('')
  return {
    text,
    files: [{name: 'kube-proxy.nft', family: null, loadWith: 'nft -f kube-proxy.nft', text}],
    findings,
  }
}

/**
 * renderNftables' text, handed to `sink` piece by piece while it is rendered (kp migrate --out
 * streams it to the file); returns the findings.
 */
export function writeNftables(
  state: ProxyState,
  opts: RenderOptions & {bare?: boolean},
  sink: TextSink,
): Finding[] {
  const layout: NftablesLayout = opts.nftablesLayout ?? 'current'
  const version = opts.kubeProxyVersion ?? NEWEST_KUBE_PROXY_VERSION
  const choices = nftRenderChoices(version)
  const families = familiesOf(state)
  if (families.length === 0) families.push('IPv4')
  const findings: Finding[] = []
  const resolved = resolveNodeSettings(state, opts, 'nftables', new Set(families))
  findings.push(...resolved.findings)
  // Written as `text.replace(/\n{3,}/g, '\n\n').trimEnd() + '\n'` of the whole script would read.
  const out = new TidyTextSink(sink)
  if (!opts.bare)
    out.write(
      `# kube-proxy nftables mode, kube-proxy ${version} layout: load with \`nft -f FILE\`. Replaces any existing kube-proxy table of these families.\n`,
    )
  for (const family of families) {
    const w = wordsFor(family)
    const s = new Script(`${w.ipX} kube-proxy`, out)
    if (!opts.bare) {
      // Create-then-delete works whether or not the table exists, so the script can be re-run.
      s.add('table')
      s.line(`delete table ${w.ipX} kube-proxy`)
    }
    writeBase(s, w, resolved.settings, family, layout, choices, findings)
    s.blank()
    for (const sp of state.services) {
      if (sp.family !== family) continue
      writeService(
        s,
        w,
        resolved.settings,
        family,
        layout,
        choices,
        planService(sp, 'nftables', findings),
        findings,
      )
      s.flush()
    }
    s.flush(true)
  }
  out.end()
  return sortFindings(dedupeFindings(findings))
}
