/**
 * The Services behind kube-proxy's TestOverallIPTablesRules / TestOverallNFTablesRules, written
 * as cluster objects by hand (fixtures/kube/iptables-overall/cluster.yaml), must give the service
 * ports of the corpus's expect JSON when built for that mode. Actions come from the dumps:
 * ns2/svc2 (ETP=Local, endpoint on another node) has DROP / `: drop` for its external IP, LB IP and
 * NodePort; ns6/svc6 (no endpoints) has REJECT / `goto reject-chain`; everything else forwards.
 */
import {describe, expect, it} from 'vitest'
import {frontendEndpoints} from '../../../src/kube-proxy/endpoints.js'
import {clusterState, errors, fixtureText, portOf} from './helpers.js'
import type {UpstreamExpectEntry} from '../../helpers/upstream-expect.js'

const YAML = fixtureText('iptables-overall', 'cluster.yaml')

for (const mode of ['iptables', 'nftables'] as const) {
  const expected = JSON.parse(
    fixtureText('iptables-overall', `${mode}-overall.expect.json`),
  ) as UpstreamExpectEntry[]

  describe(`TestOverall${mode === 'iptables' ? 'IPTables' : 'NFTables'}Rules services, built for mode ${mode}`, () => {
    it('has exactly the expected service ports and no diagnostics above info', async () => {
      const state = await clusterState(YAML, {node: 'test-node', mode})
      expect(errors(state)).toEqual([])
      expect(state.diagnostics.filter((d) => d.severity === 'warning')).toEqual([])
      expect(
        state.services.map((s) => `${s.namespace}/${s.name}:${s.portName}/${s.protocol}`),
      ).toEqual(expected.map((e) => `${e.namespace}/${e.name}:${e.port_name}/${e.protocol}`))
    })

    for (const e of expected) {
      it(`${e.namespace}/${e.name}:${e.port_name}`, async () => {
        const state = await clusterState(YAML, {node: 'test-node', mode})
        const sp = portOf(state, e.namespace, e.name, e.port_name)
        const ofType = (t: string) => sp.frontends.filter((f) => f.type === t)
        expect(ofType('ClusterIP').map((f) => `${f.ip}:${f.port}`)).toEqual([
          `${e.cluster_ip}:${e.port}`,
        ])
        expect(ofType('NodePort').map((f) => f.port)).toEqual(
          e.node_port === null ? [] : [e.node_port],
        )
        expect(ofType('ExternalIP').map((f) => f.ip)).toEqual(e.external_ips)
        expect(ofType('LoadBalancer').map((f) => f.ip)).toEqual(e.load_balancer_ips)
        for (const f of sp.frontends)
          if (f.type !== 'ClusterIP' && f.type !== 'NodePort') expect(f.port).toBe(e.port)
        expect(sp.sessionAffinity?.timeoutSeconds ?? null).toBe(e.session_affinity_seconds)
        expect(sp.externalTrafficPolicy).toBe(e.external_traffic_policy)
        expect(sp.internalTrafficPolicy).toBe(e.internal_traffic_policy)
        expect(sp.endpoints.map((x) => ({ip: x.ip, port: x.port}))).toEqual(
          e.endpoints.map((x) => ({ip: x.ip, port: x.port})),
        )
        // The dump proves locality only under a Local policy; the cluster objects always know it.
        for (const [i, x] of e.endpoints.entries())
          if (x.local !== null) expect(sp.endpoints[i]?.local).toBe(x.local)
        // Shares: kube-proxy's cascade is uniform over the cluster endpoints.
        const n = e.endpoints.length
        for (const x of sp.endpoints) expect(x.share).toBeCloseTo(1 / n, 9)
        // What each frontend does, as the dump shows it.
        const noEndpoints = e.endpoints.length === 0
        const noLocal =
          e.external_traffic_policy === 'Local' && !e.endpoints.some((x) => x.local === true)
        for (const f of sp.frontends) {
          const want = noEndpoints
            ? 'reject'
            : f.type !== 'ClusterIP' && noLocal
              ? 'drop'
              : 'forward'
          expect(`${f.type} ${f.action}`).toBe(`${f.type} ${want}`)
          expect(frontendEndpoints(sp, f, mode).length > 0).toBe(want === 'forward')
        }
      })
    }

    it('ns5/svc5: the LB source range 203.0.113.000/025 is normalised, and only on the LB frontend', async () => {
      const sp = portOf(await clusterState(YAML, {node: 'test-node', mode}), 'ns5', 'svc5', 'p80')
      expect(sp.frontends.map((f) => `${f.type} ${f.sourceRanges.join(',')}`)).toEqual([
        'ClusterIP ',
        'LoadBalancer 203.0.113.0/25',
        'NodePort ',
      ])
    })

    it('ns2/svc2: healthCheckNodePort 30000 (LoadBalancer with ETP=Local)', async () => {
      const state = await clusterState(YAML, {node: 'test-node', mode})
      expect(portOf(state, 'ns2', 'svc2', 'p80').healthCheckNodePort).toBe(30000)
      expect(
        state.services.filter((s) => s.healthCheckNodePort !== null).map((s) => s.name),
      ).toEqual(['svc2'])
    })
  })
}
