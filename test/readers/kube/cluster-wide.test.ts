/**
 * Cluster objects read without --node on a host that is not one of their nodes
 * (src/readers/kube/cluster-wide.ts): no node's view is pretended. The state is the cluster's
 * (node.view 'cluster-wide', no name, locality unknown); a Local-policy frontend forwards on the
 * nodes that run a usable endpoint (kube-proxy's local set: ready, else serving-terminating) and
 * names them; with --node it is that node's view as before.
 */
import {hostname} from 'node:os'
import {describe, expect, it} from 'vitest'
import {localSetsByNode, pointOfView} from '../../../src/readers/kube/cluster-wide.js'
import {parse} from '../../../src/readers/kp-json/parse.js'
import {clusterState, portOf} from './helpers.js'

const service = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {name, namespace: 'ns'},
  spec: {
    ports: [{name: 'p', port: 80, protocol: 'TCP', nodePort: 30080}],
    type: 'NodePort',
    ...spec,
  },
})

interface Ep {
  ip: string
  node?: string
  ready?: boolean
  serving?: boolean
  terminating?: boolean
}
const slice = (svc: string, endpoints: Ep[]) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {name: `${svc}-1`, namespace: 'ns', labels: {'kubernetes.io/service-name': svc}},
  addressType: 'IPv4',
  endpoints: endpoints.map((e) => ({
    addresses: [e.ip],
    ...(e.node ? {nodeName: e.node} : {}),
    conditions: {
      ready: e.ready ?? true,
      serving: e.serving ?? true,
      terminating: e.terminating ?? false,
    },
  })),
  ports: [{name: 'p', port: 8080, protocol: 'TCP'}],
})

const OBJECTS = JSON.stringify({
  apiVersion: 'v1',
  kind: 'List',
  items: [
    // ETP=Local: node-a has a ready endpoint, node-b only a serving-terminating one (its local
    // set falls back to it), node-c only a not-serving one, one endpoint names no node.
    service('etp', {clusterIP: '10.96.0.10', externalTrafficPolicy: 'Local'}),
    slice('etp', [
      {ip: '10.1.0.1', node: 'node-a'},
      {ip: '10.1.0.2', node: 'node-b', ready: false, serving: true, terminating: true},
      {ip: '10.1.0.3', node: 'node-c', ready: false, serving: false, terminating: true},
      {ip: '10.1.0.4'},
    ]),
    // ITP=Local, the ClusterIP only: forwarded on node-a, shares depend on the node.
    service('itp', {
      clusterIP: '10.96.0.11',
      internalTrafficPolicy: 'Local',
      type: 'ClusterIP',
      ports: [{name: 'p', port: 80, protocol: 'TCP'}],
    }),
    slice('itp', [
      {ip: '10.2.0.1', node: 'node-a'},
      {ip: '10.2.0.2', node: 'node-a'},
    ]),
    // ETP=Local whose only endpoint names no node: no node forwards.
    service('nowhere', {clusterIP: '10.96.0.12', externalTrafficPolicy: 'Local'}),
    slice('nowhere', [{ip: '10.3.0.1'}]),
  ],
})

describe('the cluster-wide view of cluster objects', () => {
  const host = hostname().trim().toLowerCase()

  it('is taken without --node when this host is no node the objects name', async () => {
    expect(['node-a', 'node-b', 'node-c']).not.toContain(host)
    const state = await clusterState(OBJECTS, {node: undefined})
    expect(state.node.view).toBe('cluster-wide')
    expect(state.node.name).toBeNull()

    const etp = portOf(state, 'ns', 'etp', 'p')
    const nodePort = etp.frontends.find((f) => f.type === 'NodePort')!
    expect(nodePort.action).toBe('forward')
    expect(nodePort.forwardedOnNodes).toEqual(['node-a', 'node-b'])
    // The ClusterIP follows internalTrafficPolicy=Cluster: the same on every node.
    expect(etp.frontends.find((f) => f.type === 'ClusterIP')).not.toHaveProperty('forwardedOnNodes')
    expect(etp.endpoints.map((e) => [e.ip, e.local])).toEqual([
      ['10.1.0.1', null],
      ['10.1.0.2', null],
      ['10.1.0.4', null],
    ])

    const itp = portOf(state, 'ns', 'itp', 'p')
    expect(itp.frontends).toEqual([
      expect.objectContaining({type: 'ClusterIP', action: 'forward', forwardedOnNodes: ['node-a']}),
    ])
    expect(itp.endpoints.map((e) => e.share)).toEqual([null, null])

    const nowhere = portOf(state, 'ns', 'nowhere', 'p')
    expect(nowhere.frontends.find((f) => f.type === 'NodePort')).toEqual(
      expect.not.objectContaining({forwardedOnNodes: expect.anything()}),
    )
    expect(nowhere.frontends.find((f) => f.type === 'NodePort')!.action).toBe('drop')
  })

  it('with --node is that node: node-c drops the ETP=Local NodePort, node-b forwards', async () => {
    const c = await clusterState(OBJECTS, {node: 'node-c'})
    expect(c.node).toMatchObject({name: 'node-c', view: 'node'})
    const atC = portOf(c, 'ns', 'etp', 'p').frontends.find((f) => f.type === 'NodePort')!
    expect(atC.action).toBe('drop')
    expect(atC).not.toHaveProperty('forwardedOnNodes')
    const b = await clusterState(OBJECTS, {node: 'node-b'})
    expect(portOf(b, 'ns', 'etp', 'p').frontends.find((f) => f.type === 'NodePort')!.action).toBe(
      'forward',
    )
  })

  it('survives a saved state: kp-json reads view and forwardedOnNodes back', async () => {
    const state = await clusterState(OBJECTS, {node: undefined})
    const back = parse({path: 's.json', text: JSON.stringify(state)})
    expect(back.diagnostics).toEqual([])
    expect(back.data).toEqual(state)
  })

  it('pointOfView: --node wins; else this host when the objects name it; else none', () => {
    const named = new Set(['node-a', 'node-b'])
    expect(pointOfView('node-z', 'node-a', named)).toBe('node-z')
    expect(pointOfView(undefined, 'node-a', named)).toBe('node-a')
    expect(pointOfView(undefined, 'laptop', named)).toBeNull()
  })

  it("localSetsByNode: each node's ready endpoints, else its serving-terminating ones", () => {
    const e = (nodeName: string | null, ready: boolean, serving = ready, terminating = !ready) => ({
      nodeName,
      ready,
      serving,
      terminating,
    })
    const a1 = e('a', true)
    const a2 = e('a', false, true, true)
    const b1 = e('b', false, true, true)
    const c1 = e('c', false, false, true)
    expect(localSetsByNode([a1, a2, b1, c1, e(null, true)])).toEqual(
      new Map([
        ['a', [a1]],
        ['b', [b1]],
      ]),
    )
  })
})
