/**
 * Stage 2, the SEP jumps of a service port: each SEP chain is one endpoint of a service port
 * however many rules jump to it (affinity rules, SVL), in large service ports too (the builder
 * scans a few and indexes many), and the orphan check still sees every SEP chain no service
 * jumps to when another is jumped to from two services.
 */
import {describe, expect, it} from 'vitest'
import type {ServicePort} from '../../../src/model/types.js'
import {buildIptablesState} from '../../../src/readers/iptables/build.js'
import {iptablesChainHash, iptablesEndpointHash} from '../../../src/kube-proxy/iptables-names.js'
import {parse} from '../../../src/readers/iptables/parse.js'
import {codes, readText, service} from './helpers.js'

const H = (spn: string) => iptablesChainHash(spn, 'tcp')
const SEP = (spn: string, ep: string) => `KUBE-SEP-${iptablesEndpointHash(spn, 'tcp', ep)}`

/** A nat table with the given rules, every chain they append to declared. */
function natDump(rules: string[], extraChains: string[] = []): string {
  const declared = new Set(extraChains)
  for (const line of rules) declared.add(/^-A (\S+)/.exec(line)![1]!)
  declared.delete('KUBE-SERVICES')
  return [
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    ...[...declared].map((c) => `:${c} - [0:0]`),
    ...rules,
    'COMMIT',
    '',
  ].join('\n')
}

/** A ClusterIP service port as kube-proxy writes it, with session affinity when `affinity`. */
function clusterService(spn: string, ip: string, endpoints: string[], affinity: boolean): string[] {
  const h = H(spn)
  return [
    `-A KUBE-SERVICES -d ${ip}/32 -p tcp -m comment --comment "${spn} cluster IP" -m tcp --dport 80 -j KUBE-SVC-${h}`,
    ...(affinity
      ? endpoints.map(
          (ep) =>
            `-A KUBE-SVC-${h} -m recent --name ${SEP(spn, ep)} --mask 255.255.255.255 --rsource --rcheck --seconds 10800 --reap -j ${SEP(spn, ep)}`,
        )
      : []),
    ...endpoints.map(
      (ep, i) =>
        `-A KUBE-SVC-${h}${i < endpoints.length - 1 ? ` -m statistic --mode random --probability ${(1 / (endpoints.length - i)).toFixed(10)}` : ''} -j ${SEP(spn, ep)}`,
    ),
    ...endpoints.map((ep) => `-A ${SEP(spn, ep)} -p tcp -m tcp -j DNAT --to-destination ${ep}`),
  ]
}

const addresses = (n: number): string[] =>
  Array.from({length: n}, (_, i) => `10.1.${i >> 8}.${i & 255}:8080`)
/** The endpoints of a service port as ip:port, sorted (the reader's front door orders them). */
const endpointsOf = (sp: ServicePort): string[] =>
  sp.endpoints.map((e) => `${e.ip}:${e.port}`).sort()

describe('SEP chains jumped to more than once', () => {
  it.each([3, 40])(
    '%i endpoints with session affinity: each SEP chain is one endpoint, with the share of its cascade step',
    async (n) => {
      const spn = 'ns/sticky:http'
      const state = await readText(natDump(clusterService(spn, '172.30.0.1', addresses(n), true)))
      const sp = service(state, `${spn}/tcp`)
      expect(sp.sessionAffinity).toEqual({type: 'ClientIP', timeoutSeconds: 10800})
      expect(endpointsOf(sp)).toEqual(addresses(n).sort())
      for (const e of sp.endpoints) expect(e.share).toBeCloseTo(1 / n, 8)
      expect(new Set(sp.rules.map((r) => r.line)).size).toBe(sp.rules.length)
      expect(codes(state)).toEqual([])
    },
  )

  it('a SEP chain jumped to from two services is an endpoint of both, and another one jumped to from none is still an orphan', async () => {
    const a = 'ns/a:p'
    const b = 'ns/b:p'
    const shared = SEP(a, '10.0.0.1:80')
    const orphan = SEP(a, '10.0.0.2:80')
    const state = await readText(
      natDump([
        ...clusterService(a, '172.30.0.1', ['10.0.0.1:80'], false),
        `-A KUBE-SERVICES -d 172.30.0.2/32 -p tcp -m comment --comment "${b} cluster IP" -m tcp --dport 80 -j KUBE-SVC-${H(b)}`,
        `-A KUBE-SVC-${H(b)} -j ${shared}`,
        `-A ${orphan} -p tcp -m tcp -j DNAT --to-destination 10.0.0.2:80`,
      ]),
    )
    expect(service(state, `${a}/tcp`).endpoints.map((e) => e.ip)).toEqual(['10.0.0.1'])
    expect(service(state, `${b}/tcp`).endpoints.map((e) => e.ip)).toEqual(['10.0.0.1'])
    const orphans = state.diagnostics
      .filter((d) => d.code === 'IPT_ORPHAN_CHAIN')
      .map((d) => d.message)
    expect(orphans).toEqual([
      `${orphan} is not jumped to by any service chain; not read as an endpoint`,
    ])
  })

  it('a parsed dump built twice reports its orphan SEP chain both times (the builder marks the chains it saw jumped to on the chains themselves)', () => {
    const a = 'ns/a:p'
    const orphan = SEP(a, '10.0.0.2:80')
    const text = natDump([
      ...clusterService(a, '172.30.0.1', ['10.0.0.1:80'], false),
      `-A ${orphan} -p tcp -m tcp -j DNAT --to-destination 10.0.0.2:80`,
    ])
    const parsed = parse({path: 'twice.rules', text}, {})
    for (let i = 0; i < 2; i++) {
      const state = buildIptablesState([parsed], {})
      expect(
        state.diagnostics.filter((d) => d.code === 'IPT_ORPHAN_CHAIN').map((d) => d.message),
      ).toEqual([`${orphan} is not jumped to by any service chain; not read as an endpoint`])
      expect(service(state, `${a}/tcp`).endpoints.map((e) => e.ip)).toEqual(['10.0.0.1'])
    }
  })

  it('two SEP chains for one ip:port give one endpoint, in a large service port too', async () => {
    const spn = 'ns/big:http'
    const eps = [...addresses(20), '10.1.0.3:8080-8080']
    const state = await readText(natDump(clusterService(spn, '172.30.0.3', eps, false)))
    const sp = service(state, `${spn}/tcp`)
    expect(endpointsOf(sp)).toEqual(addresses(20).sort())
    expect(sp.endpoints.find((e) => e.ip === '10.1.0.3')!.share).toBeCloseTo(1 / 21, 8)
  })

  it('a SEP chain that is never declared, jumped to by an affinity rule and a cascade rule, is one missing chain, reported once', async () => {
    // The builder finds a jump's draft again by its chain; an undeclared chain has none, so by its name.
    const spn = 'ns/sticky:http'
    const eps = addresses(2)
    const missing = SEP(spn, eps[1]!)
    const rules = clusterService(spn, '172.30.0.1', eps, true).filter(
      (line) => !line.startsWith(`-A ${missing} `),
    )
    const dump = natDump(rules)
    expect(dump).not.toContain(`:${missing} `)
    const state = await readText(dump)
    expect(endpointsOf(service(state, `${spn}/tcp`))).toEqual([eps[0]])
    const reports = state.diagnostics.filter((d) => d.code === 'IPT_MISSING_CHAIN')
    expect(reports.map((d) => d.message)).toEqual([
      `${missing} is jumped to but never declared; no endpoint is read for it`,
    ])
  })
})

describe('the rule references of a service port, as the builder gives them', () => {
  it.each([3, 40])(
    'are every line read for it, once each and in line order (%i endpoints; sorted by insertion or natively)',
    async (n) => {
      const {parse} = await import('../../../src/readers/iptables/parse.js')
      const {buildIptablesState} = await import('../../../src/readers/iptables/build.js')
      const spn = 'ns/web:http'
      // The SEP chains' rules come before the SVC chain's, as in a save: the builder reads them
      // after it, so the lines it keeps are out of order and must be sorted.
      const rules = clusterService(spn, '10.96.0.10', addresses(n), false)
      const seps = rules.filter((r) => r.startsWith('-A KUBE-SEP-'))
      const text = natDump([...seps, ...rules.filter((r) => !r.startsWith('-A KUBE-SEP-'))])
      // Straight from the builder: readState's sortState would hide an unsorted list.
      const state = buildIptablesState([parse({path: 't', text})], {mode: 'iptables'})
      const [sp] = state.services
      const lines = sp!.rules.map((r) => r.line)
      const expected = text
        .split('\n')
        .flatMap((line, i) => (line.startsWith('-A ') ? [i + 1] : []))
      expect(lines).toEqual(expected)
      expect(lines.length).toBeGreaterThan(n === 40 ? 64 : 0)
      expect(sp!.rules.every((r) => r.path === 't')).toBe(true)
    },
  )

  it.each([
    [3, 0],
    [3, 1],
    [3, 5],
    [40, 5],
    [40, 200],
  ])(
    'are the first of them in line order with refsPerPort (%i endpoints, %i kept)',
    async (n, keep) => {
      const {parse} = await import('../../../src/readers/iptables/parse.js')
      const {buildIptablesState} = await import('../../../src/readers/iptables/build.js')
      const rules = clusterService('ns/web:http', '10.96.0.10', addresses(n), false)
      // SEP rules first, read last: the lines kept must be the smallest, not the first read.
      const text = natDump([
        ...rules.filter((r) => r.startsWith('-A KUBE-SEP-')),
        ...rules.filter((r) => !r.startsWith('-A KUBE-SEP-')),
      ])
      const all = buildIptablesState([parse({path: 't', text})], {mode: 'iptables'}).services[0]!
        .rules
      const kept = buildIptablesState([parse({path: 't', text})], {
        mode: 'iptables',
        refsPerPort: keep,
      }).services[0]!.rules
      expect(all.length).toBeGreaterThan(Math.min(keep, 64))
      expect(kept).toEqual(all.slice(0, keep))
    },
  )
})
