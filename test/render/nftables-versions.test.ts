/**
 * The nftables renderer per kube-proxy release (docs/kube-proxy-layouts.md §3.10): 1.34/1.35 are
 * checked against kube-proxy's own test text in nftables.test.ts; 1.36 and 1.37 here against
 * fixtures/render/nftables-1.3x/overall.dump (derived from the corpus, see their PROVENANCE),
 * order-normalised as kube-proxy's tests do. Plus the 128-byte comment cut: a file nft loads for
 * every version, and an error finding for the releases whose syncs it breaks.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {planMigration} from '../../src/analyze/migrate.js'
import {diffStates} from '../../src/analyze/diff.js'
import {readState} from '../../src/readers/read-state.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import {KUBE_PROXY_VERSIONS} from '../../src/kube-proxy/versions.js'
import type {ProxyState} from '../../src/model/types.js'
import {Netns, kernelUnavailable, skipEachWhen} from '../live/netns.js'
import {stateFromExpect} from './corpus-states.js'
import {sortNftablesTransaction} from './normalise.js'
import {fixturePath, readFixtureState} from '../readers/nft/corpus-shape.js'

const LOCAL = new Set(['10.180.0.1', '10.180.0.4', '10.180.0.5'])

/** The overall scenario with each endpoint's locality given (1.36+ writes it in hairpin-connections). */
function overall(): ProxyState {
  const state = stateFromExpect('nftables-overall', 'nftables', {
    sourceRanges: {'ns5/svc5': ['203.0.113.0/25']},
    node: {nodePortAddresses: ['192.168.0.2']},
  })
  for (const sp of state.services)
    for (const ep of sp.endpoints) ep.local = ep.local ?? LOCAL.has(ep.ip ?? '')
  return state
}

const derived = (version: string): string =>
  readFileSync(fixturePath('render', `nftables-${version}`, 'overall.dump'), 'utf8')

describe.each(['1.36', '1.37'] as const)('kube-proxy %s layout', (kubeProxyVersion) => {
  it('reproduces the overall expectation, order-normalised', () => {
    const result = renderNftables(overall(), {
      serviceCIDRs: ['172.30.0.0/16'],
      kubeProxyVersion,
      bare: true,
    })
    expect(sortNftablesTransaction(result.text).text).toBe(
      sortNftablesTransaction(derived(kubeProxyVersion)).text,
    )
    expect(result.findings.map((f) => f.id)).not.toContain('RENDER_HAIRPIN_LOCALITY_UNKNOWN')
  })

  it('read back, it is the same state, and the reader names the layout', async () => {
    const state = overall()
    const text = renderNftables(state, {serviceCIDRs: ['172.30.0.0/16'], kubeProxyVersion}).text
    const back = await readState({sources: [{path: 'kube-proxy.nft', text}]})
    expect(back.diagnostics.filter((d) => d.severity !== 'info')).toEqual([])
    expect(back.node.kubeProxyLayouts).toEqual([kubeProxyVersion === '1.36' ? '1.36' : '1.37+'])
    const changed = diffStates(state, back).services
    expect(changed).toEqual([])
  })
})

describe('versions', () => {
  it('1.34 and 1.35 write the same layout; 1.36 and 1.37 differ from it and from each other', () => {
    const text = Object.fromEntries(
      KUBE_PROXY_VERSIONS.map((v) => [
        v,
        renderNftables(overall(), {kubeProxyVersion: v, bare: true}).text,
      ]),
    )
    expect(text['1.35']).toBe(text['1.34'])
    expect(text['1.35']).toContain('jump mark-for-masquerade')
    expect(text['1.36']).not.toContain('mark-for-masquerade')
    expect(text['1.36']).not.toBe(text['1.37'])
  })

  it('the script header names the version; the default is the newest', () => {
    expect(renderNftables(overall(), {kubeProxyVersion: '1.35'}).text).toMatch(
      /^# kube-proxy nftables mode, kube-proxy 1\.35 layout/,
    )
    expect(renderNftables(overall()).text).toMatch(
      /^# kube-proxy nftables mode, kube-proxy 1\.37 layout/,
    )
  })
})

const LONG =
  'loft-acme-platform-services-team-dev-v-shared-workloads-ns-001/my-api-svc-x-my-api-namespace-x-acme-shared-vcluster--a1b2c3d4e'

describe('a service port name over 128 bytes', () => {
  const unavailable = kernelUnavailable('test/render/nftables-versions.test.ts')
  skipEachWhen(unavailable)
  let ns: Netns
  let state: ProxyState
  beforeAll(async () => {
    state = await readFixtureState(['nft', 'kube-proxy-1.37', 'input.nft'])
    if (unavailable === null) ns = new Netns()
  })
  afterAll(() => ns?.delete())

  it('1.37: the comment is cut at 128 bytes and nft -f loads the file', () => {
    const r = renderNftables(state, {kubeProxyVersion: '1.37'})
    const comment = /comment "(loft-[^"]*)"/.exec(r.text)![1]!
    expect(Buffer.byteLength(comment)).toBe(128)
    expect(`${LONG}:http`.startsWith(comment)).toBe(true)
    ns.run(['nft', '-f', '-'], r.text)
    expect(ns.run(['nft', 'list', 'map', 'ip', 'kube-proxy', 'no-endpoint-nodeports'])).toContain(
      comment,
    )
    expect(
      planMigration(state, 'nftables', {kubeProxyVersion: '1.37'}).map((f) => f.id),
    ).not.toContain('MIGRATE_NFT_LONG_NAME')
  })

  it('1.36: an error finding naming the service, and still a file nft loads', () => {
    const findings = planMigration(state, 'nftables', {kubeProxyVersion: '1.36'})
    const f = findings.find((x) => x.id === 'MIGRATE_NFT_LONG_NAME')!
    expect(f.severity).toBe('error')
    expect(f.services.join(' ')).toContain(LONG)
    ns.run(['nft', '-f', '-'], renderNftables(state, {kubeProxyVersion: '1.36'}).text)
  })
})

describe('the 1.37 fixture, rendered for 1.37 and read back', () => {
  it('gives the same services', async () => {
    const state = await readFixtureState(['nft', 'kube-proxy-1.37', 'list.nft'])
    const text = renderNftables(state, {kubeProxyVersion: '1.37'}).text
    const back = await readState({sources: [{path: join('x', 'kube-proxy.nft'), text}]})
    expect(diffStates(state, back).services).toEqual([])
  })
})
