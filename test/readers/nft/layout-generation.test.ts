/**
 * Layout generations of kube-proxy's nftables mode (docs/kube-proxy-layouts.md §3.8): which
 * releases wrote a dump, mixed generations, and what the 1.36/1.37 objects tell the reader
 * (hairpin-connections: which endpoints are on this node; comments cut at 128 bytes; the 1.37
 * pre-release `dnat ip addr . port to`). fixtures/nft/kube-proxy-1.37 is hand-written (its
 * PROVENANCE) and was loaded into a namespace to make list.nft.
 */
import {describe, expect, it} from 'vitest'
import {readState} from '../../../src/readers/read-state.js'
import {runKpInProcess} from '../../helpers/run-in-process.js'
import {fixturePath, readFixture, readFixtureState} from './corpus-shape.js'

const FIXTURE = ['nft', 'kube-proxy-1.37']
const LONG =
  'loft-acme-platform-services-team-dev-v-shared-workloads-ns-001/my-api-svc-x-my-api-namespace-x-acme-shared-vcluster--a1b2c3d4e'

const read = (text: string) => readState({sources: [{path: 'x.nft', text}]})

describe('nftables layout generations', () => {
  for (const file of ['input.nft', 'list.nft']) {
    it(`a 1.37 dump (${file}) reads without warnings and says 1.37+`, async () => {
      const state = await readFixtureState([...FIXTURE, file])
      expect(state.diagnostics.filter((d) => d.severity !== 'info')).toEqual([])
      expect(state.node.kubeProxyLayouts).toEqual(['1.37+'])
      expect(state.services.map((s) => `${s.namespace}/${s.name}:${s.portName}`).sort()).toEqual(
        [
          'default/kubernetes:https',
          'default/web:http',
          'kproxy-lab/backend-api:http',
          `${LONG}:http`,
        ].sort(),
      )
    })
  }

  it('hairpin-connections settles which endpoints are on this node, for every service', async () => {
    const state = await readFixtureState([...FIXTURE, 'list.nft'])
    const local = Object.fromEntries(
      state.services.map((s) => [s.name, s.endpoints.map((e) => [e.ip, e.port, e.local])]),
    )
    expect(local).toEqual({
      kubernetes: [['192.168.0.231', 6443, false]],
      web: [
        ['10.244.1.5', 8080, false],
        ['10.244.2.7', 8080, false],
      ],
      'backend-api': [
        ['10.244.0.10', 9898, true],
        ['10.244.0.8', 9898, true],
      ],
      'my-api-svc-x-my-api-namespace-x-acme-shared-vcluster--a1b2c3d4e': [
        ['10.244.2.9', 8080, false],
      ],
    })
  })

  it('a comment cut at 128 bytes is matched to its service by the frontend, not made a service', async () => {
    const state = await readFixtureState([...FIXTURE, 'input.nft'])
    const long = state.services.filter((s) => s.namespace?.startsWith('loft-'))
    expect(long).toHaveLength(1)
    expect(long[0]!.portName).toBe('http')
    expect(long[0]!.frontends.map((f) => [f.type, f.port, f.action])).toEqual([
      ['ClusterIP', 80, 'forward'],
      ['NodePort', 30080, 'drop'],
    ])
    expect(state.diagnostics.map((d) => d.code)).toContain('NFT_COMMENT_CUT')
  })

  it('a cut comment no chain explains keeps only what it proves (port name unknown)', async () => {
    const text = readFixture(...FIXTURE, 'input.nft').replace(
      'add element ip kube-proxy service-nodeports { tcp . 30080',
      'add element ip kube-proxy service-nodeports { tcp . 30081',
    )
    const state = await read(text.replace(/service-ips \{ 10\.96\.0\.50[^\n]*\n/, ''))
    const cut = state.services.find((s) => s.frontends.some((f) => f.port === 30080))!
    expect([cut.namespace, cut.portName]).toEqual([
      'loft-acme-platform-services-team-dev-v-shared-workloads-ns-001',
      null,
    ])
  })

  it('the 1.37 pre-release `dnat ip addr . port to IP . PORT` keeps the endpoint port', async () => {
    const text = readFixture(...FIXTURE, 'input.nft').replace(
      'meta l4proto tcp dnat to 192.168.0.231:6443',
      'meta l4proto tcp dnat ip addr . port to 192.168.0.231 . 6443',
    )
    const state = await read(text)
    const svc = state.services.find((s) => s.name === 'kubernetes')!
    expect(svc.endpoints.map((e) => [e.ip, e.port])).toEqual([['192.168.0.231', 6443]])
    expect(state.diagnostics.filter((d) => d.severity !== 'info')).toEqual([])
    expect(state.node.kubeProxyLayouts).toEqual(['1.37+'])
  })

  it('the corpus of kube-proxy before 1.36 says so', async () => {
    const state = await readFixtureState(['nft', 'upstream-overall', 'input.nft'])
    expect(state.node.kubeProxyLayouts).toEqual(['before 1.36'])
    expect(state.diagnostics.map((d) => d.code)).not.toContain('NFT_LAYOUT_MIXED')
  })

  it('a table with objects of two generations is a warning naming both', async () => {
    const text =
      readFixture(...FIXTURE, 'input.nft') +
      'add chain ip kube-proxy mark-for-masquerade\nadd rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000\n'
    const state = await read(text)
    expect(state.node.kubeProxyLayouts).toEqual(['before 1.36', '1.37+'])
    const mixed = state.diagnostics.filter((d) => d.code === 'NFT_LAYOUT_MIXED')
    expect(mixed).toHaveLength(1)
    expect(mixed[0]!.severity).toBe('warning')
    expect(mixed[0]!.message).toContain('mark-for-masquerade')
  })

  it('kp list names the layout after the mode, and --json in the node', async () => {
    const path = fixturePath(...FIXTURE, 'list.nft')
    const text = await runKpInProcess(['list', '-f', path, '--no-color'])
    expect(text.stdout.trimEnd()).toMatch(/4 service ports \(nftables mode, 1\.37\+ layout\)$/)
    const json = await runKpInProcess(['list', '-f', path, '--json'])
    expect(JSON.parse(json.stdout).node.kubeProxyLayouts).toEqual(['1.37+'])
  })

  it('a saved state keeps kubeProxyLayouts, and one saved before the field still reads', async () => {
    const state = await readFixtureState([...FIXTURE, 'list.nft'])
    const saved = JSON.stringify({...state, schemaVersion: 1, kind: 'ProxyState'})
    const again = await readState({sources: [{path: 'state.json', text: saved}]})
    expect(again.node.kubeProxyLayouts).toEqual(['1.37+'])
    const before = JSON.parse(saved) as {node: Record<string, unknown>}
    delete before.node.kubeProxyLayouts
    const old = await readState({sources: [{path: 'old.json', text: JSON.stringify(before)}]})
    expect(old.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
    expect(old.node.kubeProxyLayouts).toBeUndefined()
  })
})
