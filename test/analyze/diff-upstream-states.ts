/**
 * Turns the hand-derived expectations of kube-proxy's own tests (corpus/upstream/*.expect.json,
 * conventions in that folder's README) into ProxyStates, so `kp diff` can be tested on the
 * upstream scenarios without depending on the readers. The saved fixtures in
 * fixtures/diff/upstream-overall/ are this function's output (checked in diff.test.ts).
 */
import {readFileSync} from 'node:fs'
import {emptyState, sortState} from '../../src/core/state.js'
import type {
  Frontend,
  FrontendAction,
  Mode,
  ProxyState,
  ServicePort,
} from '../../src/model/types.js'
import {ROOT} from '../helpers/run-cli.js'
import type {UpstreamExpectEntry} from '../helpers/upstream-expect.js'

export interface UpstreamExtras {
  /** Per `ns/name`: loadBalancerSourceRanges (README: "not captured in the JSON", listed per file). */
  sourceRanges?: Record<string, string[]>
  /** Per `ns/name`: healthCheckNodePort (README: visible only in iptables filter KUBE-NODEPORTS). */
  healthCheckNodePorts?: Record<string, number>
}

export function stateFromUpstreamExpect(
  expectPath: string,
  dumpName: string,
  mode: Mode,
  extras: UpstreamExtras = {},
): ProxyState {
  const items = JSON.parse(readFileSync(expectPath, 'utf8')) as UpstreamExpectEntry[]
  const state = emptyState(mode)
  state.sources.push({
    path: `corpus/upstream/${dumpName}`,
    format: mode === 'nftables' ? 'nft' : 'iptables-save',
    tool: null,
  })
  for (const e of items) {
    const key = `${e.namespace}/${e.name}`
    const externallyAccessible =
      e.node_port !== null || e.external_ips.length > 0 || e.load_balancer_ips.length > 0
    // README: an empty endpoint list means REJECT; ETP=Local with no local endpoint drops external traffic.
    const noLocal = !e.endpoints.some((ep) => ep.local === true)
    const internalAction: FrontendAction = e.endpoints.length === 0 ? 'reject' : 'forward'
    const externalAction: FrontendAction =
      e.endpoints.length === 0
        ? 'reject'
        : e.external_traffic_policy === 'Local' && noLocal
          ? 'drop'
          : 'forward'
    const ranges = extras.sourceRanges?.[key] ?? []
    const frontends: Frontend[] = [
      {type: 'ClusterIP', ip: e.cluster_ip, port: e.port, sourceRanges: [], action: internalAction},
    ]
    // README "nftables caveat": nftables cannot tell externalIPs from LB IPs; both are External there.
    for (const ip of e.external_ips)
      frontends.push({
        type: mode === 'nftables' ? 'External' : 'ExternalIP',
        ip,
        port: e.port,
        sourceRanges: [],
        action: externalAction,
      })
    for (const ip of e.load_balancer_ips)
      frontends.push({
        type: mode === 'nftables' ? 'External' : 'LoadBalancer',
        ip,
        port: e.port,
        sourceRanges: [...ranges],
        action: externalAction,
      })
    if (e.node_port !== null)
      frontends.push({
        type: 'NodePort',
        ip: null,
        port: e.node_port,
        sourceRanges: [],
        action: externalAction,
      })
    const sp: ServicePort = {
      namespace: e.namespace,
      name: e.name,
      portName: e.port_name,
      protocol: e.protocol,
      family: 'IPv4',
      frontends,
      healthCheckNodePort: extras.healthCheckNodePorts?.[key] ?? null,
      internalTrafficPolicy: e.internal_traffic_policy,
      // README: for ClusterIP-only services the external policy cannot be observed.
      externalTrafficPolicy: externallyAccessible ? e.external_traffic_policy : null,
      sessionAffinity:
        e.session_affinity_seconds === null
          ? null
          : {type: 'ClientIP', timeoutSeconds: e.session_affinity_seconds},
      scheduler: null,
      endpoints: e.endpoints.map((ep) => ({
        ip: ep.ip,
        port: ep.port,
        local: ep.local,
        share: 1 / e.endpoints.length,
        weight: null,
        state: null,
      })),
      rules: [],
    }
    state.services.push(sp)
  }
  return sortState(state)
}

// Verbatim copies of the upstream corpus (fixtures/render/upstream/PROVENANCE.md), kept in the repository.
const CORPUS = `${ROOT}fixtures/render/upstream`
const overallExtras: UpstreamExtras = {sourceRanges: {'ns5/svc5': ['203.0.113.0/25']}}

/** The three states of fixtures/diff/upstream-overall, by file name. */
export function upstreamOverallStates(corpus = CORPUS): Record<string, ProxyState> {
  const iptablesExtras = {...overallExtras, healthCheckNodePorts: {'ns2/svc2': 30000}}
  return {
    'iptables.state.json': stateFromUpstreamExpect(
      `${corpus}/iptables-overall.expect.json`,
      'iptables-overall.dump',
      'iptables',
      iptablesExtras,
    ),
    'iptables-older.state.json': stateFromUpstreamExpect(
      `${corpus}/iptables-multipleservices-older.expect.json`,
      'iptables-multipleservices-older.dump',
      'iptables',
      iptablesExtras,
    ),
    'nftables.state.json': stateFromUpstreamExpect(
      `${corpus}/nftables-overall.expect.json`,
      'nftables-overall.dump',
      'nftables',
      overallExtras,
    ),
  }
}
