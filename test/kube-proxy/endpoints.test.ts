/** kube-proxy's endpoint categorisation (topology.go CategorizeEndpoints, serviceport.go), case by case. */
import {describe, expect, it} from 'vitest'
import type {Endpoint} from '../../src/model/types.js'
import {
  categorizeEndpoints,
  clusterSet,
  endpointUse,
  ipvsFrontendSetsExplained,
  localOrCluster,
  type CategorizableEndpoint,
} from '../../src/kube-proxy/endpoints.js'

type Ep = CategorizableEndpoint & {id: string}
const ep = (id: string, over: Partial<Ep> = {}): Ep => ({
  id,
  ready: true,
  serving: true,
  terminating: false,
  local: false,
  ...over,
})
const terminating = {ready: false, serving: true, terminating: true}
const ids = (list: Ep[] | null) => list?.map((e) => e.id) ?? null
const key = (e: Ep) => e.id

describe('endpointUse (serviceport.go)', () => {
  it('uses the cluster endpoints whenever an external frontend exists, even under ITP=Local', () => {
    expect(endpointUse(false, false, false)).toEqual({
      usesClusterEndpoints: true,
      usesLocalEndpoints: false,
    })
    expect(endpointUse(true, false, false)).toEqual({
      usesClusterEndpoints: false,
      usesLocalEndpoints: true,
    })
    expect(endpointUse(true, false, true)).toEqual({
      usesClusterEndpoints: true,
      usesLocalEndpoints: true,
    })
    expect(endpointUse(false, true, true)).toEqual({
      usesClusterEndpoints: true,
      usesLocalEndpoints: true,
    })
    // ETP=Local without an external frontend: nothing uses the local endpoints.
    expect(endpointUse(false, true, false).usesLocalEndpoints).toBe(false)
  })
})

describe('categorizeEndpoints (topology.go)', () => {
  const both = endpointUse(false, true, true)
  it('takes the ready endpoints, and the serving-terminating ones for each set on its own when none is ready', () => {
    const list = [ep('a'), ep('b', {local: true, ...terminating}), ep('c', {ready: false})]
    const cats = categorizeEndpoints(list, both, key)
    expect(ids(cats.clusterEndpoints)).toEqual(['a'])
    expect(ids(cats.localEndpoints)).toEqual(['b'])
    expect(ids(cats.allReachableEndpoints)).toEqual(['a', 'b'])
    expect(cats.hasAnyEndpoints).toBe(true)
  })
  it('falls back to serving-terminating endpoints on the cluster path when none is ready anywhere', () => {
    const cats = categorizeEndpoints([ep('a', terminating), ep('b', {ready: false})], both, key)
    expect(ids(cats.clusterEndpoints)).toEqual(['a'])
    expect(ids(cats.localEndpoints)).toEqual([])
  })
  it('leaves a set it never uses null', () => {
    const cats = categorizeEndpoints([ep('a', {local: true})], endpointUse(true, false, false), key)
    expect(cats.clusterEndpoints).toBeNull()
    expect(ids(cats.allReachableEndpoints)).toEqual(['a'])
    expect(
      categorizeEndpoints([ep('a')], endpointUse(false, false, false), key).localEndpoints,
    ).toBe(null)
  })
  it('has no endpoints when none is ready or serving-terminating', () => {
    const cats = categorizeEndpoints([ep('a', {ready: false, serving: false})], both, key)
    expect(cats.hasAnyEndpoints).toBe(false)
    expect(cats.allReachableEndpoints).toEqual([])
  })
  it('applies zone hints only when every ready endpoint has one and one names this zone', () => {
    const topo = {node: 'n1', zone: 'z1'}
    const hinted = [ep('a', {zoneHints: ['z1']}), ep('b', {zoneHints: ['z2']})]
    const cats = categorizeEndpoints(hinted, both, key, topo)
    expect(cats.topologyMode).toBe('PreferSameZone')
    expect(ids(cats.clusterEndpoints)).toEqual(['a'])
    const partly = [ep('a', {zoneHints: ['z1']}), ep('b')]
    expect(categorizeEndpoints(partly, both, key, topo).topologyMode).toBe('')
    const elsewhere = [ep('a', {zoneHints: ['z2']})]
    expect(categorizeEndpoints(elsewhere, both, key, topo).topologyMode).toBe('')
  })
  it('prefers node hints to zone hints', () => {
    const list = [
      ep('a', {nodeHints: ['n1'], zoneHints: ['z1']}),
      ep('b', {nodeHints: ['n2'], zoneHints: ['z1']}),
    ]
    const cats = categorizeEndpoints(list, both, key, {node: 'n1', zone: 'z1'})
    expect(cats.topologyMode).toBe('PreferSameNode')
    expect(ids(cats.clusterEndpoints)).toEqual(['a'])
  })
})

describe('the model side', () => {
  const mep = (ip: string, state: Endpoint['state']): Endpoint => ({
    ip,
    port: 80,
    local: null,
    share: null,
    weight: null,
    state,
  })
  it('clusterSet: unknown state is ready; draining never counts; serving-terminating only without ready', () => {
    expect(
      clusterSet([mep('a', null), mep('b', 'serving-terminating'), mep('c', 'draining')]).map(
        (e) => e.ip,
      ),
    ).toEqual(['a'])
    expect(
      clusterSet([mep('b', 'serving-terminating'), mep('c', 'draining')]).map((e) => e.ip),
    ).toEqual(['b'])
  })
  it('localOrCluster: the local set under a Local policy when it has any, else the cluster set', () => {
    expect(localOrCluster(true, ['c'], ['l'])).toEqual(['l'])
    expect(localOrCluster(true, ['c'], [])).toEqual(['c'])
    expect(localOrCluster(false, ['c'], ['l'])).toEqual(['c'])
  })
})

describe('ipvsFrontendSetsExplained (proxier.go syncService / syncEndpoint)', () => {
  const set = (...keys: string[]) => new Set(keys)
  const all = set('a', 'b', 'c', 'd')
  const local = set('a')

  it('external virtual servers of one service port always have the same real servers', () => {
    expect(ipvsFrontendSetsExplained(all, [all, set('a', 'b', 'c')], null, null)).toBe(false)
    expect(ipvsFrontendSetsExplained(all, [all, all], 'Cluster', 'Cluster')).toBe(true)
    expect(ipvsFrontendSetsExplained(null, [local, local], null, 'Local')).toBe(true)
  })

  it('a Local policy explains the local subset on its own side only', () => {
    // externalTrafficPolicy=Local: the NodePort has the local endpoints, the ClusterIP all.
    expect(ipvsFrontendSetsExplained(all, [local], 'Cluster', 'Local')).toBe(true)
    expect(ipvsFrontendSetsExplained(all, [local], null, null)).toBe(true)
    expect(ipvsFrontendSetsExplained(all, [local], null, 'Cluster')).toBe(false)
    // internalTrafficPolicy=Local: the ClusterIP has the local endpoints, the NodePort all.
    expect(ipvsFrontendSetsExplained(local, [all], 'Local', 'Cluster')).toBe(true)
    expect(ipvsFrontendSetsExplained(local, [all], 'Cluster', null)).toBe(false)
    expect(ipvsFrontendSetsExplained(local, [all], null, 'Local')).toBe(false)
  })

  it('sets neither of which holds the other are never explained', () => {
    expect(ipvsFrontendSetsExplained(set('a', 'b'), [set('b', 'c')], null, null)).toBe(false)
    expect(ipvsFrontendSetsExplained(all, [], null, null)).toBe(true)
  })
})
