/**
 * The nftables walk on rules written here and on kube-proxy's own dumps: numgen shares, verdict
 * maps, kube-proxy's reasons for drops and rejects, and what it will not guess (a missing map,
 * iptables-nft's hidden xt extensions).
 */
import {describe, expect, it} from 'vitest'
import {traceConnection, type TracePacket} from '../../../src/analyze/trace/index.js'
import {parseNftText} from '../../../src/readers/nft/parse.js'
import {readFiles} from '../../../src/readers/read-state.js'
import type {NftDocument} from '../../../src/readers/nft/ir.js'
import {proxyState} from '../../helpers/builders.js'
import {ROOT} from '../../helpers/run-cli.js'

function trace(text: string, packet: Partial<TracePacket> = {}) {
  const {doc} = parseNftText(text, 'rules.nft')
  return traceConnection({
    state: proxyState('nftables', [], {podCIDRs: ['10.244.0.0/16']}),
    rulesets: [],
    nftDocuments: [{path: 'rules.nft', doc}],
    nodeIps: [],
    packet: {
      from: 'pod',
      source: null,
      destination: '10.244.50.50',
      port: 53,
      protocol: 'UDP',
      ...packet,
    },
  })
}

const TABLE = (body: string) => `table ip t {
  chain pre {
    type nat hook prerouting priority dstnat; policy accept;
${body}
  }
}
`

describe('kp trace: the nftables walk', () => {
  it('numgen random mod N vmap gives each element 1/N', () => {
    const t = trace(`table ip t {
  chain a {
    udp dport 53 dnat to 10.244.1.1:53
  }
  chain b {
    udp dport 53 dnat to 10.244.2.2:53
  }
  chain pre {
    type nat hook prerouting priority dstnat; policy accept;
    ip daddr 10.244.50.50 numgen random mod 4 vmap { 0 : goto a, 1 : goto a, 2 : goto a, 3 : goto b }
  }
}
`)
    const share = new Map<string, number>()
    for (const o of t.outcomes) share.set(o.dnat!, (share.get(o.dnat!) ?? 0) + o.probability)
    expect(Object.fromEntries(share)).toEqual({'10.244.1.1:53': 0.75, '10.244.2.2:53': 0.25})
  })

  it('a concatenated lookup in a named verdict map picks the element of the packet', () => {
    const t = trace(`table ip t {
  map m {
    type ipv4_addr . inet_proto . inet_service : verdict
    elements = { 10.244.50.50 . udp . 53 : goto x, 10.244.50.50 . tcp . 53 : goto y }
  }
  chain x {
    dnat to 10.244.1.1:53
  }
  chain y {
    dnat to 10.244.9.9:53
  }
  chain pre {
    type nat hook prerouting priority dstnat; policy accept;
    ip daddr . meta l4proto . th dport vmap @m
  }
}
`)
    expect(t.outcomes.map((o) => o.dnat)).toEqual(['10.244.1.1:53'])
  })

  it('a map the input lacks is unknown, naming it and how to collect it', () => {
    const t = trace(TABLE('    ip daddr . meta l4proto . th dport vmap @service-ips'))
    expect(t.outcomes).toEqual([
      expect.objectContaining({
        verdict: 'unknown',
        reason: 'map @service-ips is not in the input (collect it with `nft list table ip t`)',
      }),
    ])
  })

  it("kube-proxy's reasons: no endpoints, Local policy, source ranges, an unused ClusterIP port", async () => {
    const path = 'fixtures/nft/upstream-overall/input.nft'
    const docs: Array<{path: string; doc: NftDocument}> = []
    const {state} = await readFiles({
      files: [path],
      onParsed: (p) => {
        if (p.format === 'nft') docs.push({path, doc: p.data as NftDocument})
      },
    })
    const run = (
      destination: string,
      port: number,
      from: TracePacket['from'],
      source: string | null = null,
    ) =>
      traceConnection({
        state,
        rulesets: [],
        nftDocuments: docs,
        nodeIps: [],
        packet: {from, source, destination, port, protocol: 'TCP'},
      })
    expect(run('172.30.0.46', 80, 'pod').outcomes.map((o) => o.reason)).toEqual([
      'the service has no endpoints, so kube-proxy rejects new connections',
    ])
    expect(run('1.2.3.4', 80, 'external').outcomes.map((o) => o.reason)).toEqual([
      'externalTrafficPolicy=Local and no endpoint of this service runs on this node',
    ])
    expect(run('5.6.7.8', 80, 'external', '198.51.100.7').outcomes.map((o) => o.reason)).toEqual([
      "source 198.51.100.7 is outside the service's loadBalancerSourceRanges",
    ])
    expect(run('172.30.0.41', 8080, 'pod').outcomes.map((o) => [o.verdict, o.reason])).toEqual([
      [
        'rejected',
        'no service uses this port of the ClusterIP: nftables mode rejects it (cluster-ips-check)',
      ],
    ])
  })
})

describe('kp trace: the node to one of its own addresses', () => {
  it('walks the loopback pass back in (filter INPUT, not NAT): a 1.37 localhost NodePort is rejected', async () => {
    // Over loopback PREROUTING and INPUT see the packet again; kube-proxy 1.37 rejects localhost
    // NodePorts its map names in filter-input (fixtures/verify/nft-localhost-reject).
    const file = `${ROOT}fixtures/verify/nft-localhost-reject/ruleset.nft`
    const nftDocuments: Array<{path: string; doc: NftDocument}> = []
    const {state} = await readFiles({
      files: [file],
      onParsed: (p) => {
        if (p.format === 'nft') nftDocuments.push({path: p.source.path, doc: p.data as NftDocument})
      },
    })
    const verdicts = (port: number, protocol: 'TCP' | 'UDP') =>
      traceConnection({
        state,
        rulesets: [],
        nftDocuments,
        nodeIps: ['198.18.0.10'],
        packet: {from: 'node', source: '127.0.0.1', destination: '127.0.0.1', port, protocol},
      }).outcomes.map((o) => o.verdict)
    expect(verdicts(30443, 'TCP')).toEqual(['rejected'])
    expect(verdicts(30053, 'UDP')).toEqual(['rejected'])
    expect(verdicts(31080, 'TCP')).toEqual(['delivered'])
  })
})
