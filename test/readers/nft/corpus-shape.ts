/**
 * Turns a ProxyState into the corpus `*.expect.json` shape (fixtures/PROVENANCE.md), so
 * conformance tests compare kp's model with kube-proxy's hand-derived expectations.
 * nftables cannot tell externalIPs from LoadBalancer IPs, so both sides are compared as their
 * union (`external`), as fixtures/PROVENANCE.md prescribes; "Cluster" in the corpus means
 * "default or not observable", which the model writes as null.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {ProxyState} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import type {FormatId} from '../../../src/readers/types.js'
import {ROOT} from '../../helpers/run-cli.js'

export interface CorpusService {
  namespace: string | null
  name: string | null
  port_name: string | null
  protocol: string
  cluster_ip: string | null
  port: number | null
  node_port: number | null
  external_ips: string[]
  load_balancer_ips: string[]
  session_affinity_seconds: number | null
  external_traffic_policy: string
  internal_traffic_policy: string
  endpoints: {ip: string; port: number | null; local: boolean | null}[]
}

export interface Comparable {
  key: string
  protocol: string
  cluster_ip: string | null
  port: number | null
  node_port: number | null
  external: string[]
  session_affinity_seconds: number | null
  external_traffic_policy: string
  internal_traffic_policy: string
  endpoints: {ip: string; port: number | null; local: boolean | null}[]
}

const byIpPort = (
  a: {ip: string; port: number | null},
  b: {ip: string; port: number | null},
): number => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : (a.port ?? 0) - (b.port ?? 0))

export function fromCorpus(list: CorpusService[], named = true): Comparable[] {
  return list
    .map((s) => ({
      key: named
        ? `${s.namespace}/${s.name}:${s.port_name}`
        : `${s.cluster_ip}:${s.port}/${s.protocol}`,
      protocol: s.protocol,
      cluster_ip: s.cluster_ip,
      port: s.port,
      node_port: s.node_port,
      external: [...s.external_ips, ...s.load_balancer_ips].sort(),
      session_affinity_seconds: s.session_affinity_seconds,
      external_traffic_policy: s.external_traffic_policy,
      internal_traffic_policy: s.internal_traffic_policy,
      endpoints: [...s.endpoints].sort(byIpPort),
    }))
    .sort((a, b) => (a.key < b.key ? -1 : 1))
}

export function fromState(state: ProxyState, named = true): Comparable[] {
  return state.services
    .map((s) => {
      const cip = s.frontends.find((f) => f.type === 'ClusterIP') ?? null
      return {
        key: named
          ? `${s.namespace}/${s.name}:${s.portName}`
          : `${cip?.ip}:${cip?.port}/${s.protocol}`,
        protocol: s.protocol,
        cluster_ip: cip?.ip ?? null,
        port: cip?.port ?? null,
        node_port: s.frontends.find((f) => f.type === 'NodePort')?.port ?? null,
        external: s.frontends
          .filter(
            (f) => f.type === 'External' || f.type === 'LoadBalancer' || f.type === 'ExternalIP',
          )
          .map((f) => f.ip!)
          .sort(),
        session_affinity_seconds: s.sessionAffinity?.timeoutSeconds ?? null,
        external_traffic_policy: s.externalTrafficPolicy ?? 'Cluster',
        internal_traffic_policy: s.internalTrafficPolicy ?? 'Cluster',
        endpoints: s.endpoints
          .map((e) => ({ip: e.ip!, port: e.port, local: e.local}))
          .sort(byIpPort),
      }
    })
    .sort((a, b) => (a.key < b.key ? -1 : 1))
}

export function fixturePath(...parts: string[]): string {
  return join(ROOT, 'fixtures', ...parts)
}

export function readFixture(...parts: string[]): string {
  return readFileSync(fixturePath(...parts), 'utf8')
}

export async function readFixtureState(parts: string[], format?: FormatId): Promise<ProxyState> {
  const path = join('fixtures', ...parts)
  return readState({sources: [{path, text: readFixture(...parts)}], format})
}

/** The model without positions, for comparing the same ruleset read from different forms. */
export function withoutPositions(state: ProxyState): unknown {
  return {
    mode: state.mode,
    node: state.node,
    services: state.services.map((s) => ({...s, rules: []})),
    foreign: state.foreign.map((f) => ({...f, source: null})),
    diagnostics: state.diagnostics.map((d) => ({severity: d.severity, code: d.code})),
  }
}
