/**
 * How IPVS mode behaves differently from iptables and nftables modes (docs/ipvs-layouts.md
 * §d caveats 7-10, 12-14, 16, and a.2/a.3), checked in both directions: leaving IPVS for
 * nftables or iptables, and moving to IPVS from either.
 */
import {endpointAddress} from '../addresses.js'
import type {Endpoint, ServicePort} from '../../model/types.js'
import {
  frontendsDisagree as anyOwnEndpoints,
  ownEndpoints,
  ownEndpointsDifference,
} from '../frontend-endpoints.js'
import {
  type Check,
  DOCS,
  type MigrationContext,
  externallyAccessible,
  finding,
  frontendAddress,
  from,
  isExternal,
  serviceEvidence,
  serviceNames,
  sysctl,
} from './context.js'

const leavingIpvs = (ctx: MigrationContext): boolean => from(ctx, 'ipvs') && ctx.to !== 'ipvs'
const enteringIpvs = (ctx: MigrationContext): boolean =>
  from(ctx, 'iptables', 'nftables') && ctx.to === 'ipvs'

/** Endpoints that take new connections: a weight-0 real server is being drained (a.6). */
const active = (sp: ServicePort): Endpoint[] =>
  sp.endpoints.filter((e) => e.state !== 'draining' && e.weight !== 0)

const hostPort = (e: Endpoint): string => endpointAddress(e)

/** Source-hashing schedulers give implicit stickiness that random selection does not (caveat 7). */
const STICKY_SCHEDULERS = new Set(['sh', 'mh'])
/** rr, and wrr with kube-proxy's equal weights, behave about like random selection (caveat 7). */
const ROUND_ROBIN = new Set(['rr', 'wrr'])

export const schedulers: Check = (ctx) => {
  if (!leavingIpvs(ctx)) return []
  const sticky = ctx.state.services.filter(
    (sp) => sp.scheduler !== null && STICKY_SCHEDULERS.has(sp.scheduler),
  )
  const loadAware = ctx.state.services.filter(
    (sp) =>
      sp.scheduler !== null &&
      !STICKY_SCHEDULERS.has(sp.scheduler) &&
      !ROUND_ROBIN.has(sp.scheduler),
  )
  const out = []
  if (sticky.length > 0) {
    const unprotected = sticky.filter((sp) => sp.sessionAffinity === null)
    out.push(
      finding({
        id: 'MIGRATE_IPVS_SCHEDULER_STICKY',
        severity: unprotected.length > 0 ? 'warning' : 'info',
        title: `${ctx.to} mode cannot express the IPVS ${[...new Set(sticky.map((sp) => sp.scheduler))].join('/')} scheduler: source stickiness is lost`,
        message: `${ctx.to} mode picks an endpoint at random. Clients of these service ports may rely on the source-hash stickiness of the ${[...new Set(sticky.map((sp) => sp.scheduler))].join('/')} scheduler without having set sessionAffinity${unprotected.length < sticky.length ? ' (the ones with sessionAffinity: ClientIP keep their stickiness)' : ''}.`,
        services: serviceNames(sticky),
        addresses: [],
        evidence: serviceEvidence(sticky),
        action:
          'Set `sessionAffinity: ClientIP` on the Services that need stickiness, or accept random selection.',
        docs: DOCS.virtualIps,
      }),
    )
  }
  if (loadAware.length > 0) {
    const names = [...new Set(loadAware.map((sp) => sp.scheduler))].join(', ')
    out.push(
      finding({
        id: 'MIGRATE_IPVS_SCHEDULER_LOAD_AWARE',
        severity: 'info',
        title: `${ctx.to} mode cannot express the IPVS scheduler(s) ${names}: selection becomes random`,
        message: `These service ports use the ${names} scheduler, which weighs connections or locality; ${ctx.to} mode picks an endpoint at random. (Per-node scheduler state never balanced across nodes anyway.)`,
        services: serviceNames(loadAware),
        addresses: [],
        evidence: serviceEvidence(loadAware),
        action: 'Nothing to configure; watch endpoint load after the switch.',
        docs: DOCS.virtualIps,
      }),
    )
  }
  return out
}

/** kube-proxy sets every real server's weight to 1; any other weight was set by hand and has no equivalent (caveat 7). */
export const weights: Check = (ctx) => {
  if (!leavingIpvs(ctx)) return []
  const weighted = ctx.state.services.filter((sp) =>
    active(sp).some((e) => e.weight !== null && e.weight !== 1),
  )
  if (weighted.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_IPVS_WEIGHTS',
      severity: 'warning',
      title: `${ctx.to} mode cannot express IPVS real-server weights`,
      message: `These real servers have weights other than kube-proxy's 1, set outside kube-proxy; ${ctx.to} mode gives every endpoint the same share.`,
      services: serviceNames(weighted),
      addresses: weighted.flatMap((sp) =>
        active(sp)
          .filter((e) => e.weight !== null && e.weight !== 1)
          .map((e) => `${hostPort(e)} weight ${e.weight}`),
      ),
      evidence: serviceEvidence(weighted),
      action:
        'Scale the backing workloads instead of weighting real servers; kube-proxy would reset the weights on its next sync anyway.',
      docs: DOCS.virtualIps,
    }),
  ]
}

/**
 * Caveat 8: IPVS keeps a persistence template per virtual server (ClusterIP, each NodePort
 * address, each external IP separately) that outlives the last connection by at least ~2
 * minutes; iptables and nftables keep one client-IP set per service port, timed from the last
 * new connection.
 */
export const sessionAffinity: Check = (ctx) => {
  if (!leavingIpvs(ctx) && !enteringIpvs(ctx)) return []
  const sticky = ctx.state.services.filter((sp) => sp.sessionAffinity !== null)
  if (sticky.length === 0) return []
  const short = sticky.filter(
    (sp) =>
      sp.sessionAffinity?.timeoutSeconds !== null &&
      (sp.sessionAffinity?.timeoutSeconds ?? 0) < 120,
  )
  return [
    finding({
      id: 'MIGRATE_SESSION_AFFINITY_SCOPE',
      severity: short.length > 0 ? 'warning' : 'info',
      title: 'Session affinity changes scope and timing',
      message:
        'IPVS keeps a separate persistence template for the ClusterIP, each NodePort address and each external IP, and a template lives while any connection (TIME_WAIT included) exists; iptables and nftables keep one client-IP entry per service port, shared by all entry points, timed from the last new connection.' +
        (short.length > 0
          ? ` ${short.length} service port(s) have a timeout under 120 s, where the difference shows most.`
          : ''),
      services: serviceNames(sticky),
      addresses: [],
      evidence: serviceEvidence(sticky),
      action:
        'Verify these Services with clients that use several entry points or reconnect after short pauses.',
      docs: DOCS.affinityTemplates,
    }),
  ]
}

const ARP_IGNORE = 'net.ipv4.conf.all.arp_ignore'
const ARP_ANNOUNCE = 'net.ipv4.conf.all.arp_announce'

function vipAddresses(ctx: MigrationContext): {all: string[]; external: string[]} {
  const all = new Set<string>()
  const external = new Set<string>()
  for (const sp of ctx.state.services) {
    for (const f of sp.frontends) {
      if (f.ip === null || f.type === 'NodePort') continue
      all.add(f.ip)
      if (isExternal(f)) external.add(f.ip)
    }
  }
  return {all: [...all], external: [...external]}
}

/** Caveats 9 and 14: VIPs bound to kube-ipvs0 are local addresses (ping, ARP, host sockets); strictARP's sysctls outlive IPVS. */
export const vipsLocal: Check = (ctx) => {
  if (!leavingIpvs(ctx) && !enteringIpvs(ctx)) return []
  const {all, external} = vipAddresses(ctx)
  if (all.length === 0) return []
  const arpIgnore = sysctl(ctx, ARP_IGNORE)
  const arpAnnounce = sysctl(ctx, ARP_ANNOUNCE)
  const strictArp =
    arpIgnore === null || arpAnnounce === null ? null : arpIgnore === '1' && arpAnnounce === '2'
  if (leavingIpvs(ctx)) {
    const arpNote =
      strictArp === null
        ? 'The input does not show the ARP sysctls (strictARP).'
        : strictArp
          ? `strictARP is on (${ARP_IGNORE}=1, ${ARP_ANNOUNCE}=2); kube-proxy does not reset these sysctls after the switch.`
          : 'strictARP is off, so today every node answers ARP for these external addresses.'
    return [
      finding({
        id: 'MIGRATE_IPVS_VIPS_NOT_LOCAL',
        severity: external.length > 0 ? 'warning' : 'info',
        title: 'Service IPs stop being local addresses of the node',
        message: `In IPVS mode every ClusterIP, externalIP and LoadBalancer IP is bound to kube-ipvs0, so they answer ping and ARP and behave like local IPs on the node. In ${ctx.to} mode they are only DNAT targets: no ping reply, no ARP, and nothing on the host can bind them. ${arpNote}`,
        services: [],
        addresses: all,
        evidence: [],
        action:
          'Monitoring that pings service IPs will fail. With MetalLB L2 the duplicate-ARP problem goes away and strictARP can be dropped (decide whether to keep the ARP sysctls). Move host daemons off service IPs.',
        docs: DOCS.metallbStrictArp,
      }),
    ]
  }
  return [
    finding({
      id: 'MIGRATE_VIPS_BECOME_LOCAL',
      severity: external.length > 0 ? 'warning' : 'info',
      title: 'Service IPs become local addresses of every node (kube-ipvs0)',
      message:
        'IPVS mode binds every ClusterIP, externalIP and LoadBalancer IP to the kube-ipvs0 dummy interface: they answer ping, and without strictARP every node answers ARP for the external and LoadBalancer IPs.' +
        (external.length > 0
          ? ` ${external.length} external/LoadBalancer address(es) are affected.`
          : ''),
      services: [],
      addresses: all,
      evidence: [],
      action:
        'Set ipvs.strictARP: true if MetalLB L2 or another ARP-based load balancer announces these addresses.',
      docs: DOCS.metallbStrictArp,
    }),
  ]
}

/** Caveat 10: IPVS delivered (before PR #108460: any; after: no new) connections to host sockets on VIPs for non-service ports. */
export const vipOtherPorts: Check = (ctx) => {
  if (!leavingIpvs(ctx) || ctx.state.services.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_IPVS_VIP_OTHER_PORTS',
      severity: 'info',
      title: 'Non-service ports on service IPs no longer reach the host',
      message:
        'kube-ipvs0 makes service IPs local, so host sockets listening on 0.0.0.0 were reachable through them (on any port before kube-proxy added KUBE-IPVS-FILTER in 2022). After the switch only the service ports are proxied.',
      services: [],
      addresses: [],
      evidence: [],
      action:
        'Make sure nothing reaches host daemons through a service IP on a non-service port (for example hostNetwork daemons addressed by ClusterIP).',
      docs: DOCS.vipAllPorts,
    }),
  ]
}

/**
 * Caveat 12: with a Local traffic policy and no local endpoint, IPVS falls back to the cluster
 * endpoints (PR #97081); iptables and nftables drop. Plain ClusterIP services with
 * internalTrafficPolicy=Local are not affected: IPVS has no real servers for them either.
 */
export const localPolicyFallback: Check = (ctx) => {
  if (leavingIpvs(ctx)) return leavingIpvsFallback(ctx)
  if (!enteringIpvs(ctx)) return []
  // In iptables and nftables states, `drop` on a frontend is exactly the Local-policy drop.
  const dropping = ctx.state.services.filter((sp) => sp.frontends.some((f) => f.action === 'drop'))
  if (dropping.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_LOCAL_POLICY_FALLBACK_ADDED',
      severity: 'warning',
      title: 'Local traffic policies without a local endpoint start forwarding to other nodes',
      message:
        'Today these frontends drop new connections because the traffic policy is Local and this node has no local endpoint. IPVS mode falls back to the cluster endpoints instead, so traffic is forwarded (and for externalTrafficPolicy: Local, source-NATed) to other nodes.',
      services: serviceNames(dropping),
      addresses: dropping.flatMap((sp) =>
        sp.frontends.filter((f) => f.action === 'drop').map(frontendAddress),
      ),
      evidence: serviceEvidence(dropping),
      action:
        'Check that clients and load balancers do not rely on the drop (for example health checks that take the node out of rotation).',
      docs: DOCS.localFallback,
    }),
  ]
}

function leavingIpvsFallback(ctx: MigrationContext): ReturnType<Check> {
  const affected: ServicePort[] = []
  const affectedAddresses: string[] = []
  const unknown: ServicePort[] = []
  for (const sp of ctx.state.services) {
    if (!externallyAccessible(sp)) continue
    const eps = active(sp)
    if (eps.length === 0) continue // rejected in every mode
    const etp = sp.externalTrafficPolicy
    const itp = sp.internalTrafficPolicy
    if (etp !== 'Local' && itp !== 'Local') {
      if (etp === null || itp === null) unknown.push(sp)
      continue
    }
    if (eps.some((e) => e.local === true)) continue
    if (eps.some((e) => e.local === null)) {
      unknown.push(sp)
      continue
    }
    affected.push(sp)
    for (const f of sp.frontends) {
      const external = f.type !== 'ClusterIP'
      if ((external && etp === 'Local') || (!external && itp === 'Local'))
        affectedAddresses.push(frontendAddress(f))
    }
  }
  const out = []
  if (affected.length > 0) {
    out.push(
      finding({
        id: 'MIGRATE_IPVS_LOCAL_FALLBACK',
        severity: 'error',
        title: `Local traffic policies without a local endpoint start dropping in ${ctx.to} mode`,
        message: `This node has no local endpoint for these service ports, whose traffic policy is Local. IPVS falls back to the cluster endpoints today; ${ctx.to} mode drops instead: external traffic (externalTrafficPolicy: Local) and ClusterIP traffic from this node's pods (internalTrafficPolicy: Local) get no answer.`,
        services: serviceNames(affected),
        addresses: affectedAddresses,
        evidence: serviceEvidence(affected),
        action:
          'For externalTrafficPolicy: Local, make sure the load balancer relies on healthCheckNodePort; for internalTrafficPolicy: Local, run an endpoint on this node or use Cluster.',
        docs: DOCS.trafficPolicies,
      }),
    )
  }
  if (unknown.length > 0) {
    out.push(
      finding({
        id: 'MIGRATE_IPVS_LOCAL_FALLBACK_UNVERIFIED',
        severity: 'warning',
        title:
          'Cannot verify traffic policies and endpoint locality for externally reachable service ports',
        message: `IPVS falls back to cluster endpoints when a Local traffic policy has no local endpoint; ${ctx.to} mode drops. The input does not show the traffic policy or which endpoints run on this node for these service ports.`,
        services: serviceNames(unknown),
        addresses: [],
        evidence: serviceEvidence(unknown),
        action:
          'Give kp the cluster objects: `--cluster svc-and-slices.yaml --node NODE` (kubectl get svc,endpointslices -A -o yaml).',
        docs: DOCS.trafficPolicies,
      }),
    )
  }
  return out
}

/** Caveat 13: weight-0 real servers are draining; the new mode removes endpoints at once and lets conntrack finish flows. */
export const draining: Check = (ctx) => {
  if (!leavingIpvs(ctx)) return []
  const sps = ctx.state.services.filter((sp) =>
    sp.endpoints.some((e) => e.state === 'draining' || e.weight === 0),
  )
  if (sps.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_IPVS_DRAINING',
      severity: 'info',
      title: 'Real servers are draining at weight 0',
      message: `IPVS keeps terminated TCP real servers at weight 0 until their connections end; ${ctx.to} mode removes the endpoint at once and lets existing flows finish through conntrack. A weight-0 real server that stays for a Ready endpoint is a known IPVS restart bug.`,
      services: serviceNames(sps),
      addresses: sps.flatMap((sp) =>
        sp.endpoints.filter((e) => e.state === 'draining' || e.weight === 0).map(hostPort),
      ),
      evidence: serviceEvidence(sps),
      action:
        'Nothing to do; compare with the EndpointSlices if a weight-0 real server belongs to a Ready endpoint.',
      docs: DOCS.gracefulTermination,
    }),
  ]
}

/** Caveat 14: the ipvs.* configuration fields and the IPVS sysctls mean nothing in another mode. */
export const ipvsConfig: Check = (ctx) => {
  if (!leavingIpvs(ctx)) return []
  const set = [
    'net.ipv4.vs.conntrack',
    'net.ipv4.vs.conn_reuse_mode',
    'net.ipv4.vs.expire_nodest_conn',
    ARP_IGNORE,
    ARP_ANNOUNCE,
  ]
    .map((name) => [name, sysctl(ctx, name)] as const)
    .filter(([, v]) => v !== null)
    .map(([name, v]) => `${name}=${v}`)
  // The ipvs.* fields the configuration given (--kube-proxy-config) sets, where it sets them.
  const c = ctx.config
  const fields = c
    ? (
        [
          ['ipvs.scheduler', 'ipvsScheduler', c.ipvsScheduler],
          ['ipvs.strictARP', 'ipvsStrictARP', c.ipvsStrictARP],
          ['ipvs.excludeCIDRs', 'ipvsExcludeCIDRs', c.ipvsExcludeCIDRs?.join(',') ?? null],
        ] as const
      ).filter(([, , v]) => v !== null)
    : []
  for (const [name, , v] of fields) set.push(`${name}=${String(v)}`)
  return [
    finding({
      id: 'MIGRATE_IPVS_CONFIG',
      severity: 'info',
      title: 'IPVS-only configuration becomes meaningless',
      message:
        'The ipvs.* fields of the kube-proxy configuration (scheduler, syncPeriod, minSyncPeriod, excludeCIDRs, strictARP, tcpTimeout, tcpFinTimeout, udpTimeout) do nothing in another mode, and the sysctls IPVS mode set stay set.' +
        (set.length > 0
          ? ` On this node: ${set.join(', ')}.`
          : ' The input does not show the configuration or the sysctls.'),
      services: [],
      addresses: [],
      evidence: fields.flatMap(([, field]) => (c?.at[field] ? [c.at[field]] : [])),
      action:
        'Remove the ipvs.* fields from the kube-proxy ConfigMap; decide whether to keep arp_ignore/arp_announce (they may help MetalLB L2, otherwise harmless).',
      docs: DOCS.kubeProxyConfig,
    }),
  ]
}

/**
 * kubernetes #89923: the virtual servers of one service port disagree (a NodePort address with a
 * real server fewer or more than the ClusterIP). Every target mode, IPVS too (kube-proxy's own
 * sync, and kp's rendering), programs one endpoint set per service port, so the disagreement
 * does not survive the switch: what each frontend reaches changes, and a real server only some
 * frontends have is rendered for all. Both lists are given: after the switch they are gone.
 */
export const frontendsDisagree: Check = (ctx) => {
  const sps = ctx.state.services.filter(anyOwnEndpoints)
  if (sps.length === 0) return []
  const listed = (eps: Endpoint[]) =>
    eps.length === 0 ? '(none)' : eps.map(endpointAddress).join(', ')
  const addresses = sps.flatMap((sp) =>
    sp.frontends.flatMap((fe) => {
      const own = ownEndpoints(sp, fe)
      return own === null
        ? []
        : [
            `${fe.type} ${frontendAddress(fe)} has ${listed(own.endpoints)} (${ownEndpointsDifference(own)}); the service port has ${listed(sp.endpoints)}`,
          ]
    }),
  )
  const extra = sps.some((sp) =>
    sp.frontends.some((fe) => (ownEndpoints(sp, fe)?.extra.length ?? 0) > 0),
  )
  const how =
    ctx.to === 'ipvs'
      ? 'The rendered IPVS rules, like kube-proxy when it next syncs the service, give every virtual server of a service port the same real servers'
      : `${ctx.to} mode programs one endpoint set per service port`
  return [
    finding({
      id: 'MIGRATE_IPVS_FRONTENDS_DISAGREE',
      severity: 'warning',
      title: `IPVS frontends of one service port have different real servers; ${ctx.to} mode gives them one set`,
      message:
        `The virtual servers of these service ports do not have the same real servers (kubernetes #89923, e.g. the NodePort on 127.0.0.1 with a real server fewer), which kube-proxy never intends. ${how}, so after the switch every frontend reaches the service port's endpoints: the symptom goes away, and so does the evidence.` +
        (extra
          ? ' Some frontends have real servers the others lack; the service port lists them, so they are rendered for every frontend: check them against the EndpointSlices, they may be stale.'
          : ''),
      services: serviceNames(sps),
      addresses,
      evidence: serviceEvidence(sps),
      action:
        'Compare both endpoint lists with the EndpointSlices (`kp diff` with --cluster) and keep `kp list -o wide` of this node for the record before switching.',
      docs: DOCS.frontendsDisagree,
    }),
  ]
}

/** Caveat 16: per-family state moves (KUBE-6-* ipsets and ip6tables rules to `table ip6 kube-proxy`). */
export const dualStack: Check = (ctx) => {
  if (!leavingIpvs(ctx)) return []
  const v6 = ctx.state.services.filter((sp) => sp.family === 'IPv6')
  if (v6.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_IPVS_DUAL_STACK',
      severity: 'info',
      title: 'IPv6 service ports move too',
      message: `IPVS keeps the IPv6 side in KUBE-6-* ipsets and ip6tables rules; ${ctx.to === 'nftables' ? 'nftables mode uses a separate `table ip6 kube-proxy`' : 'iptables mode uses ip6tables'}. Check both families after the switch.`,
      services: serviceNames(v6),
      addresses: [],
      evidence: serviceEvidence(v6),
      action: `Verify IPv6 services after the switch (for example \`kp diff\` of the IPv6 state before and after).`,
      docs: DOCS.virtualIps,
    }),
  ]
}

export const ipvsBehaviourChecks: Check[] = [
  schedulers,
  weights,
  sessionAffinity,
  vipsLocal,
  vipOtherPorts,
  localPolicyFallback,
  draining,
  frontendsDisagree,
  ipvsConfig,
  dualStack,
]
