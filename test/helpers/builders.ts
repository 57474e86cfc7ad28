/**
 * Model objects for tests, with plain defaults: one ClusterIP TCP/IPv4 service port ns1/svc1:p80
 * without endpoints, a forwarding frontend, a ready endpoint, an empty state. A test states what
 * it is about in the overrides; everything else is the default.
 */
import {emptyState} from '../../src/core/state.js'
import type {Endpoint, Frontend, Mode, ProxyState, ServicePort} from '../../src/model/types.js'

export function frontend(
  type: Frontend['type'],
  ip: string | null,
  port: number | null,
  over: Partial<Frontend> = {},
): Frontend {
  return {type, ip, port, sourceRanges: [], action: 'forward', ...over}
}

export function endpoint(
  ip: string,
  port: number | null = 80,
  over: Partial<Endpoint> = {},
): Endpoint {
  return {ip, port, local: null, share: null, weight: null, state: 'ready', ...over}
}

export function servicePort(over: Partial<ServicePort> = {}): ServicePort {
  return {
    namespace: 'ns1',
    name: 'svc1',
    portName: 'p80',
    protocol: 'TCP',
    family: 'IPv4',
    frontends: [frontend('ClusterIP', '172.30.0.41', 80)],
    healthCheckNodePort: null,
    internalTrafficPolicy: 'Cluster',
    externalTrafficPolicy: null,
    sessionAffinity: null,
    scheduler: null,
    endpoints: [],
    rules: [],
    ...over,
  }
}

/** An empty state of `mode` holding `services`, its node settings overridden by `node`. */
export function proxyState(
  mode: Mode,
  services: ServicePort[] = [],
  node: Partial<ProxyState['node']> = {},
): ProxyState {
  const s = emptyState(mode)
  Object.assign(s.node, node)
  s.services = services
  return s
}
