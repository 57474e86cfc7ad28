/**
 * The rules of a node do not say which endpoints are terminating. Under externalTrafficPolicy=Local
 * with no ready local endpoint, kube-proxy sends local traffic to a serving-terminating local one,
 * which is then on the local chain but not on the cluster chain: a state read from those rules
 * gave it no state (and share 0 under ITP=Cluster). Rendered again, it was taken as ready and put
 * into the cluster cascade, so migrating such a node (iptables -> nftables, or back) sent a terminating pod a third
 * of the cluster's connections. Found by rendering random Service/EndpointSlice sets through two
 * modes in turn and diffing the last reading with the YAML.
 */
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import {readState} from '../../src/readers/read-state.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'

const YAML = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: ns}
  spec:
    type: NodePort
    clusterIP: 10.96.0.2
    clusterIPs: [10.96.0.2]
    externalTrafficPolicy: Local
    ipFamilies: [IPv4]
    ports:
    - {name: http, port: 80, protocol: TCP, targetPort: 8080, nodePort: 30002}
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata:
    name: web-1
    namespace: ns
    labels: {kubernetes.io/service-name: web}
  addressType: IPv4
  ports:
  - {name: http, port: 8080, protocol: TCP}
  endpoints:
  - {addresses: [10.244.1.1], conditions: {ready: false, serving: true, terminating: true}, nodeName: me}
  - {addresses: [10.244.1.2], conditions: {ready: true, serving: true, terminating: false}, nodeName: other}
  - {addresses: [10.244.1.3], conditions: {ready: true, serving: true, terminating: false}, nodeName: other}
`

describe('a serving-terminating local endpoint through two migrations', () => {
  it.each([
    ['iptables', 'nftables'],
    ['nftables', 'iptables'],
  ] as const)(
    'YAML -> %s -> %s: the terminating endpoint stays off the cluster path',
    async (first, second) => {
      const render = {iptables: renderIptables, nftables: renderNftables}
      const opts = {podCIDRs: ['10.244.0.0/16'], nodeIPs: ['192.168.1.10']}
      const yaml = await readState({sources: [{path: 'cluster.yaml', text: YAML}]}, {node: 'me'})
      expect(yaml.services[0]!.endpoints.map((e) => `${e.ip} ${e.share}`)).toEqual([
        '10.244.1.1 0',
        '10.244.1.2 0.5',
        '10.244.1.3 0.5',
      ])
      const once = await readState(
        {sources: render[first](yaml, opts).files.map((f) => ({path: f.name, text: f.text}))},
        {mode: first},
      )
      // What the rules show: the local endpoint on the local chain only, so the terminating fallback.
      expect(once.services[0]!.endpoints.map((e) => `${e.ip} ${e.share} ${e.state}`)).toEqual([
        '10.244.1.1 0 serving-terminating',
        '10.244.1.2 0.5 null',
        '10.244.1.3 0.5 null',
      ])
      const twice = await readState(
        {sources: render[second](once, opts).files.map((f) => ({path: f.name, text: f.text}))},
        {mode: second},
      )
      expect(diffStates(yaml, twice).services).toEqual([])
      // A state that does not say it (made elsewhere): share 0 on the cluster path keeps it off as well.
      const unsaid = structuredClone(once)
      for (const ep of unsaid.services[0]!.endpoints) ep.state = null
      const again = await readState(
        {sources: render[second](unsaid, opts).files.map((f) => ({path: f.name, text: f.text}))},
        {mode: second},
      )
      expect(diffStates(yaml, again).services).toEqual([])
    },
  )

  it.each([
    ['iptables', 'nftables'],
    ['nftables', 'iptables'],
  ] as const)(
    "internalTrafficPolicy=Local with a NodePort, YAML -> %s -> %s: the same (its shares are the local path's)",
    async (first, second) => {
      const render = {iptables: renderIptables, nftables: renderNftables}
      const opts = {podCIDRs: ['10.244.0.0/16'], nodeIPs: ['192.168.1.10']}
      const yaml = await readState(
        {
          sources: [
            {
              path: 'cluster.yaml',
              text: YAML.replace('externalTrafficPolicy: Local', 'internalTrafficPolicy: Local'),
            },
          ],
        },
        {node: 'me'},
      )
      expect(yaml.services[0]!.internalTrafficPolicy).toBe('Local')
      const once = await readState(
        {sources: render[first](yaml, opts).files.map((f) => ({path: f.name, text: f.text}))},
        {mode: first},
      )
      expect(once.services[0]!.endpoints.map((e) => `${e.ip} ${e.share} ${e.state}`)).toEqual([
        '10.244.1.1 1 serving-terminating',
        '10.244.1.2 0 null',
        '10.244.1.3 0 null',
      ])
      const twice = await readState(
        {sources: render[second](once, opts).files.map((f) => ({path: f.name, text: f.text}))},
        {mode: second},
      )
      expect(diffStates(yaml, twice).services).toEqual([])
    },
  )
})
