import {describe, expect, it} from 'vitest'
import {mergeFindings, oddOneOut} from '../../src/analyze/fleet.js'
import type {Finding} from '../../src/analyze/findings.js'
import {endpoint, frontend, proxyState, servicePort} from '../helpers/builders.js'

/** ETP=Local: a node with the endpoint forwards its NodePort, one without drops it. */
const localService = (hasEndpoint: boolean) =>
  servicePort({
    externalTrafficPolicy: 'Local',
    frontends: [
      frontend('ClusterIP', '172.30.0.41', 80),
      frontend('NodePort', null, 30080, {action: hasEndpoint ? 'forward' : 'drop'}),
    ],
    endpoints: [endpoint('10.0.1.5', 80, {local: hasEndpoint})],
  })

describe('oddOneOut', () => {
  it('does not count what differs by design: local endpoints and what a Local frontend does', () => {
    const states = ['a', 'b', 'c'].map((n, i) => ({
      node: n,
      state: proxyState('iptables', [localService(i === 0)]),
    }))
    expect(oddOneOut(states)).toEqual([])
  })

  it('counts the same difference on a Cluster-policy service', () => {
    const cluster = (drop: boolean) =>
      servicePort({
        externalTrafficPolicy: 'Cluster',
        frontends: [frontend('NodePort', null, 30080, {action: drop ? 'drop' : 'forward'})],
        endpoints: [endpoint('10.0.1.5')],
      })
    const states = ['a', 'b', 'c'].map((n) => ({
      node: n,
      state: proxyState('iptables', [cluster(n === 'b')]),
    }))
    const [diff] = oddOneOut(states)
    expect(diff).toMatchObject({majority: ['a', 'c'], odd: [{nodes: ['b'], absent: false}]})
    expect(diff!.odd[0]!.differences.map((d) => d.field)).toEqual([
      'frontends[NodePort *:30080].action',
    ])
  })

  it('has no majority when the nodes split evenly', () => {
    const states = ['a', 'b'].map((n) => ({
      node: n,
      state: proxyState('iptables', n === 'a' ? [servicePort()] : []),
    }))
    expect(oddOneOut(states)).toEqual([
      expect.objectContaining({service: 'ns1/svc1:p80/tcp', majority: null}),
    ])
  })
})

describe('mergeFindings', () => {
  const f = (
    id: Finding['id'],
    services: string[],
    severity: Finding['severity'] = 'warning',
  ): Finding => ({
    id,
    severity,
    title: 't',
    message: 'm',
    services,
    addresses: [],
    evidence: [{path: 'x', line: 1}],
    action: 'a',
    docs: null,
  })
  it('one entry per finding, with every node it hits; most severe first', () => {
    const merged = mergeFindings([
      {
        node: 'b',
        findings: [
          f('MIGRATE_LOCALHOST_NODEPORTS', []),
          f('RENDER_MISSING_POD_CIDR', ['s1'], 'info'),
        ],
      },
      {
        node: 'a',
        findings: [
          f('MIGRATE_LOCALHOST_NODEPORTS', []),
          f('RENDER_MISSING_POD_CIDR', ['s2'], 'info'),
        ],
      },
    ])
    expect(merged.map((m) => [m.id, m.services, m.nodes])).toEqual([
      ['MIGRATE_LOCALHOST_NODEPORTS', [], ['a', 'b']],
      ['RENDER_MISSING_POD_CIDR', ['s1'], ['b']],
      ['RENDER_MISSING_POD_CIDR', ['s2'], ['a']],
    ])
  })
})
