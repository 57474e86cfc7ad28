/**
 * Conformance with kube-proxy's own test expectations: each fixtures/iptables/<case>/input.rules
 * is read through the real front door (sniff -> parse -> build), mapped onto the corpus
 * `expect.json` schema (fixtures/PROVENANCE.md), and compared with the copy of
 * that file in the fixture. The realsave-* cases are the same dumps after a trip through a
 * kernel and `iptables-save`; they must give the same model as the restore-input form.
 */
import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {servicePortName} from '../../../src/core/state.js'
import type {ProxyState, ServicePort} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const FIXTURES = join(ROOT, 'fixtures/iptables')

interface ExpectedServicePort {
  namespace: string
  name: string
  port_name: string
  protocol: string
  cluster_ip: string | null
  port: number | null
  node_port: number | null
  external_ips: string[]
  load_balancer_ips: string[]
  session_affinity_seconds: number | null
  external_traffic_policy: 'Cluster' | 'Local'
  internal_traffic_policy: 'Cluster' | 'Local'
  endpoints: Array<{ip: string; port: number; local: boolean | null}>
}

/**
 * The model -> expect.json mapping, explicitly:
 * * the model says null for a policy the dump cannot show; the corpus writes "Cluster" for
 *   "default or not observable", so null maps to "Cluster";
 * * frontends split by type; an "External" frontend (externalIP or LB IP the dump cannot tell
 *   apart) has no place in the schema and makes the comparison fail on purpose.
 */
function toExpectSchema(sp: ServicePort): ExpectedServicePort {
  const of = (type: string) => sp.frontends.filter((f) => f.type === type)
  if (of('External').length > 0)
    throw new Error(
      `${servicePortName(sp)} has External frontends the corpus schema cannot express`,
    )
  const cluster = of('ClusterIP')[0]
  return {
    namespace: sp.namespace!,
    name: sp.name!,
    port_name: sp.portName!,
    protocol: sp.protocol,
    cluster_ip: cluster?.ip ?? null,
    port: cluster?.port ?? null,
    node_port: of('NodePort')[0]?.port ?? null,
    external_ips: of('ExternalIP')
      .map((f) => f.ip!)
      .sort(),
    load_balancer_ips: of('LoadBalancer')
      .map((f) => f.ip!)
      .sort(),
    session_affinity_seconds: sp.sessionAffinity?.timeoutSeconds ?? null,
    external_traffic_policy: sp.externalTrafficPolicy ?? 'Cluster',
    internal_traffic_policy: sp.internalTrafficPolicy ?? 'Cluster',
    endpoints: sp.endpoints.map((e) => ({ip: e.ip!, port: e.port!, local: e.local})),
  }
}

const read = new Map<string, Promise<ProxyState>>()

/** Each fixture is read once per file; tests must not change the state they get. */
function readFixture(dir: string): Promise<ProxyState> {
  let state = read.get(dir)
  if (!state) {
    const path = join('fixtures/iptables', dir, 'input.rules')
    state = readState({sources: [{path, text: readFileSync(join(ROOT, path), 'utf8')}]})
    read.set(dir, state)
  }
  return state
}

/** The state without where things were seen: what the two text forms must agree on. */
function withoutPositions(state: ProxyState): unknown {
  return {
    services: state.services.map(({rules: _rules, ...rest}) => rest),
    node: state.node,
    foreign: state.foreign.map(({source: _source, ...rest}) => rest),
    problems: state.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.code),
  }
}

/** Every fixture that carries a copy of a corpus expectation. */
const cases = readdirSync(FIXTURES)
  .filter((d) => existsSync(join(FIXTURES, d, 'expected.json')))
  .sort()

/** Other text forms of the same rules: [form, its source form]. */
const twins: Array<[string, string]> = [
  ...cases
    .filter((c) => c.startsWith('realsave-'))
    .map((c): [string, string] => [c, c.replace('realsave-', 'upstream-')]),
  ['realsave-handmade-ipv6', 'handmade-ipv6'],
  ['list-rules-overall', 'upstream-overall'],
]

describe('iptables reader conformance with the kube-proxy corpus', () => {
  it('has the 6 upstream cases, their 6 real iptables-save twins and the -S form', () => {
    expect(cases.filter((c) => c.startsWith('upstream-'))).toHaveLength(6)
    expect(cases.filter((c) => c.startsWith('realsave-'))).toHaveLength(6)
    expect(cases).toContain('list-rules-overall')
  })

  for (const dir of cases) {
    describe(dir, () => {
      it('maps onto the corpus expectation', async () => {
        const state = await readFixture(dir)
        const expected = JSON.parse(
          readFileSync(join(FIXTURES, dir, 'expected.json'), 'utf8'),
        ) as ExpectedServicePort[]
        expect(state.mode).toBe('iptables')
        expect(state.diagnostics.filter((d) => d.severity !== 'info')).toEqual([])
        expect(state.services.map(toExpectSchema)).toEqual(expected)
      })

      it('recovers the loadBalancerSourceRanges fixtures/PROVENANCE.md lists', async () => {
        const state = await readFixture(dir)
        const ranges = JSON.parse(
          readFileSync(join(FIXTURES, dir, 'source-ranges.json'), 'utf8'),
        ) as Record<string, string[]>
        const seen: Record<string, string[]> = {}
        for (const sp of state.services) {
          const lbRanges = sp.frontends
            .filter((f) => f.type === 'LoadBalancer')
            .flatMap((f) => f.sourceRanges)
          if (lbRanges.length > 0) seen[servicePortName(sp)!] = [...new Set(lbRanges)]
        }
        expect(seen).toEqual(ranges)
      })

      it('gives every service port with endpoints shares that sum to 1', async () => {
        const state = await readFixture(dir)
        for (const sp of state.services.filter((s) => s.endpoints.length > 0)) {
          const total = sp.endpoints.reduce((a, e) => a + (e.share ?? Number.NaN), 0)
          expect(Math.abs(total - 1)).toBeLessThan(1e-6)
        }
      })
    })
  }

  for (const [dir, origin] of twins) {
    it(`${dir} gives the same model as ${origin}`, async () => {
      const other = await readFixture(dir)
      const restore = await readFixture(origin)
      if (dir.startsWith('realsave-'))
        expect(other.sources[0]?.tool).toMatch(/^ip6?tables-save v1\.8\.9 \(nf_tables\)$/)
      expect(withoutPositions(other)).toEqual(withoutPositions(restore))
    })
  }
})
