/**
 * What the corpus expect.json files do not carry, checked against
 * docs/kube-proxy-layouts.md §3 and fixtures/PROVENANCE.md: actions, source ranges,
 * node facts, leftovers, the chain-name hash, positions.
 */
import {describe, expect, it} from 'vitest'
import {displayName} from '../../../src/core/state.js'
import type {ProxyState} from '../../../src/model/types.js'
import {hashAndTruncate, nftNameHash} from '../../../src/kube-proxy/nftables-names.js'
import {readState} from '../../../src/readers/read-state.js'
import {readFixture, readFixtureState} from './corpus-shape.js'

function service(state: ProxyState, name: string) {
  const sp = state.services.find((s) => `${s.namespace}/${s.name}` === name)
  if (!sp) throw new Error(`no ${name} in ${state.services.map(displayName).join(', ')}`)
  return sp
}

/** 1-based line numbers of the lines of `text` that contain `needle`. */
function linesWith(text: string, needle: string): number[] {
  return text.split('\n').flatMap((l, i) => (l.includes(needle) ? [i + 1] : []))
}

describe('kube-proxy nftables details (overall)', () => {
  it('reads actions, LoadBalancer source ranges and affinity', async () => {
    const state = await readFixtureState(['nft', 'upstream-overall', 'list.nft'])
    // svc2: ETP=Local without local endpoints -> drop elements on its external IPs and NodePort (§3.4).
    const svc2 = service(state, 'ns2/svc2')
    expect(
      svc2.frontends
        .filter((f) => f.type !== 'ClusterIP')
        .map((f) => [f.type, f.ip, f.port, f.action]),
    ).toEqual([
      ['External', '1.2.3.4', 80, 'drop'],
      ['External', '192.168.99.22', 80, 'drop'],
      ['NodePort', null, 3001, 'drop'],
    ])
    expect(svc2.frontends.find((f) => f.type === 'ClusterIP')!.action).toBe('forward')
    // svc5: the LB IP in firewall-ips is a LoadBalancer with the source range of firewall-B.
    const svc5 = service(state, 'ns5/svc5')
    expect(svc5.frontends.find((f) => f.ip === '5.6.7.8')).toEqual({
      type: 'LoadBalancer',
      ip: '5.6.7.8',
      port: 80,
      sourceRanges: ['203.0.113.0/25'],
      action: 'forward',
    })
    expect(svc5.sessionAffinity).toEqual({type: 'ClientIP', timeoutSeconds: 10800})
    // svc6: no endpoints at all -> reject.
    expect(service(state, 'ns6/svc6').frontends).toEqual([
      {type: 'ClusterIP', ip: '172.30.0.46', port: 80, sourceRanges: [], action: 'reject'},
    ])
    // svc4: numgen random mod 2 -> 1/2 each.
    expect(service(state, 'ns4/svc4').endpoints.map((e) => e.share)).toEqual([0.5, 0.5])
  })

  it('reads the node facts', async () => {
    const state = await readFixtureState(['nft', 'upstream-overall', 'input.nft'])
    expect(state.node).toMatchObject({
      podCIDRs: ['10.0.0.0/8'],
      localDetector: 'cidr',
      masqueradeMark: '0x4000',
      masqueradeAll: false,
      randomFully: true,
      localhostNodePorts: false,
      nodePortAddresses: ['192.168.0.2'],
    })
  })

  it('points service rules at the elements and chains that make them', async () => {
    const text = readFixture('nft', 'upstream-overall', 'input.nft')
    const state = await readFixtureState(['nft', 'upstream-overall', 'input.nft'])
    const lines = service(state, 'ns1/svc1').rules.map((r) => r.line)
    expect(lines).toContain(
      linesWith(text, 'add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80')[0],
    )
    expect(lines).toContain(
      linesWith(text, 'add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80')[0],
    )
  })

  it('badips: the LB source range', async () => {
    const state = await readFixtureState(['nft', 'upstream-badips', 'input.nft'])
    const lb = state.services.flatMap((s) => s.frontends).find((f) => f.type === 'LoadBalancer')
    expect(lb).toMatchObject({ip: '1.2.3.4', sourceRanges: ['203.0.113.0/25']})
  })
})

describe('stale chains (docs/kube-proxy-layouts.md §3.5)', () => {
  it('reports the flushed chains of the deleted ns2/svc2 as info, not as a service', async () => {
    const text = readFixture('nft', 'upstream-syncrepeated-stalechains', 'input.nft')
    const state = await readFixtureState(['nft', 'upstream-syncrepeated-stalechains', 'input.nft'])
    expect(state.services.some((s) => s.name === 'svc2')).toBe(false)
    const stale = state.diagnostics.filter((d) => d.code === 'NFT_STALE_CHAIN')
    expect(stale.every((d) => d.severity === 'info')).toBe(true)
    expect(stale.map((d) => d.source!.line).sort((a, b) => a - b)).toEqual(
      linesWith(text, 'add chain ip kube-proxy').filter((n) =>
        text.split('\n')[n - 1]!.includes('ns2/svc2'),
      ),
    )
  })

  it('emptied: svc3 keeps its reject frontend; its 3 empty chains are leftovers', async () => {
    const state = await readFixtureState(['nft', 'upstream-syncrepeated-emptied', 'list-a.nft'])
    const svc3 = service(state, 'ns3/svc3')
    expect(svc3.endpoints).toEqual([])
    expect(svc3.frontends.map((f) => f.action)).toEqual(['reject'])
    expect(
      state.diagnostics
        .filter((d) => d.code === 'NFT_STALE_CHAIN')
        .map((d) => d.message.split(':')[0]),
    ).toEqual([
      'empty chain service-4AT6LBPK-ns3/svc3/tcp/p80',
      'empty chain endpoint-SWWHDC7X-ns3/svc3/tcp/p80__10.0.3.2/80',
      'empty chain endpoint-TQ2QKHCZ-ns3/svc3/tcp/p80__10.0.3.3/80',
    ])
  })
})

describe('chain-name hash (docs/kube-proxy-layouts.md §3.6)', () => {
  it('reproduces the hashes of the reference and the fixtures', () => {
    expect(nftNameHash('ns1/svc1/tcp/p80')).toBe('ULMVA6XW')
    expect(nftNameHash('ns1/svc1/tcp/p80__10.180.0.1/80')).toBe('5OJB2KTY')
    expect(hashAndTruncate('ns5/svc5/tcp/p80')).toBe('HVFWP5L3-ns5/svc5/tcp/p80')
  })

  it('truncates names over 240 characters to 237 + "..."', () => {
    const long = `ns/${'s'.repeat(250)}/tcp/p`
    const out = hashAndTruncate(long)
    expect(out).toHaveLength(240)
    expect(out.endsWith('...')).toBe(true)
    expect(out.slice(0, 9)).toBe(`${nftNameHash(long)}-`)
  })

  it('warns when a chain name does not carry kube-proxy hash, and still reads the service', async () => {
    const text = readFixture('nft', 'upstream-overall', 'list.nft').replaceAll(
      'ULMVA6XW',
      'AAAAAAAA',
    )
    const state = await readState({sources: [{path: 'tampered.nft', text}]})
    const bad = state.diagnostics.filter((d) => d.code === 'NFT_HASH_MISMATCH')
    expect(bad).toHaveLength(1)
    expect(bad[0]!.severity).toBe('warning')
    expect(bad[0]!.message).toContain('service-ULMVA6XW-ns1/svc1/tcp/p80')
    expect(service(state, 'ns1/svc1').endpoints.map((e) => e.ip)).toEqual(['10.180.0.1'])
  })
})

describe('nft -j positions', () => {
  it('one-line JSON: the line is 1 + the index of the object in "nftables"', async () => {
    const text = readFixture('nft-json', 'upstream-overall', 'input.json')
    const objects = (JSON.parse(text) as {nftables: Record<string, {name?: string}>[]}).nftables
    const index = objects.findIndex((o) => o.map?.name === 'service-ips')
    const state = await readFixtureState(['nft-json', 'upstream-overall', 'input.json'])
    expect(service(state, 'ns1/svc1').rules.map((r) => r.line)).toContain(index + 1)
  })

  it('pretty-printed JSON: the line where the object starts', async () => {
    const lines = readFixture('nft-json', 'pretty', 'input.json').split('\n')
    const state = await readFixtureState(['nft-json', 'pretty', 'input.json'])
    const starts = service(state, 'ns1/svc1').rules.map((r) => r.line)
    const mapStart = starts.find((n) => lines[n]?.includes('"map"'))
    expect(mapStart).toBeDefined()
    expect(lines[mapStart! - 1]!.trim()).toBe('{')
    expect(lines.slice(mapStart!, mapStart! + 4).join('\n')).toContain('"name": "service-ips"')
  })
})
