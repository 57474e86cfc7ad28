/**
 * A property over many shapes of Service and EndpointSlice: the rules kp renders from cluster
 * objects, read back, are the state it rendered them from (`kp diff` finds no service port
 * changed), in each mode and through a migration from one mode to another. The shapes come from a
 * seeded generator (types, families, policies, affinity, ranges, ready / serving-terminating /
 * not-serving endpoints on this node and others, split slices). Runs of it found four bugs fixed
 * with their own tests (terminating-local.test.ts, ../readers/kube/build.test.ts,
 * ../analyze/diff.test.ts, ../readers/iptables/detector-evidence.test.ts).
 *
 * Left out by design: nftables -> iptables turns a LoadBalancer IP into an externalIP (nftables
 * writes both alike; RENDER_EXTERNAL_KIND_GUESSED says so), so that chain is compared with
 * External frontends matched by address only.
 */
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import type {Mode, ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderIpvs} from '../../src/render/ipvs/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import type {RenderOptions, RenderResult} from '../../src/render/types.js'

type Obj = Record<string, unknown>

/** A small deterministic generator (an LCG): the same shapes on every run. */
function generator(seed: number) {
  let s = seed
  const rnd = (): number => {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    return s / 0x7fffffff
  }
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!
  const chance = (p: number): boolean => rnd() < p
  return {rnd, pick, chance}
}

function clusterObjects(seed: number, services: number): string {
  const {rnd, pick, chance} = generator(seed)
  const items: Obj[] = []
  for (let i = 0; i < services; i++) {
    const type = pick(['ClusterIP', 'NodePort', 'LoadBalancer', 'ClusterIP'])
    const dual = chance(0.15)
    const v6 = !dual && chance(0.15)
    const fams = dual ? ['IPv4', 'IPv6'] : v6 ? ['IPv6'] : ['IPv4']
    const cips = fams.map((f) =>
      f === 'IPv4' ? `10.96.${i >> 8}.${(i & 255) + 1}` : `fd00:96::${(i + 1).toString(16)}`,
    )
    const nports = chance(0.3) ? 2 : 1
    const ports: Obj[] = []
    for (let p = 0; p < nports; p++) {
      ports.push({
        name: nports > 1 || chance(0.5) ? `p${p}` : '',
        port: 80 + p,
        protocol: pick(['TCP', 'TCP', 'UDP', 'SCTP']),
        targetPort: 8080 + p,
        ...(type !== 'ClusterIP' ? {nodePort: 30000 + i * 2 + p} : {}),
      })
    }
    const spec: Obj = {
      type,
      clusterIP: cips[0],
      clusterIPs: cips,
      ipFamilies: fams,
      ipFamilyPolicy: dual ? 'RequireDualStack' : 'SingleStack',
      ports,
    }
    if (chance(0.3)) spec.internalTrafficPolicy = 'Local'
    if (type !== 'ClusterIP' && chance(0.4)) spec.externalTrafficPolicy = 'Local'
    if (type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local')
      spec.healthCheckNodePort = 32000 + i
    if (chance(0.2))
      spec.externalIPs = [fams[0] === 'IPv4' ? `192.168.50.${i + 1}` : `2001:db8::${i + 1}`]
    if (chance(0.2)) {
      spec.sessionAffinity = 'ClientIP'
      if (chance(0.5))
        spec.sessionAffinityConfig = {clientIP: {timeoutSeconds: pick([10, 300, 10800])}}
    }
    if (type === 'LoadBalancer' && chance(0.4))
      spec.loadBalancerSourceRanges = [fams[0] === 'IPv4' ? '203.0.113.0/24' : '2001:db8:1::/48']
    const namespace = pick(['a', 'b'])
    const svc: Obj = {apiVersion: 'v1', kind: 'Service', metadata: {name: `s${i}`, namespace}, spec}
    if (type === 'LoadBalancer')
      svc.status = {
        loadBalancer: {
          ingress: fams.map((f, k) => ({
            ip: f === 'IPv4' ? `5.6.${i}.${k + 1}` : `2001:db8:5::${i + 1}`,
          })),
        },
      }
    items.push(svc)
    for (const f of fams) {
      const eps: Obj[] = []
      const n = Math.floor(rnd() * 5)
      for (let e = 0; e < n; e++) {
        const ready = chance(0.8)
        const terminating = !ready && chance(0.7)
        eps.push({
          addresses: [
            f === 'IPv4' ? `10.244.${i}.${e + 1}` : `fd00:244:${i.toString(16)}::${e + 1}`,
          ],
          conditions: {ready, serving: ready || terminating, terminating},
          nodeName: pick(['me', 'other', 'other2']),
        })
      }
      const slicePorts = ports.map((p) => ({
        name: p.name,
        port: p.targetPort,
        protocol: p.protocol,
      }))
      const slice = (name: string, endpoints: Obj[]): Obj => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {name, namespace, labels: {'kubernetes.io/service-name': `s${i}`}},
        addressType: f,
        ports: slicePorts,
        endpoints,
      })
      if (eps.length > 1 && chance(0.3)) {
        const cut = 1 + Math.floor(rnd() * (eps.length - 1))
        items.push(slice(`s${i}-${f}-0`, eps.slice(0, cut)), slice(`s${i}-${f}-1`, eps.slice(cut)))
      } else items.push(slice(`s${i}-${f}`, eps))
    }
  }
  return JSON.stringify({apiVersion: 'v1', kind: 'List', items})
}

const OPTS: RenderOptions = {
  podCIDRs: ['10.244.0.0/16', 'fd00:244::/48'],
  nodeIPs: ['192.168.1.10', '2001:db8:ff::10'],
}
const RENDER: Record<'iptables' | 'nftables', (s: ProxyState, o: RenderOptions) => RenderResult> = {
  iptables: renderIptables,
  nftables: renderNftables,
}

const readBack = (
  r: RenderResult,
  mode: Mode,
  extra: {cluster?: {path: string; text: string}[]; node?: string} = {},
): Promise<ProxyState> =>
  readState({sources: r.files.map((f) => ({path: f.name, text: f.text}))}, {mode, ...extra})

/** The service-port differences, with an externalIP standing for a LoadBalancer IP it cannot be told from. */
function differences(
  a: ProxyState,
  b: ProxyState,
  lbAsExternal = false,
  unknownLocalityListed = false,
): string[] {
  const out: string[] = []
  for (const s of diffStates(a, b).services) {
    const fields = s.differences.filter(
      (d) =>
        // iptables rules do not show locality outside Local policies; nftables 1.36+ lists such
        // endpoints in hairpin-connections (RENDER_HAIRPIN_LOCALITY_UNKNOWN), so they read back local.
        !(unknownLocalityListed && d.field.endsWith('.local') && d.a === false && d.b === true) &&
        !(
          lbAsExternal &&
          d.field === 'frontend' &&
          /^(LoadBalancer|ExternalIP) /.test(String(d.a ?? d.b))
        ),
    )
    if (fields.length > 0 || s.change !== 'changed')
      out.push(`${s.service} ${s.change}: ${JSON.stringify(fields)}`)
  }
  return out
}

const SEEDS = Array.from({length: 12}, (_, k) => 1000 + k)

describe('cluster objects -> rules -> read back: no service port changed', () => {
  it.each(SEEDS)('seed %i: iptables, nftables, ipvs, and iptables <-> nftables', async (seed) => {
    const text = clusterObjects(seed, 6)
    const src = [{path: 'cluster.json', text}]
    const state = await readState({sources: src}, {node: 'me'})
    for (const mode of ['iptables', 'nftables'] as const) {
      const back = await readBack(RENDER[mode](state, OPTS), mode)
      const families = new Set(back.services.map((sp) => sp.family))
      expect(
        differences(
          {...state, services: state.services.filter((sp) => families.has(sp.family))},
          back,
        ),
        mode,
      ).toEqual([])
    }
    const ipvsState = await readState({sources: src}, {node: 'me', mode: 'ipvs'})
    expect(
      differences(
        ipvsState,
        await readBack(renderIpvs(ipvsState, OPTS), 'ipvs', {cluster: src, node: 'me'}),
      ),
      'ipvs',
    ).toEqual([])
    for (const [first, second] of [
      ['iptables', 'nftables'],
      ['nftables', 'iptables'],
    ] as const) {
      const once = await readBack(RENDER[first](state, OPTS), first)
      const rendered = RENDER[second](once, OPTS)
      const twice = await readBack(rendered, second)
      const families = new Set(twice.services.map((sp) => sp.family))
      const listed = rendered.findings.some((f) => f.id === 'RENDER_HAIRPIN_LOCALITY_UNKNOWN')
      expect(
        differences(
          {...state, services: state.services.filter((sp) => families.has(sp.family))},
          twice,
          first === 'nftables',
          listed,
        ),
        `${first} -> ${second}`,
      ).toEqual([])
    }
  })
})
