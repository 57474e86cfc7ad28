/** Shared helpers of the kube reader tests: read a fixture or inline YAML into a cluster state. */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {readState} from '../../../src/readers/read-state.js'
import type {Frontend, Mode, ProxyState, ServicePort} from '../../../src/model/types.js'
import {ROOT} from '../../helpers/run-cli.js'

export const FIXTURES = join(ROOT, 'fixtures', 'kube')

export function fixtureText(...parts: string[]): string {
  return readFileSync(join(FIXTURES, ...parts), 'utf8')
}

/** Runs the real pipeline (sniff -> parse -> build -> sort) on one kube text. */
export async function clusterState(
  text: string,
  opts: {node?: string; mode?: Mode; path?: string} = {},
): Promise<ProxyState> {
  // An explicit `node: undefined` leaves the default (this host's name) to the reader.
  const node = 'node' in opts ? opts.node : 'node-a'
  return readState({sources: [{path: opts.path ?? 'cluster.yaml', text}]}, {node, mode: opts.mode})
}

/** The service ports of one Service and family, by port name. */
export function portOf(
  state: ProxyState,
  ns: string,
  name: string,
  portName: string,
  family: 'IPv4' | 'IPv6' = 'IPv4',
): ServicePort {
  const sp = state.services.find(
    (s) => s.namespace === ns && s.name === name && s.portName === portName && s.family === family,
  )
  if (!sp)
    throw new Error(
      `no service port ${ns}/${name}:${portName} ${family}; have ${state.services.map((s) => `${s.namespace}/${s.name}:${s.portName} ${s.family}`).join(', ')}`,
    )
  return sp
}

/** Frontends as `Type ip:port action` strings (order as sorted by the state). */
export function frontendsOf(sp: ServicePort): string[] {
  return sp.frontends.map((f: Frontend) => `${f.type} ${f.ip ?? '*'}:${f.port} ${f.action}`)
}

/** Endpoints as `ip:port` strings. */
export function endpointsOf(sp: ServicePort): string[] {
  return sp.endpoints.map((e) => `${e.ip}:${e.port}`)
}

export function errors(state: ProxyState): string[] {
  return state.diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => `${d.code} ${d.source?.line}`)
}

export function codes(state: ProxyState): string[] {
  return state.diagnostics.map((d) => d.code)
}
