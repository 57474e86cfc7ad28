/**
 * kp trace in IPVS mode (kp-made fixtures/ipvs/generated: ipvsadm -Ln, ipset save and the
 * IPVS-mode iptables-save of one node): the virtual server and the real server its scheduler
 * picks, with the chance; the ipsets kube-proxy's rules match on decide masquerade and the
 * filters; and it agrees with what kp explain reads from the same files.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {traceConnection, type TraceResult} from '../../../src/analyze/trace/index.js'
import type {TracePacket} from '../../../src/analyze/trace/types.js'
import type {IpsetDump} from '../../../src/readers/ipset/parse.js'
import type {IptablesRuleset} from '../../../src/readers/iptables/ruleset.js'
import type {IpvsadmListing} from '../../../src/readers/ipvsadm/parse.js'
import {readFiles} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const G = join(ROOT, 'fixtures/ipvs/generated')
const IPVSADM = join(G, 'ipvsadm-Ln.txt')
const IPSET = join(G, 'ipset-save.ipvs-mode.txt')
const IPTABLES = join(G, 'iptables-save.ipvs-mode.nft-backend.txt')
const tmp = mkdtempSync(join(tmpdir(), 'kp-trace-ipvs-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

async function trace(files: string[], packet: Partial<TracePacket>): Promise<TraceResult> {
  const rulesets: Array<{path: string; ruleset: IptablesRuleset}> = []
  const ipvsListings: Array<{path: string; listing: IpvsadmListing}> = []
  const ipsets: Array<{path: string; dump: IpsetDump}> = []
  const {state} = await readFiles({
    files,
    onParsed: (p) => {
      if (p.format === 'iptables-save')
        rulesets.push({path: p.source.path, ruleset: p.data as IptablesRuleset})
      if (p.format === 'ipvsadm')
        ipvsListings.push({path: p.source.path, listing: p.data as IpvsadmListing})
      if (p.format === 'ipset') ipsets.push({path: p.source.path, dump: p.data as IpsetDump})
    },
  })
  expect(state.mode).toBe('ipvs')
  return traceConnection({
    state,
    rulesets,
    nftDocuments: [],
    ipvsListings,
    ipsets,
    nodeIps: [],
    packet: {from: 'pod', source: null, destination: null, port: 0, protocol: 'TCP', ...packet},
  })
}

const ALL = [IPVSADM, IPSET, IPTABLES]
const summary = (t: TraceResult) =>
  t.outcomes.map((o) => ({
    conditions: o.conditions,
    verdict: o.verdict,
    dnat: o.dnat,
    masquerade: o.masquerade,
    probability: Number(o.probability.toFixed(6)),
  }))

describe('kp trace in IPVS mode', () => {
  it('rr: each real server of weight > 0 in turn; the virtual server and real server lines cited', async () => {
    const t = await trace(ALL, {destination: '10.96.0.10', port: 53, protocol: 'UDP'})
    expect(t.unsupported).toBeNull()
    expect(summary(t)).toEqual([
      {
        conditions: [],
        verdict: 'forwarded',
        dnat: '10.244.1.3:53',
        masquerade: false,
        probability: 0.5,
      },
      {
        conditions: [],
        verdict: 'forwarded',
        dnat: '10.244.2.4:53',
        masquerade: false,
        probability: 0.5,
      },
    ])
    const steps = t.outcomes[0]!.steps.filter((s) => s.table === 'ipvs')
    expect(steps.map((s) => [s.rule?.source.line, s.note])).toEqual([
      [31, 'virtual server, scheduler rr'],
      [32, 'real server 10.244.1.3:53, weight 1 (each real server of weight > 0 in turn)'],
    ])
  })

  it('a real server of weight 0 (terminating) gets no new connection; from outside the ClusterIP is masqueraded', async () => {
    const t = await trace(ALL, {from: 'external', destination: '10.96.100.20', port: 80})
    expect(summary(t)).toEqual([
      {
        conditions: [],
        verdict: 'forwarded',
        dnat: '10.244.1.5:8080',
        masquerade: true,
        probability: 1,
      },
    ])
  })

  it('loadBalancerSourceRanges from the KUBE-LOAD-BALANCER-SOURCE-CIDR set: outside is dropped, with the reason', async () => {
    const out = await trace(ALL, {
      from: 'external',
      source: '198.51.100.7',
      destination: '10.0.100.10',
      port: 443,
    })
    expect(out.outcomes).toEqual([
      expect.objectContaining({
        verdict: 'dropped',
        reason: "source 198.51.100.7 is outside the service's loadBalancerSourceRanges",
      }),
    ])
    const inside = await trace(ALL, {
      from: 'external',
      source: '192.0.2.9',
      destination: '10.0.100.10',
      port: 443,
    })
    expect(summary(inside)).toEqual([
      {
        conditions: [],
        verdict: 'forwarded',
        dnat: '10.244.1.6:8443',
        masquerade: false,
        probability: 1,
      },
    ])
  })

  it('NodePorts: externalTrafficPolicy=Local keeps the source, Cluster masquerades', async () => {
    const local = await trace(ALL, {from: 'external', destination: null, port: 31443})
    expect(summary(local)).toEqual([
      {
        conditions: [],
        verdict: 'forwarded',
        dnat: '10.244.1.6:8443',
        masquerade: false,
        probability: 1,
      },
    ])
    expect(local.assumed).toContain(
      'the node address is 10.0.0.10, the first virtual server on port 31443 (name another with --node-ip)',
    )
    const cluster = await trace(ALL, {from: 'external', destination: '10.0.0.10', port: 30080})
    expect(summary(cluster)).toEqual([
      {
        conditions: [],
        verdict: 'forwarded',
        dnat: '10.244.1.5:8080',
        masquerade: true,
        probability: 1,
      },
    ])
  })

  it("another port of a service's address: KUBE-IPVS-FILTER rejects it, in words", async () => {
    const t = await trace(ALL, {destination: '10.96.0.10', port: 99})
    expect(t.outcomes).toEqual([
      expect.objectContaining({
        verdict: 'rejected',
        reason: expect.stringMatching(/^no service on this port/),
      }),
    ])
  })

  it('a virtual server with no real server, or only weight 0 ones: IPVS answers port unreachable', async () => {
    const path = join(tmp, 'ipvsadm-Ln.txt')
    writeFileSync(
      path,
      [
        'IP Virtual Server version 1.2.1 (size=4096)',
        'Prot LocalAddress:Port Scheduler Flags',
        '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
        'TCP  10.96.9.9:80 rr',
        'TCP  10.96.9.10:80 wrr',
        '  -> 10.244.1.5:8080              Masq    0      0          0',
        'TCP  10.96.9.11:80 wrr',
        '  -> 10.244.1.5:8080              Masq    3      0          0',
        '  -> 10.244.1.6:8080              Masq    1      0          0',
        '',
      ].join('\n'),
    )
    const none = await trace([path], {destination: '10.96.9.9', port: 80})
    expect(none.outcomes).toEqual([
      expect.objectContaining({
        verdict: 'rejected',
        reason: expect.stringContaining('no real server'),
      }),
    ])
    const zero = await trace([path], {destination: '10.96.9.10', port: 80})
    expect(zero.outcomes).toEqual([
      expect.objectContaining({verdict: 'rejected', reason: expect.stringContaining('weight 0')}),
    ])
    // wrr follows the weights; without iptables-save the walk says what it did not see.
    const wrr = await trace([path], {destination: '10.96.9.11', port: 80})
    expect(summary(wrr).map((o) => [o.dnat, o.probability])).toEqual([
      ['10.244.1.5:8080', 0.75],
      ['10.244.1.6:8080', 0.25],
    ])
    expect(wrr.assumed.join('\n')).toContain('the input has no IPv4 iptables rules')
  })

  it('without ipset input, a set match is an open condition, never a guess', async () => {
    const t = await trace([IPVSADM, IPTABLES], {
      from: 'external',
      destination: '10.96.100.20',
      port: 80,
    })
    expect(
      t.outcomes.some((o) => o.conditions.some((c) => c.includes('ipset KUBE-CLUSTER-IP'))),
    ).toBe(true)
  })
})
