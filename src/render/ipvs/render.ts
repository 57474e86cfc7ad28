/**
 * ProxyState -> what kube-proxy programs in IPVS mode (docs/ipvs-layouts.md (a)):
 *
 * * `ipvsadm-restore` input (b.3): one `-A` virtual server per (address, port, protocol) with
 *   its scheduler and persistence, then `-a ... -m -w 1` per real server (a.3);
 * * `ipset restore` input (a.4, b.4): `create`, `flush` and `add` lines for the KUBE-* sets
 *   (KUBE-6-* for IPv6, names cut to 31 characters), to load with `ipset restore -exist`;
 * * the `ip addr add IP/32 dev kube-ipvs0` lines for the addresses kube-proxy binds (a.2);
 * * the companion `iptables-restore --noflush` input per family (a.5), written like
 *   pkg/proxy/ipvs/proxier.go writeIptablesRules (compare
 *   fixtures/ipvs/generated/iptables-restore-input.as-written-by-kube-proxy.txt).
 *
 * `text` is the ipvsadm-restore input; `files` holds all of them, that one first. Load the ipsets
 * before the iptables files (their `-m set` matches need the sets to exist).
 */
import type {Family, ProxyState} from '../../model/types.js'
import {sortFindings} from '../../analyze/findings.js'
import type {Finding} from '../../analyze/findings.js'
import {addressOrCidrFamily, cidrContains, isLoopback, joinHostPort} from '../../core/address.js'
import {localOrCluster} from '../../kube-proxy/endpoints.js'
import {
  badSetting,
  dedupeFindings,
  finding,
  familiesOf,
  jumpRulesFinding,
  nodePortIPs,
  planService,
  resolveNodeSettings,
} from '../common.js'
import {isValidSetting} from '../setting-values.js'
import type {NodeSettings, PlannedEndpoint, ServicePlan} from '../common.js'
import {RestoreTable, writeForwardAcceptRules, writeMasqueradeRules} from '../iptables/render.js'
import type {RenderedFile, RenderOptions, RenderResult} from '../types.js'
import {
  KUBE_FORWARD,
  KUBE_MARK_MASQ,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from '../../kube-proxy/iptables-names.js'
import {
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
  KUBE_LOAD_BALANCER,
  KUBE_NODE_PORT,
  KUBE_SOURCE_RANGES_FIREWALL,
  ipvsSetName,
} from '../../kube-proxy/ipvs-names.js'

/** The jump rules IPVS mode keeps in the built-in chains (a.5), for the header and the finding. */
const BUILTIN_JUMPS = [
  'nat PREROUTING/OUTPUT: -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  'nat POSTROUTING: -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
  'filter INPUT: -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER',
  'filter INPUT/FORWARD: -m comment --comment "kube-proxy firewall rules" -j KUBE-PROXY-FIREWALL',
  'filter INPUT: -m comment --comment "kubernetes health check rules" -j KUBE-NODE-PORT',
  'filter FORWARD: -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
  'filter OUTPUT: -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-OUT-FILTER',
]

type IpsetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port'

/** kube-proxy's ipsets in its own order (pkg/proxy/ipvs/ipset.go ipsetInfo), with their comments. */
const IPSETS = [
  [
    'LOOP-BACK',
    'hash:ip,port,ip',
    'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose',
  ],
  ['CLUSTER-IP', 'hash:ip,port', 'Kubernetes service cluster ip + port for masquerade purpose'],
  [
    'EXTERNAL-IP',
    'hash:ip,port',
    'Kubernetes service external ip + port for masquerade and filter purpose',
  ],
  [
    'EXTERNAL-IP-LOCAL',
    'hash:ip,port',
    'Kubernetes service external ip + port with externalTrafficPolicy=local',
  ],
  ['LOAD-BALANCER', 'hash:ip,port', 'Kubernetes service lb portal'],
  [
    'LOAD-BALANCER-FW',
    'hash:ip,port',
    'Kubernetes service load balancer ip + port for load balancer with sourceRange',
  ],
  [
    'LOAD-BALANCER-LOCAL',
    'hash:ip,port',
    'Kubernetes service load balancer ip + port with externalTrafficPolicy=local',
  ],
  [
    'LOAD-BALANCER-SOURCE-IP',
    'hash:ip,port,ip',
    'Kubernetes service load balancer ip + port + source IP for packet filter purpose',
  ],
  [
    'LOAD-BALANCER-SOURCE-CIDR',
    'hash:ip,port,net',
    'Kubernetes service load balancer ip + port + source cidr for packet filter purpose',
  ],
  ['NODE-PORT-TCP', 'bitmap:port', 'Kubernetes nodeport TCP port for masquerade purpose'],
  [
    'NODE-PORT-LOCAL-TCP',
    'bitmap:port',
    'Kubernetes nodeport TCP port with externalTrafficPolicy=local',
  ],
  ['NODE-PORT-UDP', 'bitmap:port', 'Kubernetes nodeport UDP port for masquerade purpose'],
  [
    'NODE-PORT-LOCAL-UDP',
    'bitmap:port',
    'Kubernetes nodeport UDP port with externalTrafficPolicy=local',
  ],
  [
    'NODE-PORT-SCTP-HASH',
    'hash:ip,port',
    "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'",
  ],
  [
    'NODE-PORT-LOCAL-SCTP-HASH',
    'hash:ip,port',
    "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'",
  ],
  ['HEALTH-CHECK-NODE-PORT', 'bitmap:port', 'Kubernetes health check node port'],
  ['IPVS-IPS', 'hash:ip', 'Addresses on the ipvs interface'],
] as const satisfies readonly (readonly [string, IpsetType, string])[]

type SetKey = (typeof IPSETS)[number][0]

interface Ipset {
  name: string
  type: IpsetType
  comment: string
  entries: Set<string>
}

interface VirtualServer {
  protocol: string
  ip: string
  port: number
  scheduler: string
  persistence: number | null
  realServers: PlannedEndpoint[]
}

interface FamilyOutput {
  sets: Map<SetKey, Ipset>
  virtualServers: VirtualServer[]
  bound: string[]
  /** LB ip,proto,port that the node itself may not reach (KUBE-IPVS-OUT-FILTER). */
  noNodeAccess: {ip: string; protocol: string; port: number}[]
}

const PROTOCOL_FLAG: Record<string, string> = {tcp: '-t', udp: '-u', sctp: '--sctp-service'}

function collect(
  plans: ServicePlan[],
  family: Family,
  settings: NodeSettings,
  defaultScheduler: string,
  findings: Finding[],
): FamilyOutput {
  const sets = new Map<SetKey, Ipset>()
  for (const [key, type, comment] of IPSETS)
    sets.set(key, {name: ipvsSetName(key, family), type, comment, entries: new Set()})
  const add = (key: SetKey, entry: string) => sets.get(key)!.entries.add(entry)
  const virtualServers: VirtualServer[] = []
  const bound = new Set<string>()
  const noNodeAccess: FamilyOutput['noNodeAccess'] = []
  const familyNodeIPs = settings.nodeIPs.filter((ip) => addressOrCidrFamily(ip) === family)
  const isNodeIP = new Set(familyNodeIPs)

  // Node IPs that get NodePort virtual servers: every node address (never loopback in IPVS
  // mode, a.2), narrowed by nodePortAddresses.
  const np = nodePortIPs(settings, family, 'ipvs')
  findings.push(...np.findings)
  const nodePortAddrs = (np.matchAll ? familyNodeIPs : np.ips).filter((ip) => !isLoopback(ip))
  if (np.matchAll && familyNodeIPs.length === 0 && plans.some((p) => p.nodePort !== null)) {
    findings.push(
      finding(
        'RENDER_MISSING_NODE_IPS',
        'warning',
        `node ${family} addresses not known; NodePort virtual servers left out`,
        "IPVS mode makes one virtual server per node address and NodePort; the node's addresses are not known, so none was rendered (the NodePort ipsets are).",
        {
          action: 'Pass the node addresses with --node-ip.',
          docs: 'https://kubernetes.io/docs/reference/networking/virtual-ips/',
        },
      ),
    )
  }

  let unknownLocality = false
  for (const plan of plans) {
    const p = plan.protocol
    const scheduler = plan.scheduler ?? defaultScheduler
    const vs = (ip: string, port: number, onlyLocal: boolean) => {
      // kube-proxy's syncEndpoint: local endpoints when the policy says so and there are any,
      // otherwise the cluster endpoints (PR #97081 fallback, a.3).
      const realServers = localOrCluster(onlyLocal, plan.clusterEndpoints, plan.localEndpoints)
      virtualServers.push({
        protocol: p,
        ip,
        port,
        scheduler,
        persistence: plan.affinitySeconds,
        realServers,
      })
    }
    for (const ep of plan.allEndpoints) {
      if (ep.local) add('LOOP-BACK', `${ep.ip},${p}:${ep.port},${ep.ip}`)
    }
    if (plan.sp.endpoints.some((e) => e.local === null)) unknownLocality = true

    const cip = plan.clusterIP
    if (cip) {
      add('CLUSTER-IP', `${cip.ip},${p}:${cip.port}`)
      bound.add(cip.ip)
      vs(cip.ip, cip.port, plan.internalLocal)
    }
    for (const eip of plan.externalIPs) {
      add(plan.externalLocal ? 'EXTERNAL-IP-LOCAL' : 'EXTERNAL-IP', `${eip.ip},${p}:${eip.port}`)
      if (!isNodeIP.has(eip.ip)) bound.add(eip.ip)
      vs(eip.ip, eip.port, plan.externalLocal)
    }
    for (const lb of plan.loadBalancerIPs) {
      const entry = `${lb.ip},${p}:${lb.port}`
      add('LOAD-BALANCER', entry)
      if (plan.externalLocal) add('LOAD-BALANCER-LOCAL', entry)
      if (plan.sourceRanges.length > 0) {
        add('LOAD-BALANCER-FW', entry)
        let allowFromNode = false
        for (const cidr of plan.sourceRanges) {
          add('LOAD-BALANCER-SOURCE-CIDR', `${entry},${cidr}`)
          if (familyNodeIPs.some((ip) => cidrContains(cidr, ip))) allowFromNode = true
        }
        if (allowFromNode) add('LOAD-BALANCER-SOURCE-IP', `${entry},${lb.ip}`)
        else noNodeAccess.push({ip: lb.ip, protocol: p, port: lb.port})
        if (familyNodeIPs.length === 0) {
          findings.push(
            finding(
              'RENDER_NODE_IP_UNKNOWN_FOR_SOURCE_RANGES',
              'info',
              'node IP not known; the node was taken to be outside the LB source ranges',
              'kube-proxy lets the node reach its own LoadBalancer IP when a loadBalancerSourceRange contains the node IP, and blocks it (KUBE-IPVS-OUT-FILTER) otherwise. The node IP is not known, so the node was taken to be outside the ranges.',
              {
                services: [plan.display],
                addresses: plan.sourceRanges,
                evidence: plan.evidence,
                action: 'Pass the node addresses with --node-ip.',
              },
            ),
          )
        }
      }
      if (!isNodeIP.has(lb.ip)) bound.add(lb.ip)
      vs(lb.ip, lb.port, plan.externalLocal)
    }
    if (plan.nodePort !== null) {
      const upper = p.toUpperCase()
      if (p === 'sctp') {
        for (const ip of nodePortAddrs) {
          add('NODE-PORT-SCTP-HASH', `${ip},sctp:${plan.nodePort}`)
          if (plan.externalLocal) add('NODE-PORT-LOCAL-SCTP-HASH', `${ip},sctp:${plan.nodePort}`)
        }
      } else {
        add(`NODE-PORT-${upper}` as SetKey, String(plan.nodePort))
        if (plan.externalLocal) add(`NODE-PORT-LOCAL-${upper}` as SetKey, String(plan.nodePort))
      }
      for (const ip of nodePortAddrs) vs(ip, plan.nodePort, plan.externalLocal)
    }
    if (plan.healthCheckNodePort !== null)
      add('HEALTH-CHECK-NODE-PORT', String(plan.healthCheckNodePort))
  }
  for (const ip of bound) add('IPVS-IPS', ip)
  if (unknownLocality) {
    findings.push(
      finding(
        'RENDER_LOOPBACK_SET_INCOMPLETE',
        'warning',
        `endpoint locality unknown; ${ipvsSetName('LOOP-BACK', family)} may miss hairpin entries`,
        'IPVS mode masquerades a pod that reaches itself through a service with the KUBE-LOOP-BACK set of node-local endpoints. The source does not say which endpoints run on this node, so they were left out of the set and hairpin connections may fail.',
        {
          action: 'Read the node together with the cluster objects (--cluster) and --node.',
        },
      ),
    )
  }
  return {sets, virtualServers, bound: [...bound], noNodeAccess}
}

function ipvsadmLines(out: FamilyOutput): string[] {
  const lines: string[] = []
  for (const v of out.virtualServers) {
    const svc = `${PROTOCOL_FLAG[v.protocol] ?? '-t'} ${joinHostPort(v.ip, v.port)}`
    lines.push(`-A ${svc} -s ${v.scheduler}${v.persistence !== null ? ` -p ${v.persistence}` : ''}`)
    for (const rs of v.realServers) lines.push(`-a ${svc} -r ${rs.endpointString} -m -w 1`)
  }
  return lines
}

function ipsetLines(out: FamilyOutput, family: Family): string[] {
  const lines: string[] = []
  for (const set of out.sets.values()) {
    const options =
      set.type === 'bitmap:port'
        ? 'range 0-65535'
        : `family ${family === 'IPv4' ? 'inet' : 'inet6'} hashsize 1024 maxelem 65536`
    lines.push(`create ${set.name} ${set.type} ${options}`)
    // `ipset restore -exist` keeps an existing set; flush it so the file replaces its members.
    lines.push(`flush ${set.name}`)
    for (const e of set.entries) lines.push(`add ${set.name} ${e}`)
  }
  return lines
}

/** The companion rules of a.5, in the order writeIptablesRules writes them. */
function iptablesText(out: FamilyOutput, family: Family, settings: NodeSettings): string {
  const nat = new RestoreTable()
  const filter = new RestoreTable()
  for (const c of [
    KUBE_SERVICES,
    KUBE_POSTROUTING,
    KUBE_NODE_PORT,
    KUBE_LOAD_BALANCER,
    KUBE_MARK_MASQ,
  ])
    nat.declare(c)
  for (const c of [
    KUBE_FORWARD,
    KUBE_NODE_PORT,
    KUBE_PROXY_FIREWALL,
    KUBE_SOURCE_RANGES_FIREWALL,
    KUBE_IPVS_FILTER,
    KUBE_IPVS_OUT_FILTER,
  ])
    filter.declare(c)
  const set = (key: SetKey) => out.sets.get(key)!
  const nonEmpty = (key: SetKey) => set(key).entries.size > 0
  const comment = (key: SetKey) => ['-m', 'comment', '--comment', `"${set(key).comment}"`]
  const match = (key: SetKey, dir: string) => ['-m', 'set', '--match-set', set(key).name, dir]
  const mark = settings.masqueradeMark

  nat.add(KUBE_SERVICES, '-s', family === 'IPv4' ? '127.0.0.0/8' : '::1/128', '-j', 'RETURN')
  // ipsetWithIptablesChain: [set, table, chain, target, match, protocol]
  const chained: [SetKey, 'nat' | 'filter', string, string, string, string | null][] = [
    ['LOOP-BACK', 'nat', KUBE_POSTROUTING, 'MASQUERADE', 'dst,dst,src', null],
    ['LOAD-BALANCER', 'nat', KUBE_SERVICES, KUBE_LOAD_BALANCER, 'dst,dst', null],
    ['LOAD-BALANCER-LOCAL', 'nat', KUBE_LOAD_BALANCER, 'RETURN', 'dst,dst', null],
    ['NODE-PORT-LOCAL-TCP', 'nat', KUBE_NODE_PORT, 'RETURN', 'dst', 'tcp'],
    ['NODE-PORT-TCP', 'nat', KUBE_NODE_PORT, KUBE_MARK_MASQ, 'dst', 'tcp'],
    ['NODE-PORT-LOCAL-UDP', 'nat', KUBE_NODE_PORT, 'RETURN', 'dst', 'udp'],
    ['NODE-PORT-UDP', 'nat', KUBE_NODE_PORT, KUBE_MARK_MASQ, 'dst', 'udp'],
    ['NODE-PORT-LOCAL-SCTP-HASH', 'nat', KUBE_NODE_PORT, 'RETURN', 'dst,dst', 'sctp'],
    ['NODE-PORT-SCTP-HASH', 'nat', KUBE_NODE_PORT, KUBE_MARK_MASQ, 'dst,dst', 'sctp'],
    [
      'LOAD-BALANCER-FW',
      'filter',
      KUBE_PROXY_FIREWALL,
      KUBE_SOURCE_RANGES_FIREWALL,
      'dst,dst',
      null,
    ],
    [
      'LOAD-BALANCER-SOURCE-CIDR',
      'filter',
      KUBE_SOURCE_RANGES_FIREWALL,
      'RETURN',
      'dst,dst,src',
      null,
    ],
    [
      'LOAD-BALANCER-SOURCE-IP',
      'filter',
      KUBE_SOURCE_RANGES_FIREWALL,
      'RETURN',
      'dst,dst,src',
      null,
    ],
  ]
  for (const [key, table, chain, target, dir, protocol] of chained) {
    if (!nonEmpty(key)) continue
    ;(table === 'nat' ? nat : filter).add(
      chain,
      protocol ? ['-p', protocol] : [],
      comment(key),
      match(key, dir),
      '-j',
      target,
    )
  }

  if (nonEmpty('CLUSTER-IP')) {
    const args = [...comment('CLUSTER-IP'), '-m', 'set', '--match-set', set('CLUSTER-IP').name]
    const d = settings.detector[family]
    if (settings.masqueradeAll) nat.add(KUBE_SERVICES, args, 'dst,dst', '-j', KUBE_MARK_MASQ)
    else if (d.kind !== 'none' && d.value !== null) {
      const notLocal =
        d.kind === 'cidr'
          ? ['!', '-s', d.value]
          : ['!', '-i', d.kind === 'interface-prefix' ? `${d.value}+` : d.value]
      nat.add(KUBE_SERVICES, args, 'dst,dst', notLocal, '-j', KUBE_MARK_MASQ)
    } else nat.add(KUBE_SERVICES, args, 'src,dst', '-j', KUBE_MARK_MASQ)
  }
  const externalIPRules = (args: string[]) => {
    nat.add(
      KUBE_SERVICES,
      args,
      '-m',
      'physdev',
      '!',
      '--physdev-is-in',
      '-m',
      'addrtype',
      '!',
      '--src-type',
      'LOCAL',
      '-j',
      'ACCEPT',
    )
    nat.add(KUBE_SERVICES, args, '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'ACCEPT')
  }
  if (nonEmpty('EXTERNAL-IP')) {
    const args = [...comment('EXTERNAL-IP'), ...match('EXTERNAL-IP', 'dst,dst')]
    nat.add(KUBE_SERVICES, args, '-j', KUBE_MARK_MASQ)
    externalIPRules(args)
  }
  if (nonEmpty('EXTERNAL-IP-LOCAL'))
    externalIPRules([...comment('EXTERNAL-IP-LOCAL'), ...match('EXTERNAL-IP-LOCAL', 'dst,dst')])
  nat.add(KUBE_SERVICES, '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', KUBE_NODE_PORT)
  nat.add(KUBE_LOAD_BALANCER, '-j', KUBE_MARK_MASQ)
  filter.add(KUBE_SOURCE_RANGES_FIREWALL, '-j', 'DROP')
  for (const e of out.noNodeAccess) {
    filter.add(
      KUBE_IPVS_OUT_FILTER,
      '-s',
      e.ip,
      '-m',
      'ipvs',
      '--vaddr',
      e.ip,
      '--vproto',
      e.protocol,
      '--vport',
      String(e.port),
      '-j',
      'DROP',
    )
  }
  // Accept IPVS traffic last, so that no other rule can break it.
  for (const key of ['CLUSTER-IP', 'LOAD-BALANCER'] as const)
    if (nonEmpty(key)) nat.add(KUBE_SERVICES, match(key, 'dst,dst'), '-j', 'ACCEPT')
  writeForwardAcceptRules(filter, mark)
  filter.add(
    KUBE_NODE_PORT,
    comment('HEALTH-CHECK-NODE-PORT'),
    match('HEALTH-CHECK-NODE-PORT', 'dst'),
    '-j',
    'ACCEPT',
  )
  for (const [key, dir] of [
    ['LOAD-BALANCER', 'dst,dst'],
    ['CLUSTER-IP', 'dst,dst'],
    ['EXTERNAL-IP', 'dst,dst'],
    ['EXTERNAL-IP-LOCAL', 'dst,dst'],
    ['HEALTH-CHECK-NODE-PORT', 'dst'],
  ] as const) {
    filter.add(KUBE_IPVS_FILTER, match(key, dir), '-j', 'RETURN')
  }
  filter.add(
    KUBE_IPVS_FILTER,
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    match('IPVS-IPS', 'dst'),
    '-j',
    'REJECT',
  )
  writeMasqueradeRules(nat, mark, settings.randomFully)
  return `${nat.text('nat')}\n${filter.text('filter')}\n`
}

/**
 * Renders the state as kube-proxy's IPVS-mode programming. With `opts.bare` the files carry no
 * `#` header lines (ipvsadm-restore input never does: ipvsadm does not accept comments).
 */
export function renderIpvs(
  state: ProxyState,
  opts: RenderOptions & {bare?: boolean} = {},
): RenderResult {
  const families = familiesOf(state)
  if (families.length === 0) families.push('IPv4')
  const findings: Finding[] = []
  const resolved = resolveNodeSettings(state, opts, 'ipvs', new Set(families))
  findings.push(...resolved.findings)
  // Written into every virtual server that shows none: a value that is no scheduler is left out.
  let optionScheduler = opts.scheduler
  if (optionScheduler !== undefined && !isValidSetting('scheduler', optionScheduler)) {
    findings.push(badSetting('scheduler', optionScheduler, 'option', 'ipvs'))
    optionScheduler = undefined
  }
  const defaultScheduler = optionScheduler ?? 'rr'
  if (optionScheduler === undefined && state.services.some((s) => s.scheduler === null)) {
    findings.push(
      finding(
        'RENDER_DEFAULT_SCHEDULER',
        'info',
        'IPVS scheduler not known; assumed rr',
        "The source state does not show an IPVS scheduler for some services, so kube-proxy's default (rr, round robin) was used for them.",
        {
          action:
            'Pass --scheduler with the ipvs.scheduler of the kube-proxy configuration if it differs.',
          docs: 'https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/',
        },
      ),
    )
  }
  const ipvsadm: string[] = []
  const ipset: string[] = []
  const ipAddr: string[] = []
  const iptables: RenderedFile[] = []
  for (const family of families) {
    const plans = state.services
      .filter((sp) => sp.family === family)
      .map((sp) => planService(sp, 'ipvs', findings))
    const out = collect(plans, family, resolved.settings, defaultScheduler, findings)
    // Not push(...lines): a large cluster has more lines than a call may have arguments.
    for (const line of ipvsadmLines(out)) ipvsadm.push(line)
    for (const line of ipsetLines(out, family)) ipset.push(line)
    for (const ip of out.bound)
      ipAddr.push(`ip addr add ${ip}/${family === 'IPv4' ? 32 : 128} dev kube-ipvs0`)
    const v = family === 'IPv4' ? 'v4' : 'v6'
    const tool = family === 'IPv4' ? 'iptables-restore' : 'ip6tables-restore'
    const body = iptablesText(out, family, resolved.settings)
    const header = [
      `# kube-proxy IPVS mode, ${family}: companion rules; load with \`${tool} --noflush\` after the ipsets.`,
      '# kube-proxy also keeps these jump rules in the built-in chains (added once, not by this file):',
      ...BUILTIN_JUMPS.map((j) => `#   ${j}`),
    ].join('\n')
    const text = opts.bare ? body : `${header}\n${body}`
    iptables.push({
      name: `ipvs-iptables-restore.${v}.txt`,
      family,
      loadWith: `${tool} --noflush < ipvs-iptables-restore.${v}.txt`,
      text,
    })
  }
  const head = (line: string) => (opts.bare ? [] : [line])
  const ipvsadmText = ipvsadm.join('\n') + (ipvsadm.length ? '\n' : '')
  const ipsetText =
    [
      ...head('# kube-proxy IPVS mode: the KUBE-* ipsets; load with `ipset restore -exist`.'),
      ...ipset,
    ].join('\n') + '\n'
  const ipAddrText =
    [
      ...head('#!/bin/sh'),
      ...head(
        '# kube-proxy IPVS mode: the addresses bound to the kube-ipvs0 dummy interface ("File exists" on a re-run is harmless).',
      ),
      'ip link add kube-ipvs0 type dummy',
      ...ipAddr,
    ].join('\n') + '\n'
  const files: RenderedFile[] = [
    {
      name: 'ipvsadm-restore.txt',
      family: null,
      loadWith: 'ipvsadm-restore < ipvsadm-restore.txt',
      text: ipvsadmText,
    },
    {
      name: 'ipset-restore.txt',
      family: null,
      loadWith: 'ipset restore -exist < ipset-restore.txt',
      text: ipsetText,
    },
    {name: 'kube-ipvs0.sh', family: null, loadWith: 'sh kube-ipvs0.sh', text: ipAddrText},
    ...iptables,
  ]
  findings.push(jumpRulesFinding('ipvs', BUILTIN_JUMPS))
  return {text: ipvsadmText, files, findings: sortFindings(dedupeFindings(findings))}
}
