/**
 * ProxyState -> kube-proxy's own `iptables-restore --noflush` input (iptables mode), one text per
 * family (`iptables-restore` and `ip6tables-restore` are separate programs).
 *
 * Layout, match order and comments follow pkg/proxy/iptables/proxier.go syncProxyRules as restated
 * in docs/kube-proxy-layouts.md §2.3-2.6; fixtures/render/upstream/iptables-*.dump
 * are kube-proxy's own expectations and test/render/iptables.test.ts compares against them.
 * Like kube-proxy's input it declares the chains it writes (`:NAME - [0:0]`), which with
 * --noflush flushes exactly those chains and leaves every other chain alone. It does not touch
 * the jump rules in the built-in chains (kube-proxy adds those once with `iptables -I`); they are
 * listed in a leading comment.
 */
import type {Family, ProxyState} from '../../model/types.js'
import {
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  endpointChainName,
  servicePortChains,
} from '../../kube-proxy/iptables-names.js'
import {cascadeProbability} from '../../kube-proxy/shares.js'
import {sortFindings} from '../../analyze/findings.js'
import type {Finding} from '../../analyze/findings.js'
import {addressOrCidrFamily, cidrContains, isLoopback} from '../../core/address.js'
import {
  dedupeFindings,
  finding,
  familiesOf,
  jumpRulesFinding,
  nodePortIPs,
  planService,
  resolveNodeSettings,
} from '../common.js'
import type {NodeSettings, PlannedEndpoint, ServicePlan} from '../common.js'
import type {RenderedFile, RenderOptions, RenderResult} from '../types.js'

/** kube-proxy's largeClusterEndpointsThreshold: above it, SVC->SEP and SEP comments are left out. */
const LARGE_CLUSTER_ENDPOINTS = 1000

const NODEPORTS_LAST_RULE_COMMENT =
  '"kubernetes service nodeports; NOTE: this must be the last rule in this chain"'

/** The jump rules kube-proxy keeps in the built-in chains (docs/kube-proxy-layouts.md §2.2), for the header comment. */
const BUILTIN_JUMPS = [
  'filter INPUT/FORWARD: -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
  'filter INPUT: -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
  'filter FORWARD/OUTPUT: -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  'filter FORWARD: -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
  'filter INPUT/OUTPUT/FORWARD: -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
  'nat OUTPUT/PREROUTING: -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  'nat POSTROUTING: -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
]

/** One table of an iptables-restore input: chain declarations, then rules, then COMMIT. */
export class RestoreTable {
  readonly chains: string[] = []
  private readonly declared = new Set<string>()
  readonly rules: string[] = []
  declare(chain: string): void {
    if (!this.declared.has(chain)) {
      this.declared.add(chain)
      this.chains.push(chain)
    }
  }
  add(chain: string, ...parts: (string | string[])[]): void {
    this.rules.push(['-A', chain, ...parts.flat()].join(' '))
  }
  text(name: string): string {
    return [`*${name}`, ...this.chains.map((c) => `:${c} - [0:0]`), ...this.rules, 'COMMIT'].join(
      '\n',
    )
  }
}

interface FamilyContext {
  family: Family
  settings: NodeSettings
  filter: RestoreTable
  nat: RestoreTable
  largeCluster: boolean
  /** nodePortAddresses selects the IPv4 loopback (kube-proxy's ContainsIPv4Loopback). */
  nodePortsOnLoopback: boolean
}

function detectorMatch(ctx: FamilyContext, local: boolean): string[] | null {
  const d = ctx.settings.detector[ctx.family]
  if (d.kind === 'none' || d.value === null) return null
  const not = local ? [] : ['!']
  switch (d.kind) {
    case 'cidr':
      return [...not, '-s', d.value]
    case 'interface':
      return [...not, '-i', d.value]
    case 'interface-prefix':
      return [...not, '-i', `${d.value}+`]
  }
}

/** KUBE-SEP-<hash> of each endpoint, computed once per endpoint (each name is used 3-4 times). */
function endpointChainNames(plan: ServicePlan): (ep: PlannedEndpoint) => string {
  const names = new Map<PlannedEndpoint, string>()
  return (ep) => {
    let name = names.get(ep)
    if (name === undefined) {
      name = endpointChainName(plan.spn, plan.protocol, ep.endpointString)
      names.set(ep, name)
    }
    return name
  }
}

function writeServiceToEndpointRules(
  ctx: FamilyContext,
  plan: ServicePlan,
  chain: string,
  endpoints: PlannedEndpoint[],
  sepChain: (ep: PlannedEndpoint) => string,
): void {
  const comment = (ep: PlannedEndpoint) =>
    ctx.largeCluster ? [] : ['-m', 'comment', '--comment', `"${plan.spn} -> ${ep.endpointString}"`]
  if (plan.affinitySeconds !== null) {
    for (const ep of endpoints) {
      ctx.nat.add(
        chain,
        comment(ep),
        '-m',
        'recent',
        '--name',
        sepChain(ep),
        '--rcheck',
        '--seconds',
        String(plan.affinitySeconds),
        '--reap',
        '-j',
        sepChain(ep),
      )
    }
  }
  endpoints.forEach((ep, i) => {
    const statistic =
      i < endpoints.length - 1
        ? [
            '-m',
            'statistic',
            '--mode',
            'random',
            '--probability',
            cascadeProbability(endpoints.length - i),
          ]
        : []
    ctx.nat.add(chain, comment(ep), statistic, '-j', sepChain(ep))
  })
}

function renderService(ctx: FamilyContext, plan: ServicePlan, findings: Finding[]): void {
  const {filter, nat, settings} = ctx
  const p = plan.protocol
  const {
    clusterPolicyChain,
    localPolicyChain,
    externalChain,
    firewallChain: fwChain,
  } = servicePortChains(plan.spn, p)
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
  const usesFWChain =
    hasEndpoints && plan.loadBalancerIPs.length > 0 && plan.sourceRanges.length > 0
  const lbChain = usesFWChain ? fwChain : externalChain
  const sepChain = endpointChainNames(plan)

  let internalFilter: {target: string; comment: string} | null = null
  let externalFilter: {target: string; comment: string} | null = null
  if (!hasEndpoints) {
    const noLocal = {target: 'DROP', comment: `"${plan.spn} has no local endpoints"`}
    const none = {target: 'REJECT', comment: `"${plan.spn} has no endpoints"`}
    internalFilter = plan.internalDropsNoLocal ? noLocal : none
    externalFilter = plan.externalDropsNoLocal ? noLocal : none
  } else {
    if (!hasInternalEndpoints)
      internalFilter = {target: 'DROP', comment: `"${plan.spn} has no local endpoints"`}
    if (!hasExternalEndpoints)
      externalFilter = {target: 'DROP', comment: `"${plan.spn} has no local endpoints"`}
  }
  const match = ['-m', p, '-p', p]
  // kube-proxy's capture rule for one frontend: comment, protocol, destination address and port.
  const capture = (
    table: typeof nat,
    chain: string,
    text: string,
    dest: {ip: string; port: number},
    target: string,
  ): void => {
    table.add(
      chain,
      '-m',
      'comment',
      '--comment',
      text,
      match,
      '-d',
      dest.ip,
      '--dport',
      String(dest.port),
      '-j',
      target,
    )
  }

  // Capture the ClusterIP.
  const cip = plan.clusterIP
  if (cip) {
    if (hasInternalEndpoints) {
      capture(nat, KUBE_SERVICES, `"${plan.spn} cluster IP"`, cip, internalChain)
    } else if (internalFilter) {
      capture(filter, KUBE_SERVICES, internalFilter.comment, cip, internalFilter.target)
    }
  }

  // Capture externalIPs.
  for (const eip of plan.externalIPs) {
    if (hasEndpoints) capture(nat, KUBE_SERVICES, `"${plan.spn} external IP"`, eip, externalChain)
    if (externalFilter)
      capture(filter, KUBE_EXTERNAL_SERVICES, externalFilter.comment, eip, externalFilter.target)
  }

  // Capture load-balancer ingress IPs.
  for (const lb of plan.loadBalancerIPs) {
    if (hasEndpoints) capture(nat, KUBE_SERVICES, `"${plan.spn} loadbalancer IP"`, lb, lbChain)
    if (usesFWChain)
      capture(
        filter,
        KUBE_PROXY_FIREWALL,
        `"${plan.spn} traffic not accepted by ${fwChain}"`,
        lb,
        'DROP',
      )
  }
  if (externalFilter) {
    for (const lb of plan.loadBalancerIPs) {
      capture(filter, KUBE_EXTERNAL_SERVICES, externalFilter.comment, lb, externalFilter.target)
    }
  }

  // Capture the NodePort.
  if (plan.nodePort !== null) {
    const np = String(plan.nodePort)
    if (hasEndpoints) {
      // kube-proxy ≥1.29 counts localhost NodePort traffic with an nfacct rule first.
      if (
        ctx.family === 'IPv4' &&
        settings.localhostNodePorts &&
        settings.nfacct &&
        ctx.nodePortsOnLoopback
      ) {
        nat.add(
          KUBE_NODEPORTS,
          '-m',
          'comment',
          '--comment',
          plan.spn,
          match,
          '-d',
          '127.0.0.0/8',
          '--dport',
          np,
          '-m',
          'nfacct',
          '--nfacct-name',
          'localhost_nps_accepted_pkts',
          '-j',
          externalChain,
        )
      }
      nat.add(
        KUBE_NODEPORTS,
        '-m',
        'comment',
        '--comment',
        plan.spn,
        match,
        '--dport',
        np,
        '-j',
        externalChain,
      )
    }
    if (externalFilter) {
      filter.add(
        KUBE_EXTERNAL_SERVICES,
        '-m',
        'comment',
        '--comment',
        externalFilter.comment,
        '-m',
        'addrtype',
        '--dst-type',
        'LOCAL',
        match,
        '--dport',
        np,
        '-j',
        externalFilter.target,
      )
    }
  }

  // Health check NodePort: always tcp.
  if (plan.healthCheckNodePort !== null) {
    filter.add(
      KUBE_NODEPORTS,
      '-m',
      'comment',
      '--comment',
      `"${plan.spn} health check node port"`,
      '-m',
      'tcp',
      '-p',
      'tcp',
      '--dport',
      String(plan.healthCheckNodePort),
      '-j',
      'ACCEPT',
    )
  }

  // Internal traffic: masquerade off-cluster traffic to the ClusterIP.
  if (hasInternalEndpoints && cip) {
    const args = [
      '-m',
      'comment',
      '--comment',
      `"${plan.spn} cluster IP"`,
      ...match,
      '-d',
      cip.ip,
      '--dport',
      String(cip.port),
    ]
    const notLocal = detectorMatch(ctx, false)
    if (settings.masqueradeAll) nat.add(internalChain, args, '-j', KUBE_MARK_MASQ)
    else if (notLocal) nat.add(internalChain, args, notLocal, '-j', KUBE_MARK_MASQ)
  }

  // External traffic.
  if (usesExternalChain) {
    nat.declare(externalChain)
    if (!plan.externalLocal) {
      nat.add(
        externalChain,
        '-m',
        'comment',
        '--comment',
        `"masquerade traffic for ${plan.spn} external destinations"`,
        '-j',
        KUBE_MARK_MASQ,
      )
    } else {
      const local = detectorMatch(ctx, true)
      if (local)
        nat.add(
          externalChain,
          '-m',
          'comment',
          '--comment',
          `"pod traffic for ${plan.spn} external destinations"`,
          local,
          '-j',
          clusterPolicyChain,
        )
      nat.add(
        externalChain,
        '-m',
        'comment',
        '--comment',
        `"masquerade LOCAL traffic for ${plan.spn} external destinations"`,
        '-m',
        'addrtype',
        '--src-type',
        'LOCAL',
        '-j',
        KUBE_MARK_MASQ,
      )
      nat.add(
        externalChain,
        '-m',
        'comment',
        '--comment',
        `"route LOCAL traffic for ${plan.spn} external destinations"`,
        '-m',
        'addrtype',
        '--src-type',
        'LOCAL',
        '-j',
        clusterPolicyChain,
      )
    }
    if (hasExternalEndpoints) nat.add(externalChain, '-j', externalPolicyChain)
  }

  // Firewall chain for loadBalancerSourceRanges.
  if (usesFWChain) {
    nat.declare(fwChain)
    const args = ['-m', 'comment', '--comment', `"${plan.spn} loadbalancer IP"`]
    let allowFromNode = false
    for (const cidr of plan.sourceRanges) {
      nat.add(fwChain, args, '-s', cidr, '-j', externalChain)
      if (
        settings.nodeIPs.some(
          (ip) => addressOrCidrFamily(ip) === ctx.family && cidrContains(cidr, ip),
        )
      )
        allowFromNode = true
    }
    if (settings.nodeIPs.every((ip) => addressOrCidrFamily(ip) !== ctx.family)) {
      findings.push(
        finding(
          'RENDER_NODE_IP_UNKNOWN_FOR_SOURCE_RANGES',
          'info',
          'node IP not known; LB IPs not added to the source-range allow-list',
          'kube-proxy also allows the LoadBalancer IPs themselves as sources when a loadBalancerSourceRange contains the node IP (so the node can reach its own LB). The node IP is not known, so those rules were left out.',
          {
            services: [plan.display],
            addresses: plan.sourceRanges,
            evidence: plan.evidence,
            action: 'Pass the node addresses with --node-ip.',
            docs: null,
          },
        ),
      )
    }
    if (allowFromNode)
      for (const lb of plan.loadBalancerIPs)
        nat.add(fwChain, args, '-s', lb.ip, '-j', externalChain)
    nat.add(
      fwChain,
      '-m',
      'comment',
      '--comment',
      `"other traffic to ${plan.spn} will be dropped by KUBE-PROXY-FIREWALL"`,
    )
  }

  if (usesClusterPolicyChain) {
    nat.declare(clusterPolicyChain)
    writeServiceToEndpointRules(ctx, plan, clusterPolicyChain, clusterEndpoints, sepChain)
  }
  if (usesLocalPolicyChain) {
    nat.declare(localPolicyChain)
    writeServiceToEndpointRules(ctx, plan, localPolicyChain, localEndpoints, sepChain)
  }

  // Endpoint chains: hairpin masquerade, affinity update, DNAT.
  for (const ep of plan.allLocallyReachable) {
    const chain = sepChain(ep)
    nat.declare(chain)
    const comment = ctx.largeCluster ? [] : ['-m', 'comment', '--comment', plan.spn]
    nat.add(chain, comment, '-s', ep.ip, '-j', KUBE_MARK_MASQ)
    const recent = plan.affinitySeconds !== null ? ['-m', 'recent', '--name', chain, '--set'] : []
    nat.add(chain, comment, recent, match, '-j', 'DNAT', '--to-destination', ep.endpointString)
  }
}

function renderFamily(
  state: ProxyState,
  family: Family,
  settings: NodeSettings,
  plans: ServicePlan[],
  findings: Finding[],
): string {
  const totalEndpoints = state.services.reduce((n, sp) => n + sp.endpoints.length, 0)
  const np = nodePortIPs(settings, family, 'iptables')
  findings.push(...np.findings)
  const ctx: FamilyContext = {
    family,
    settings,
    filter: new RestoreTable(),
    nat: new RestoreTable(),
    largeCluster: totalEndpoints > LARGE_CLUSTER_ENDPOINTS,
    nodePortsOnLoopback: np.matchAll || np.ips.some(isLoopback),
  }
  const {filter, nat} = ctx
  const mark = settings.masqueradeMark
  for (const c of [
    KUBE_SERVICES,
    KUBE_EXTERNAL_SERVICES,
    KUBE_FORWARD,
    KUBE_NODEPORTS,
    KUBE_PROXY_FIREWALL,
  ])
    filter.declare(c)
  for (const c of [KUBE_SERVICES, KUBE_NODEPORTS, KUBE_POSTROUTING, KUBE_MARK_MASQ]) nat.declare(c)

  // Static nat rules (§2.3).
  writeMasqueradeRules(nat, mark, settings.randomFully)

  if (family === 'IPv4' && settings.localhostNodePorts) {
    // Mitigation for route_localnet (issue 90259); kubelet writes the same rule.
    filter.declare(KUBE_FIREWALL)
    filter.add(
      KUBE_FIREWALL,
      '-m',
      'comment',
      '--comment',
      '"block incoming localnet connections"',
      '-d',
      '127.0.0.0/8',
      '!',
      '-s',
      '127.0.0.0/8',
      '-m',
      'conntrack',
      '!',
      '--ctstate',
      'RELATED,ESTABLISHED,DNAT',
      '-j',
      'DROP',
    )
  }

  if (ctx.largeCluster) {
    findings.push(
      finding(
        'RENDER_LARGE_CLUSTER_MODE',
        'info',
        `more than ${LARGE_CLUSTER_ENDPOINTS} endpoints: endpoint comments left out, as kube-proxy does`,
        `The state has ${totalEndpoints} endpoints; above ${LARGE_CLUSTER_ENDPOINTS} kube-proxy leaves the comments off the KUBE-SVC/SVL -> KUBE-SEP and KUBE-SEP rules to keep the ruleset small.`,
        {action: 'None.'},
      ),
    )
  }

  for (const plan of plans) renderService(ctx, plan, findings)

  // The tail-call to KUBE-NODEPORTS must be the last rule of nat KUBE-SERVICES.
  if (np.matchAll) {
    const dest = ['-m', 'addrtype', '--dst-type', 'LOCAL']
    if (family === 'IPv6') dest.push('!', '-d', '::1/128')
    else if (!settings.localhostNodePorts) dest.push('!', '-d', '127.0.0.0/8')
    nat.add(
      KUBE_SERVICES,
      '-m',
      'comment',
      '--comment',
      NODEPORTS_LAST_RULE_COMMENT,
      dest,
      '-j',
      KUBE_NODEPORTS,
    )
  } else {
    for (const ip of np.ips) {
      if (isLoopback(ip) && (family === 'IPv6' || !settings.localhostNodePorts)) continue
      nat.add(
        KUBE_SERVICES,
        '-m',
        'comment',
        '--comment',
        NODEPORTS_LAST_RULE_COMMENT,
        '-d',
        ip,
        '-j',
        KUBE_NODEPORTS,
      )
    }
  }

  // Static filter rules (§2.3).
  if (settings.conntrackInvalidDrop) {
    filter.add(
      KUBE_FORWARD,
      '-m',
      'conntrack',
      '--ctstate',
      'INVALID',
      settings.nfacct ? ['-m', 'nfacct', '--nfacct-name', 'ct_state_invalid_dropped_pkts'] : [],
      '-j',
      'DROP',
    )
  }
  writeForwardAcceptRules(filter, mark)

  return `${filter.text('filter')}\n${nat.text('nat')}\n`
}

/**
 * KUBE-POSTROUTING masquerades what KUBE-MARK-MASQ marked (clearing the mark first, so a packet
 * is masqueraded once): the same rules in iptables and IPVS mode (proxier.go writeIptablesRules).
 */
export function writeMasqueradeRules(nat: RestoreTable, mark: string, randomFully: boolean): void {
  nat.add(KUBE_POSTROUTING, '-m', 'mark', '!', '--mark', `${mark}/${mark}`, '-j', 'RETURN')
  nat.add(KUBE_POSTROUTING, '-j', 'MARK', '--xor-mark', mark)
  nat.add(
    KUBE_POSTROUTING,
    '-m',
    'comment',
    '--comment',
    '"kubernetes service traffic requiring SNAT"',
    '-j',
    'MASQUERADE',
    randomFully ? ['--random-fully'] : [],
  )
  nat.add(KUBE_MARK_MASQ, '-j', 'MARK', '--or-mark', mark)
}

/** KUBE-FORWARD accepts marked traffic and its replies: the same rules in iptables and IPVS mode. */
export function writeForwardAcceptRules(filter: RestoreTable, mark: string): void {
  filter.add(
    KUBE_FORWARD,
    '-m',
    'comment',
    '--comment',
    '"kubernetes forwarding rules"',
    '-m',
    'mark',
    '--mark',
    `${mark}/${mark}`,
    '-j',
    'ACCEPT',
  )
  filter.add(
    KUBE_FORWARD,
    '-m',
    'comment',
    '--comment',
    '"kubernetes forwarding conntrack rule"',
    '-m',
    'conntrack',
    '--ctstate',
    'RELATED,ESTABLISHED',
    '-j',
    'ACCEPT',
  )
}

function header(family: Family): string {
  const tool = family === 'IPv4' ? 'iptables-restore' : 'ip6tables-restore'
  return [
    `# kube-proxy iptables mode, ${family}: load with \`${tool} --noflush\`.`,
    '# kube-proxy also keeps these jump rules in the built-in chains (added once, not by this file):',
    ...BUILTIN_JUMPS.map((j) => `#   ${j}`),
  ].join('\n')
}

/**
 * Renders the state as kube-proxy's iptables-mode restore input. `text` is the IPv4 file (or the
 * IPv6 one for an IPv6-only state); `files` holds one per family. With `opts.bare` the leading
 * `#` comment block is left out (the upstream tests' form).
 */
export function renderIptables(
  state: ProxyState,
  opts: RenderOptions & {bare?: boolean} = {},
): RenderResult {
  const families = familiesOf(state)
  if (families.length === 0) families.push('IPv4')
  const findings: Finding[] = []
  const resolved = resolveNodeSettings(state, opts, 'iptables', new Set(families))
  findings.push(...resolved.findings)
  const files: RenderedFile[] = []
  for (const family of families) {
    const plans = state.services
      .filter((sp) => sp.family === family)
      .map((sp) => planService(sp, 'iptables', findings))
    const body = renderFamily(state, family, resolved.settings, plans, findings)
    const text = opts.bare ? body : `${header(family)}\n${body}`
    const v = family === 'IPv4' ? 'v4' : 'v6'
    const tool = family === 'IPv4' ? 'iptables-restore' : 'ip6tables-restore'
    files.push({
      name: `iptables-restore.${v}.txt`,
      family,
      loadWith: `${tool} --noflush < iptables-restore.${v}.txt`,
      text,
    })
  }
  findings.push(jumpRulesFinding('iptables', BUILTIN_JUMPS))
  return {text: files[0]!.text, files, findings: sortFindings(dedupeFindings(findings))}
}
