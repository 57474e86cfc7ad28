/**
 * NodePort caveats (docs/ipvs-layouts.md (d) caveats 2, 3 and 4): which node addresses accept
 * NodePorts, NodePorts on 127.0.0.1, and the host firewall that iptables mode used to open.
 */
import type {Finding} from '../findings.js'
import type {ServicePort} from '../../model/types.js'
import {
  NFT_LOCALHOST_NODEPORTS_GATE,
  NFT_LOCALHOST_NODEPORTS_SINCE,
} from '../../kube-proxy/releases.js'
import {versionAtLeast} from '../../kube-proxy/versions.js'
import {
  type Check,
  DOCS,
  type MigrationContext,
  finding,
  frontendAddress,
  from,
  isExternal,
  isNodePort,
  serviceEvidence,
  serviceNames,
  sysctl,
} from './context.js'

const withNodePorts = (ctx: MigrationContext): ServicePort[] =>
  ctx.state.services.filter((sp) => sp.frontends.some(isNodePort))

/** Caveat 2: nftables listens on the primary node IPs only, unless nodePortAddresses says otherwise. */
export const nodePortAddresses: Check = (ctx) => {
  const sps = withNodePorts(ctx)
  if (sps.length === 0 || ctx.from === null || ctx.from === ctx.to) return []
  // The operator already chose the target's nodePortAddresses: nothing to warn about.
  if (ctx.target.nodePortAddresses !== undefined && ctx.target.nodePortAddresses.length > 0)
    return []
  const configured = ctx.state.node.nodePortAddresses
  if (ctx.from === 'nftables') {
    return [
      finding({
        id: 'MIGRATE_NODEPORT_ADDRESSES_WIDEN',
        severity: 'info',
        title: `NodePorts may open on more node addresses in ${ctx.to} mode`,
        message: `nftables mode accepts NodePorts on the node's primary IPs by default; ${ctx.to} mode accepts them on every local address${ctx.to === 'ipvs' ? ' (except kube-ipvs0, loopback and IPv6 link-local)' : ''} unless nodePortAddresses is set.`,
        services: serviceNames(sps),
        addresses: [],
        evidence: serviceEvidence(sps),
        action:
          'Set nodePortAddresses in the kube-proxy configuration (for example `primary`) if NodePorts must stay on the primary IPs.',
        docs: DOCS.migrateToNftables,
      }),
    ]
  }
  if (ctx.to !== 'nftables') return []
  // iptables shows a configured nodePortAddresses as `-d NODEIP -j KUBE-NODEPORTS` rules, so a
  // non-empty list there is the configuration, which nftables mode honours too. IPVS has one
  // NodePort virtual server per address it listens on (the reader lists them in
  // node.nodePortAddresses, or as the frontends' IPs): what it serves today, configured or not.
  if (ctx.from === 'iptables' && configured !== null && configured.length > 0) return []
  const listenIps = [
    ...new Set([
      ...sps.flatMap((sp) =>
        sp.frontends.filter((f) => isNodePort(f) && f.ip !== null).map((f) => f.ip!),
      ),
      ...(ctx.from === 'ipvs' ? (configured ?? []) : []),
    ]),
  ]
  const known = configured !== null || listenIps.length > 0
  return [
    finding({
      id: known ? 'MIGRATE_NODEPORT_ADDRESSES' : 'MIGRATE_NODEPORT_ADDRESSES_UNVERIFIED',
      severity: 'warning',
      title: known
        ? 'NodePorts on non-primary node addresses stop working in nftables mode'
        : 'Cannot verify which node addresses NodePorts are used on',
      message:
        `${ctx.from} mode accepts NodePorts on every local address; nftables mode defaults to \`--nodeport-addresses primary\`, the node's primary IPv4 and/or IPv6 address only. ` +
        (listenIps.length > 0
          ? `Today NodePorts listen on ${listenIps.join(', ')}; unless nodePortAddresses is set in the kube-proxy configuration, those that are not the node's primary (InternalIP) address stop accepting them.`
          : known
            ? 'Secondary NIC addresses, docker0 and keepalived VIPs stop accepting NodePorts.'
            : 'The input does not show whether nodePortAddresses is set.'),
      services: serviceNames(sps),
      addresses: listenIps,
      evidence: serviceEvidence(sps),
      action: known
        ? "Set nodePortAddresses (for example `0.0.0.0/0`) to keep today's behaviour, or point the clients at the primary IP."
        : 'Check nodePortAddresses in the kube-proxy ConfigMap and list the node addresses (`ip -o addr`); set nodePortAddresses if clients use non-primary IPs.',
      docs: DOCS.migrateToNftables,
    }),
  ]
}

const ROUTE_LOCALNET = 'net.ipv4.conf.all.route_localnet'

/** Caveat 3: iptables mode serves IPv4 NodePorts on 127.0.0.1 by default; nftables and ipvs do not. */
export const localhostNodePorts: Check = (ctx) => {
  if (ctx.from === null || ctx.from === ctx.to) return []
  const sps = withNodePorts(ctx).filter((sp) => sp.family === 'IPv4')
  if (sps.length === 0) return []
  const names = serviceNames(sps)
  const ports = [
    ...new Set(
      sps.flatMap((sp) => sp.frontends.filter(isNodePort).map((f) => `127.0.0.1:${f.port ?? '?'}`)),
    ),
  ]
  const docs = DOCS.virtualIps

  if (ctx.from === 'iptables') {
    // The rules say it; else the configuration given (--kube-proxy-config) does.
    const enabled = ctx.state.node.localhostNodePorts ?? ctx.config?.localhostNodePorts ?? null
    const routeLocalnet = sysctl(ctx, ROUTE_LOCALNET)
    if (enabled === false || (enabled === null && routeLocalnet === '0')) return []
    if (enabled === null && routeLocalnet === null) {
      return [
        finding({
          id: 'MIGRATE_LOCALHOST_NODEPORTS_UNVERIFIED',
          severity: 'info',
          title: 'Cannot verify whether NodePorts are used on 127.0.0.1',
          message: `iptables mode serves IPv4 NodePorts on localhost by default (iptables.localhostNodePorts); ${ctx.to} mode does not. The input shows neither the rules nor the ${ROUTE_LOCALNET} sysctl that say whether it is on.`,
          services: names,
          addresses: ports,
          evidence: serviceEvidence(sps),
          action: `Check iptables.localhostNodePorts in the kube-proxy config, \`sysctl ${ROUTE_LOCALNET}\`, and the kubeproxy_iptables_localhost_nodeports_accepted_packets_total metric.`,
          docs,
        }),
      ]
    }
    const why =
      enabled === true
        ? 'the iptables rules accept NodePorts on localhost'
        : `${ROUTE_LOCALNET}=1 on this node (kube-proxy sets it for localhost NodePorts)`
    const nft = nftLocalhostNodePorts(ctx)
    return [
      finding({
        id: 'MIGRATE_LOCALHOST_NODEPORTS',
        severity: nft === 'tcp' ? 'info' : 'warning',
        title:
          nft === 'tcp'
            ? 'localhost:<nodePort> keeps working for TCP only in nftables mode'
            : `localhost:<nodePort> stops working in ${ctx.to} mode`,
        message: `Today ${why}. ${nftLocalhostMessage(ctx, nft)}`,
        services: names,
        addresses: ports,
        evidence: serviceEvidence(sps),
        action: `Point such clients at the node IP or the ClusterIP${nft === 'available' ? `, or (TCP only) enable the alpha gate ${NFT_LOCALHOST_NODEPORTS_GATE} with \`localhost\` in nodePortAddresses` : ''}. The kubeproxy_iptables_localhost_nodeports_accepted_packets_total metric shows whether anything uses them.`,
        docs: nft === null ? docs : DOCS.localhostNodePortsNft,
      }),
    ]
  }

  if (ctx.to === 'iptables') {
    if (ctx.target.localhostNodePorts === false) return []
    return [
      finding({
        id: 'MIGRATE_LOCALHOST_NODEPORTS_ENABLED',
        severity: 'info',
        title: 'iptables mode opens IPv4 NodePorts on 127.0.0.1',
        message:
          'iptables mode serves IPv4 NodePorts on localhost by default and sets net.ipv4.conf.all.route_localnet=1 for it; today they are not served there.',
        services: names,
        addresses: ports,
        evidence: serviceEvidence(sps),
        action:
          'Set iptables.localhostNodePorts: false in the kube-proxy config to keep NodePorts off localhost.',
        docs,
      }),
    ]
  }

  // Old IPVS kube-proxy did bind NodePorts on 127.0.0.1 (kubernetes issue 89923): a real regression.
  if (ctx.from === 'ipvs' && ctx.to === 'nftables') {
    // The reader puts NodePort listen addresses in node.nodePortAddresses (one 127.0.0.1 virtual
    // server means every NodePort has one) or, per service, in the frontends' IPs.
    const allOnLoopback = ctx.state.node.nodePortAddresses?.includes('127.0.0.1') ?? false
    const loopback = sps.filter(
      (sp) => allOnLoopback || sp.frontends.some((f) => isNodePort(f) && f.ip === '127.0.0.1'),
    )
    if (loopback.length === 0) return []
    return [
      finding({
        id: 'MIGRATE_LOCALHOST_NODEPORTS',
        severity: 'warning',
        title: 'localhost:<nodePort> stops working in nftables mode',
        message:
          'This (older) IPVS kube-proxy has NodePort virtual servers on 127.0.0.1; nftables mode never serves NodePorts on localhost.',
        services: serviceNames(loopback),
        addresses: loopback.flatMap((sp) =>
          sp.frontends
            .filter((f) => isNodePort(f) && (allOnLoopback || f.ip === '127.0.0.1'))
            .map((f) => frontendAddress({...f, ip: '127.0.0.1'})),
        ),
        evidence: serviceEvidence(loopback),
        action: 'Point such clients at the node IP or the ClusterIP.',
        docs,
      }),
    ]
  }
  return []
}

/**
 * Localhost NodePorts in nftables mode since 1.37 (PR #138427): 'tcp' when the configuration
 * turns them on (the alpha gate and `localhost` or `all` in nodePortAddresses), 'available' when
 * the target release could, null when it cannot (an older release, or not nftables).
 */
function nftLocalhostNodePorts(ctx: MigrationContext): 'tcp' | 'available' | null {
  if (ctx.to !== 'nftables' || !versionAtLeast(ctx.kubeProxyVersion, NFT_LOCALHOST_NODEPORTS_SINCE))
    return null
  const addresses = ctx.target.nodePortAddresses ?? ctx.config?.nodePortAddresses ?? []
  const gate = ctx.config?.featureGates[NFT_LOCALHOST_NODEPORTS_GATE] === true
  return gate && addresses.some((a) => a === 'localhost' || a === 'all') ? 'tcp' : 'available'
}

function nftLocalhostMessage(
  ctx: MigrationContext,
  nft: ReturnType<typeof nftLocalhostNodePorts>,
): string {
  if (nft === null)
    return `${ctx.to} mode${ctx.to === 'nftables' ? ` in kube-proxy ${ctx.kubeProxyVersion}` : ''} never serves NodePorts on 127.0.0.1, so local clients that use localhost:<nodePort> break.`
  const limits = `a userspace proxy serves TCP only; UDP and SCTP localhost NodePorts are rejected and counted, and after a restart with new nodePortAddresses the proxy does not start (kubernetes #142183)`
  return nft === 'tcp'
    ? `The configuration turns on ${NFT_LOCALHOST_NODEPORTS_GATE} with localhost NodePorts: ${limits}.`
    : `nftables kube-proxy ${ctx.kubeProxyVersion} serves them only with the alpha gate ${NFT_LOCALHOST_NODEPORTS_GATE} and \`localhost\` in nodePortAddresses, and then ${limits}. Without it local clients that use localhost:<nodePort> break.`
}

/**
 * Caveat 4: iptables mode adds filter ACCEPT rules for NodePort and marked traffic; nftables
 * adds none, and its accepts cannot override a DROP elsewhere. kp sees the host firewall only as
 * foreign rules, so what it cannot see is "cannot verify".
 */
export const hostFirewall: Check = (ctx) => {
  if (ctx.to !== 'nftables' || !from(ctx, 'iptables', 'ipvs')) return []
  const sps = ctx.state.services.filter(
    (sp) => sp.frontends.some(isNodePort) || sp.healthCheckNodePort !== null,
  )
  if (sps.length === 0) return []
  const dropping = ctx.state.foreign.filter((f) =>
    /\b(DROP|REJECT)\b|policy drop/i.test(`${f.name} ${f.reason}`),
  )
  const healthPorts = [
    ...new Set(
      sps.flatMap((sp) => (sp.healthCheckNodePort === null ? [] : [sp.healthCheckNodePort])),
    ),
  ].sort((a, b) => a - b)
  // What has to get through: the NodePorts themselves (as listened on), then the health-check ports.
  const nodePortFrontends = sps.flatMap((sp) => sp.frontends.filter(isNodePort))
  const nodePorts = [
    ...new Set(nodePortFrontends.flatMap((f) => (f.port === null ? [] : [f.port]))),
  ].sort((a, b) => a - b)
  const inUse =
    nodePorts.length === 0
      ? ''
      : `; in use here: ${nodePorts.length === 1 ? nodePorts[0] : `${nodePorts[0]}-${nodePorts[nodePorts.length - 1]}`}`
  const pathChange =
    ctx.from === 'ipvs'
      ? ' Service traffic that IPVS handled in INPUT now goes through the filter FORWARD chain, so a FORWARD policy of DROP (Docker sets one) can block it.'
      : ''
  const finding_: Finding = finding({
    id: dropping.length > 0 ? 'MIGRATE_HOST_FIREWALL' : 'MIGRATE_HOST_FIREWALL_UNVERIFIED',
    severity: 'warning',
    title:
      dropping.length > 0
        ? 'Host firewall rules may block NodePorts once kube-proxy stops opening them'
        : 'Cannot verify that the host firewall lets NodePorts through',
    message:
      `${ctx.from} mode adds ACCEPT rules for NodePort and health-check traffic in case a host firewall would block it; nftables mode adds none, and its accepts cannot override a DROP in another table.${pathChange}` +
      (dropping.length > 0
        ? ` The input has ${dropping.length} non-kube-proxy rule(s) that drop or reject traffic.`
        : ' The input does not show the host firewall.'),
    services: serviceNames(sps),
    addresses: [
      ...new Set([...nodePortFrontends.map(frontendAddress), ...healthPorts.map((p) => `*:${p}`)]),
    ],
    evidence: [...dropping.flatMap((f) => (f.source ? [f.source] : [])), ...serviceEvidence(sps)],
    action: `Allow the NodePort range (default 30000-32767${inUse})${healthPorts.length > 0 ? ` and the healthCheckNodePorts ${healthPorts.join(', ')}` : ''} in the host firewall, and check the INPUT and FORWARD policies (\`iptables-save\`, \`nft list ruleset\`).`,
    docs: DOCS.migrateToNftables,
  })
  return [finding_]
}

/**
 * Old iptables layouts (≈1.7-1.10) leave connections from the node itself to an externalIP
 * un-NATed (`-m addrtype ! --src-type LOCAL`, docs/kube-proxy-layouts.md §2.7); every layout kp
 * renders DNATs them like any other client's.
 */
export const nodeToExternalIps: Check = (ctx) => {
  const sps = ctx.state.services.filter((sp) => sp.frontends.some((f) => f.nodeSourceExcluded))
  if (sps.length === 0) return []
  const frontends = sps.flatMap((sp) => sp.frontends.filter((f) => f.nodeSourceExcluded))
  return [
    finding({
      id: 'MIGRATE_NODE_TO_EXTERNAL_IPS',
      severity: 'warning',
      title: 'Connections from the node itself to externalIPs will be DNATed to the endpoints',
      message: `Today's rules come from an old kube-proxy layout that leaves connections from the node itself to these externalIPs untouched (\`-m addrtype ! --src-type LOCAL\`): a process on the node reaches whatever really holds the address. In ${ctx.to} mode kube-proxy sends them to the service's endpoints like any other client's.`,
      services: serviceNames(sps),
      addresses: frontends.map(frontendAddress),
      evidence: serviceEvidence(sps),
      action:
        'Check what processes on the node expect at these addresses (a host service, a load balancer VIP); point them at the real host address, or accept that they reach the Service.',
      docs: DOCS.virtualIps,
    }),
  ]
}

/**
 * KUBE-XLB before ≈1.15 has no "route LOCAL traffic" rule (ServicePort.externalFromNode
 * 'policy'): the node's own connection to an externalTrafficPolicy=Local NodePort or external
 * address gets this node's endpoints only, or is dropped. Every layout kp renders, and nftables
 * mode, short-circuit it to every endpoint.
 */
export const nodeToLocalServiceAllEndpoints: Check = (ctx) => {
  if (ctx.to === 'ipvs') return []
  const sps = ctx.state.services.filter((sp) => sp.externalFromNode === 'policy')
  if (sps.length === 0) return []
  const frontends = sps.flatMap((sp) => sp.frontends.filter((f) => isNodePort(f) || isExternal(f)))
  return [
    finding({
      id: 'MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS',
      severity: 'info',
      title:
        "The node's own connections to externalTrafficPolicy=Local services will reach every endpoint",
      message: `Today's rules come from an old kube-proxy layout (KUBE-XLB without the "route LOCAL traffic" rule, before ≈1.15): a connection from the node itself (127.0.0.1 included) to these NodePorts and external addresses reaches only this node's endpoints, and is dropped when it has none. In ${ctx.to} mode kube-proxy sends it to every endpoint of the service, masqueraded.`,
      services: serviceNames(sps),
      // The node reaches a NodePort on any of its addresses; 127.0.0.1 is the one kp verify probes.
      addresses: frontends.map((f) =>
        isNodePort(f) && f.ip === null
          ? frontendAddress({...f, ip: '127.0.0.1'})
          : frontendAddress(f),
      ),
      evidence: serviceEvidence(sps),
      action:
        'Check processes on the node that rely on reaching a local endpoint only (or on the drop when there is none), for example node-local agents behind such a service.',
      docs: DOCS.trafficPolicies,
    }),
  ]
}

export const nodePortChecks: Check[] = [
  nodePortAddresses,
  localhostNodePorts,
  hostFirewall,
  nodeToExternalIps,
  nodeToLocalServiceAllEndpoints,
]
