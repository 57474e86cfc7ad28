/**
 * IPVS virtual servers of one service port that disagree (issue 21 §4, kubernetes #89923): the
 * NodePort on 127.0.0.1 with a real server fewer than the ClusterIP. The inputs are the corpus
 * listing (fixtures/ipvs/generated) with a 127.0.0.1 copy of a NodePort virtual server, one real
 * server dropped: the state keeps that frontend's own endpoints and says so, with both lists.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {
  IPSET_SAVE,
  IPVSADM_LN as LN,
  loopbackNodePortLacksOne,
  readIpvs as read,
  webWithTwoReady,
  withLoopbackNodePort,
} from '../../helpers/ipvs-disagree.js'
import {runKpInProcess} from '../../helpers/run-in-process.js'

const port = (s: ProxyState, clusterIp: string) =>
  s.services.find((sp) => sp.frontends.some((f) => f.type === 'ClusterIP' && f.ip === clusterIp))!
const disagreements = (s: ProxyState) =>
  s.diagnostics.filter((d) => d.code === 'IPVS_FRONTENDS_DISAGREE')

describe('IPVS frontends of one service port that disagree', () => {
  it('the 127.0.0.1 NodePort with a real server fewer keeps its own endpoints', async () => {
    const two = webWithTwoReady()
    const before = await read(two)
    const s = await read(loopbackNodePortLacksOne())
    const web = port(s, '10.96.100.20')
    // Every frontend the state had, plus the loopback NodePort with its own endpoints.
    expect(
      web.frontends.map((f) => `${f.type} ${f.ip}:${f.port} ${f.endpoints?.length ?? '-'}`),
    ).toEqual([
      'ClusterIP 10.96.100.20:80 -',
      'ExternalIP 10.0.200.5:80 -',
      'NodePort null:30080 -',
      'NodePort 127.0.0.1:30080 2',
    ])
    const loopback = web.frontends.find((f) => f.ip === '127.0.0.1')!
    expect(loopback.endpoints!.map((e) => `${e.ip}:${e.port} w${e.weight}`)).toEqual([
      '10.244.1.5:8080 w1',
      '10.244.2.7:8080 w0',
    ])
    expect(web.endpoints.map((e) => `${e.ip}:${e.port}`)).toEqual(
      port(before, '10.96.100.20').endpoints.map((e) => `${e.ip}:${e.port}`),
    )
    const [d] = disagreements(s)
    expect(disagreements(s)).toHaveLength(1)
    expect(d!.severity).toBe('warning')
    // Both lists, and where the odd one is.
    expect(d!.message).toContain('NodePort 127.0.0.1:30080 has 10.244.1.5:8080\u003b')
    expect(d!.message).toContain('ClusterIP 10.96.100.20:80 has 10.244.1.5:8080 10.244.3.3:8080')
    expect(d!.source).toEqual({path: 'ipvsadm.txt', line: two.trimEnd().split('\n').length + 1})
    expect(disagreements(before)).toEqual([])
  })

  it('a NodePort address without the only ready real server is kept as rejecting, with or without ipsets', async () => {
    for (const ipset of [true, false]) {
      const s = await read(
        withLoopbackNodePort(LN, 'TCP  10.0.0.10:30080', '10.244.1.5:8080'),
        ipset,
      )
      // Without ipsets the externalIP reads as a second ClusterIP, and the NodePort is a service
      // port of its own (IPVS_UNFOLDED): the disagreement is found either way.
      const web = s.services.find((sp) => sp.frontends.some((f) => f.port === 30080))!
      const loopback = web.frontends.find((f) => f.ip === '127.0.0.1')
      expect(loopback, `ipset ${ipset}`).toMatchObject({
        type: 'NodePort',
        action: 'reject',
        endpoints: [{ip: '10.244.2.7', port: 8080, weight: 0, state: 'draining'}],
      })
      expect(web.frontends.filter((f) => f.endpoints === undefined)).toHaveLength(ipset ? 3 : 1)
      expect(disagreements(s).map((d) => d.message)).toEqual([
        expect.stringContaining('NodePort 127.0.0.1:30080 has no ready real server'),
      ])
    }
  })

  it('a draining real server missing on one address is no disagreement', async () => {
    const s = await read(withLoopbackNodePort(LN, 'TCP  10.0.0.10:30080', '10.244.2.7:8080'))
    expect(disagreements(s)).toEqual([])
    expect(port(s, '10.96.100.20').frontends.every((f) => f.endpoints === undefined)).toBe(true)
  })

  it('externalTrafficPolicy=Local: the LoadBalancer and NodePort with only the local endpoint are no disagreement', async () => {
    const s = await read(LN)
    const lb = port(s, '10.96.200.30')
    expect(lb.externalTrafficPolicy).toBe('Local')
    expect(lb.endpoints).toHaveLength(2)
    expect(disagreements(s)).toEqual([])
    expect(lb.frontends.every((f) => f.endpoints === undefined)).toBe(true)
  })
})

describe('kp migrate on IPVS frontends that disagree', () => {
  it('reports MIGRATE_IPVS_FRONTENDS_DISAGREE with both endpoint lists, --to ipvs too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kp-disagree-'))
    try {
      const listing = join(dir, 'ipvsadm.txt')
      const ipset = join(dir, 'ipset.txt')
      writeFileSync(listing, loopbackNodePortLacksOne())
      writeFileSync(ipset, IPSET_SAVE)
      for (const to of ['ipvs', 'nftables', 'iptables']) {
        const r = await runKpInProcess([
          'migrate',
          '--to',
          to,
          '--check',
          '-f',
          listing,
          '-f',
          ipset,
        ])
        const finding = r.stdout
          .split('\n\n')
          .find((b) => b.includes('MIGRATE_IPVS_FRONTENDS_DISAGREE'))
        expect(finding, to).toBeDefined()
        expect(finding).toContain(
          'NodePort 127.0.0.1:30080 has 10.244.1.5:8080, 10.244.2.7:8080 (lacks 10.244.3.3:8080); the service port has 10.244.1.5:8080, 10.244.2.7:8080, 10.244.3.3:8080',
        )
      }
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
