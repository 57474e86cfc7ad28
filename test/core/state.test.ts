/**
 * sortState (src/core/state.ts): the deterministic order of docs/model.md, whatever order a reader
 * gives the lists in; lists already in order are left as they are.
 */
import {describe, expect, it} from 'vitest'
import {emptyState, sortState} from '../../src/core/state.js'
import type {Endpoint, Frontend, ServicePort} from '../../src/model/types.js'

const ep = (ip: string, port: number | null): Endpoint => ({
  ip,
  port,
  local: null,
  share: null,
  weight: null,
  state: null,
})
const fe = (
  type: Frontend['type'],
  ip: string | null,
  port: number | null,
  sourceRanges: string[] = [],
): Frontend => ({type, ip, port, sourceRanges, action: 'forward'})

function port(
  name: string,
  frontends: Frontend[],
  endpoints: Endpoint[],
  lines: number[],
): ServicePort {
  return {
    namespace: 'ns',
    name,
    portName: '',
    protocol: 'TCP',
    family: 'IPv4',
    frontends,
    healthCheckNodePort: null,
    internalTrafficPolicy: null,
    externalTrafficPolicy: null,
    sessionAffinity: null,
    scheduler: null,
    endpoints,
    rules: lines.map((line) => ({path: 'p', line})),
  }
}

describe('sortState', () => {
  it('sorts a frontend`s own endpoints (IPVS virtual servers that disagree) like the service port`s', () => {
    const s = emptyState('ipvs')
    const own = fe('NodePort', '127.0.0.1', 30080)
    own.endpoints = [ep('10.1.0.9', 80), ep('10.1.0.10', 80)]
    s.services = [port('web', [own], [ep('10.1.0.10', 80)], [1])]
    sortState(s)
    expect(s.services[0]!.frontends[0]!.endpoints!.map((e) => e.ip)).toEqual([
      '10.1.0.10',
      '10.1.0.9',
    ])
  })

  it('sorts service ports, frontends, source ranges, endpoints and refs', () => {
    const s = emptyState('iptables')
    s.services = [
      port(
        'web',
        [
          fe('NodePort', null, 30080),
          fe('LoadBalancer', '5.6.7.8', 80, ['10.0.0.0/8', '1.0.0.0/8']),
          fe('ClusterIP', '10.96.0.2', 80),
          fe('ExternalIP', '1.2.3.4', 80),
        ],
        [ep('10.1.0.9', 80), ep('10.1.0.10', 80), ep('10.1.0.10', null)],
        [7, 3, 5],
      ),
      port('api', [fe('ClusterIP', '10.96.0.1', 443)], [ep('10.1.0.1', 443)], [1]),
    ]
    sortState(s)
    expect(s.services.map((sp) => sp.name)).toEqual(['api', 'web'])
    const web = s.services[1]!
    expect(web.frontends.map((f) => f.type)).toEqual([
      'ClusterIP',
      'ExternalIP',
      'LoadBalancer',
      'NodePort',
    ])
    expect(web.frontends[2]!.sourceRanges).toEqual(['1.0.0.0/8', '10.0.0.0/8'])
    // Endpoints by ip as text, then port (null first).
    expect(web.endpoints.map((e) => `${e.ip}:${e.port}`)).toEqual([
      '10.1.0.10:null',
      '10.1.0.10:80',
      '10.1.0.9:80',
    ])
    expect(web.rules.map((r) => r.line)).toEqual([3, 5, 7])
  })

  it('leaves lists in order as they are, and orders frontends of one type by address and port', () => {
    const s = emptyState('iptables')
    const frontends = [
      fe('ClusterIP', '10.96.0.1', 80),
      fe('ExternalIP', '1.2.3.4', 443),
      fe('ExternalIP', '1.2.3.4', 8443),
      fe('ExternalIP', '1.2.3.5', 80),
    ]
    const endpoints = [ep('10.1.0.1', 80), ep('10.1.0.1', 81), ep('10.1.0.2', 80)]
    s.services = [port('web', [...frontends], [...endpoints], [1, 2])]
    sortState(s)
    expect(s.services[0]!.frontends).toEqual(frontends)
    expect(s.services[0]!.endpoints).toEqual(endpoints)
    s.services[0]!.frontends.reverse()
    s.services[0]!.endpoints.reverse()
    sortState(s)
    expect(s.services[0]!.frontends).toEqual(frontends)
    expect(s.services[0]!.endpoints).toEqual(endpoints)
  })
})
