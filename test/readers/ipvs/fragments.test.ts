/**
 * IPVS fragments (issue 21 §2): an `ipvsadm` listing without the node's `ipset save` cannot say
 * whether a virtual server is a LoadBalancer IP that admits only some clients, a NodePort under
 * externalTrafficPolicy=Local, or which endpoints are local. Those answers are unknown, and the
 * state names the sets and `ipset save`; with the sets they are answered.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {explainService} from '../../../src/analyze/explain.js'
import {parseServiceQuery} from '../../../src/analyze/explain-query.js'
import {displayName} from '../../../src/core/state.js'
import type {ProxyState, ServicePort} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const G = 'fixtures/ipvs/generated/'
const LN = `${G}ipvsadm-Ln.txt`
const IPSET_SAVE = `${G}ipset-save.ipvs-mode.txt`
const IPTABLES = `${G}iptables-save.ipvs-mode.nft-backend.txt`
const text = (rel: string) => readFileSync(`${ROOT}${rel}`, 'utf8')
const read = (sources: Array<[string, string]>): Promise<ProxyState> =>
  readState({sources: sources.map(([path, t]) => ({path, text: t}))})

function byVip(state: ProxyState, ip: string): ServicePort {
  const sp = state.services.find((s) => s.frontends.some((f) => f.ip === ip))
  if (!sp) throw new Error(`no ${ip}: ${state.services.map(displayName).join(', ')}`)
  return sp
}

describe('an ipvsadm listing without ipset save', () => {
  it('marks the frontends whose kind the sets decide unknown, naming the sets and `ipset save`', async () => {
    const state = await read([[LN, text(LN)]])
    const sp = byVip(state, '10.0.100.10') // default/lb: a LoadBalancer with sourceRanges and ETP=Local
    expect(sp.incomplete?.collect).toBe('ipset save')
    expect(sp.incomplete?.missing).toContain('KUBE-LOAD-BALANCER-SOURCE-CIDR')
    const fe = sp.frontends.find((f) => f.ip === '10.0.100.10')!
    expect(fe.incomplete?.missing).toContain('KUBE-LOAD-BALANCER')
    const q = parseServiceQuery('10.0.100.10:443', undefined)
    if ('invalid' in q) throw new Error(q.invalid)
    const result = explainService(state, q)
    if (result.kind !== 'ExplainResult') throw new Error('no match')
    const verdict = result.matches[0]!.frontends[0]!.verdict
    expect(verdict).toMatch(
      /^Unknown: .*KUBE-LOAD-BALANCER-SOURCE-CIDR.* collect with `ipset save`/,
    )
  })

  it('with the sets, the same frontends are answered', async () => {
    const state = await read([
      [LN, text(LN)],
      [IPSET_SAVE, text(IPSET_SAVE)],
      [IPTABLES, text(IPTABLES)],
    ])
    for (const sp of state.services) {
      expect(sp.incomplete, displayName(sp)).toBeUndefined()
      for (const f of sp.frontends) expect(f.incomplete).toBeUndefined()
    }
    const lb = byVip(state, '10.0.100.10').frontends.find((f) => f.ip === '10.0.100.10')!
    expect(lb.type).toBe('LoadBalancer')
    expect(lb.sourceRanges.length).toBeGreaterThan(0)
  })

  it('ipset save without KUBE-LOOP-BACK: endpoint locality is unknown and the state says which set is missing', async () => {
    const noLoopback = text(IPSET_SAVE)
      .split('\n')
      .filter((l) => !/ KUBE-LOOP-BACK( |$)/.test(l))
      .join('\n')
    const state = await read([
      [LN, text(LN)],
      [IPSET_SAVE, noLoopback],
    ])
    const sp = byVip(state, '10.96.100.20')
    expect(sp.endpoints.every((e) => e.local === null)).toBe(true)
    expect(sp.incomplete).toEqual({missing: ['KUBE-LOOP-BACK'], collect: 'ipset save'})
  })
})

describe('an ipvsadm listing cut inside a virtual server (issue 21 §1)', () => {
  // Cut inside the first real server row of TCP 10.96.200.30:443 (fixture lines 28-30).
  const full = text(LN)
  const cutText = full.slice(
    0,
    full.indexOf('  -> 10.244.1.6:8443', full.indexOf('10.96.200.30')) + 12,
  )

  it('its frontend is unknown, not REJECT for want of real servers, and the cut is an error', async () => {
    const state = await read([
      [LN, cutText],
      [IPSET_SAVE, text(IPSET_SAVE)],
      [IPTABLES, text(IPTABLES)],
    ])
    expect(state.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual([
      'IPVS_TRUNCATED',
    ])
    const sp = byVip(state, '10.96.200.30')
    expect(sp.incomplete).toEqual({
      missing: [`the rest of TCP 10.96.200.30:443 (the listing is cut at ${LN}:29)`],
      collect: 'ipvsadm -Ln',
    })
    expect(sp.frontends[0]!.incomplete?.collect).toBe('ipvsadm -Ln')
    // The whole virtual servers before it are answered as before.
    expect(byVip(state, '10.96.30.7').incomplete).toBeUndefined()
  })

  it('the same listing whole has no such mark', async () => {
    const state = await read([
      [LN, full],
      [IPSET_SAVE, text(IPSET_SAVE)],
      [IPTABLES, text(IPTABLES)],
    ])
    expect(byVip(state, '10.96.200.30').incomplete).toBeUndefined()
  })

  it('explain of a virtual server cut before its first real server does not say "Source NAT: never"', async () => {
    const beforeRows = full.slice(
      0,
      full.indexOf('  -> 10.244.1.8:6379', full.indexOf('10.96.30.7')) + 12,
    )
    const state = await read([
      [LN, beforeRows],
      [IPSET_SAVE, text(IPSET_SAVE)],
      [IPTABLES, text(IPTABLES)],
    ])
    const q = parseServiceQuery('10.96.30.7:6379', undefined)
    if ('invalid' in q) throw new Error(q.invalid)
    const result = explainService(state, q)
    if (result.kind !== 'ExplainResult') throw new Error('no match')
    const fe = result.matches[0]!.frontends[0]!
    expect(fe.masquerade.when).toBe('unknown')
    expect(fe.masquerade.reason).toContain('the rest of TCP 10.96.30.7:6379')
    expect(fe.masquerade.reason).toContain('`ipvsadm -Ln`')
  })
})
