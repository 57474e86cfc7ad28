/**
 * ProxyStates built by hand from the corpus `*.expect.json` files (hand-derived, machine-checked
 * expectations of kube-proxy's own test scenarios; fixtures/render/upstream/PROVENANCE.md), plus
 * what fixtures/PROVENANCE.md lists outside the JSON (loadBalancerSourceRanges, healthCheckNodePort)
 * and the test harness's node settings (pod CIDR 10.0.0.0/8, mark 0x4000, node IP 192.168.0.2).
 * These are the renderers' inputs for the fidelity tests, independent of the readers.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {emptyState, sortState} from '../../src/core/state.js'
import type {
  Endpoint,
  Frontend,
  Mode,
  NodeInfo,
  ProxyState,
  ServicePort,
} from '../../src/model/types.js'
import {ROOT} from '../helpers/run-cli.js'
import type {UpstreamExpectEntry} from '../helpers/upstream-expect.js'

export const UPSTREAM = join(ROOT, 'fixtures/render/upstream')

export function readExpect(caseName: string): UpstreamExpectEntry[] {
  return JSON.parse(
    readFileSync(join(UPSTREAM, `${caseName}.expect.json`), 'utf8'),
  ) as UpstreamExpectEntry[]
}

export function readDump(caseName: string): string {
  return readFileSync(join(UPSTREAM, `${caseName}.dump`), 'utf8')
}

export interface CorpusExtras {
  /** loadBalancerSourceRanges by `ns/name`, from fixtures/PROVENANCE.md. */
  sourceRanges?: Record<string, string[]>
  /** healthCheckNodePort by `ns/name`, from fixtures/PROVENANCE.md. */
  healthCheckNodePorts?: Record<string, number>
  node?: Partial<NodeInfo>
}

function toService(e: UpstreamExpectEntry, extras: CorpusExtras): ServicePort {
  const key = `${e.namespace}/${e.name}`
  const ranges = extras.sourceRanges?.[key] ?? []
  const hasEndpoints = e.endpoints.length > 0
  const hasLocal = e.endpoints.some((ep) => ep.local === true)
  const externalAction: Frontend['action'] = !hasEndpoints
    ? 'reject'
    : e.external_traffic_policy === 'Local' && !hasLocal
      ? 'drop'
      : 'forward'
  const frontends: Frontend[] = [
    {
      type: 'ClusterIP',
      ip: e.cluster_ip,
      port: e.port,
      sourceRanges: [],
      action: hasEndpoints ? 'forward' : 'reject',
    },
  ]
  for (const ip of e.external_ips)
    frontends.push({type: 'ExternalIP', ip, port: e.port, sourceRanges: [], action: externalAction})
  for (const ip of e.load_balancer_ips)
    frontends.push({
      type: 'LoadBalancer',
      ip,
      port: e.port,
      sourceRanges: ranges,
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
  const endpoints: Endpoint[] = e.endpoints.map((ep) => ({
    ip: ep.ip,
    port: ep.port,
    local: ep.local,
    share: null,
    weight: null,
    state: 'ready',
  }))
  return {
    namespace: e.namespace,
    name: e.name,
    portName: e.port_name,
    protocol: e.protocol,
    family: e.cluster_ip.includes(':') ? 'IPv6' : 'IPv4',
    frontends,
    healthCheckNodePort: extras.healthCheckNodePorts?.[key] ?? null,
    internalTrafficPolicy: e.internal_traffic_policy,
    externalTrafficPolicy: e.external_traffic_policy,
    sessionAffinity:
      e.session_affinity_seconds === null
        ? null
        : {type: 'ClientIP', timeoutSeconds: e.session_affinity_seconds},
    scheduler: null,
    endpoints,
    rules: [],
  }
}

/** The node settings of kube-proxy's unit-test harness (NewFakeProxier) in both modes. */
export const HARNESS_NODE: Partial<NodeInfo> = {
  podCIDRs: ['10.0.0.0/8'],
  localDetector: 'cidr',
  masqueradeMark: '0x4000',
  masqueradeAll: false,
  conntrackInvalidDrop: true,
}

export function stateFromExpect(
  caseName: string,
  mode: Mode,
  extras: CorpusExtras = {},
): ProxyState {
  const state = emptyState(mode)
  Object.assign(state.node, HARNESS_NODE, extras.node ?? {})
  state.services = readExpect(caseName).map((e) => toService(e, extras))
  return sortState(state)
}
