/** Hand-built states for the migration checks: each test states exactly what the input shows. */
import type {Finding} from '../../../src/analyze/findings.js'
import {type MigrationOptions, type ProxyMode, planMigration} from '../../../src/analyze/migrate.js'
import {emptyState} from '../../../src/core/state.js'
import type {Endpoint, Frontend, Mode, ProxyState, ServicePort} from '../../../src/model/types.js'

export function fe(
  type: Frontend['type'],
  ip: string | null,
  port: number | null,
  extra: Partial<Frontend> = {},
): Frontend {
  return {type, ip, port, sourceRanges: [], action: 'forward', ...extra}
}

export function ep(ip: string, port: number, extra: Partial<Endpoint> = {}): Endpoint {
  return {ip, port, local: null, share: null, weight: null, state: null, ...extra}
}

export function sp(name: string, extra: Partial<ServicePort> = {}): ServicePort {
  return {
    namespace: 'ns',
    name,
    portName: 'http',
    protocol: 'TCP',
    family: 'IPv4',
    frontends: [fe('ClusterIP', '10.96.0.10', 80)],
    healthCheckNodePort: null,
    internalTrafficPolicy: null,
    externalTrafficPolicy: null,
    sessionAffinity: null,
    scheduler: null,
    endpoints: [ep('10.244.1.5', 8080)],
    rules: [{path: 'dump.txt', line: 7}],
    ...extra,
  }
}

export function state(
  mode: Mode,
  services: ServicePort[] = [],
  node: Partial<ProxyState['node']> = {},
): ProxyState {
  const s = emptyState(mode)
  s.services = services
  Object.assign(s.node, node)
  return s
}

/** The findings of one id (the checks under test), so unrelated checks do not blur a test. */
export function plan(
  s: ProxyState,
  to: ProxyMode,
  id: string,
  opts: MigrationOptions = {},
): Finding[] {
  return planMigration(s, to, opts).filter((f) => f.id === id)
}

export function one(
  s: ProxyState,
  to: ProxyMode,
  id: string,
  opts: MigrationOptions = {},
): Finding {
  const found = plan(s, to, id, opts)
  if (found.length !== 1) throw new Error(`expected one ${id}, got ${found.length}`)
  return found[0]!
}
