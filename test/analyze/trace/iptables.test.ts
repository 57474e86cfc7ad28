/**
 * The iptables walk on small rule sets written here: each rule kind the walk follows (jump, goto,
 * RETURN, marks, policies, DNAT) and each way it refuses to guess (a missing chain, an interface,
 * a loop).
 */
import {describe, expect, it} from 'vitest'
import {traceConnection, type TracePacket} from '../../../src/analyze/trace/index.js'
import {parseIptablesText} from '../../../src/readers/iptables/parse.js'
import {proxyState} from '../../helpers/builders.js'

function trace(rules: string, packet: Partial<TracePacket> = {}) {
  const {ruleset} = parseIptablesText(rules, 'rules.txt')
  const state = proxyState('iptables', [], {podCIDRs: ['10.244.0.0/16']})
  return traceConnection({
    state,
    rulesets: [{path: 'rules.txt', ruleset}],
    nftDocuments: [],
    nodeIps: [],
    packet: {
      from: 'pod',
      source: null,
      destination: '10.96.0.10',
      port: 53,
      protocol: 'UDP',
      ...packet,
    },
  })
}

const NAT = (body: string) =>
  `*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n${body}\nCOMMIT\n`

describe('kp trace: the iptables walk', () => {
  it('follows built-in chains as written, and each statistic branch with its chance', () => {
    const t = trace(
      NAT(`:SVC - [0:0]
-A PREROUTING -d 10.96.0.10/32 -p udp --dport 53 -j SVC
-A SVC -m statistic --mode random --probability 0.25 -j DNAT --to-destination 10.244.1.2:53
-A SVC -j DNAT --to-destination 10.244.2.2:53`),
    )
    expect(t.assumed).toEqual([])
    expect(t.outcomes.map((o) => [o.dnat, o.probability, o.verdict])).toEqual([
      ['10.244.1.2:53', 0.25, 'forwarded'],
      ['10.244.2.2:53', 0.75, 'forwarded'],
    ])
    expect(t.outcomes[0]!.steps.map((s) => s.rule?.source.line)).toEqual([6, 7])
  })

  it('a goto leaves the calling chain on RETURN; a jump comes back to it', () => {
    const rules = (how: string) =>
      NAT(`:A - [0:0]
:B - [0:0]
-A PREROUTING -j A
-A PREROUTING -j DNAT --to-destination 10.244.9.9:53
-A A ${how} B
-A A -j DNAT --to-destination 10.244.1.1:53
-A B -j RETURN`)
    expect(trace(rules('-j')).outcomes.map((o) => o.dnat)).toEqual(['10.244.1.1:53'])
    expect(trace(rules('-g')).outcomes.map((o) => o.dnat)).toEqual(['10.244.9.9:53'])
  })

  it('sets and matches marks, and masquerades in POSTROUTING by the mark', () => {
    const t = trace(
      NAT(`:MARKIT - [0:0]
-A PREROUTING -j MARKIT
-A PREROUTING -j DNAT --to-destination 10.244.1.1:53
-A MARKIT -j MARK --set-xmark 0x4000/0x4000
-A POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A POSTROUTING -j MASQUERADE`),
    )
    expect(t.outcomes).toHaveLength(1)
    expect(t.outcomes[0]).toMatchObject({masquerade: true, dnat: '10.244.1.1:53'})
    const unmarked = trace(
      NAT(`-A PREROUTING -j DNAT --to-destination 10.244.1.1:53
-A POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A POSTROUTING -j MASQUERADE`),
    )
    expect(unmarked.outcomes[0]).toMatchObject({masquerade: false})
  })

  it('a built-in DROP policy drops what no rule accepts, and says so', () => {
    const t = trace(`*filter\n:FORWARD DROP [0:0]\n-A FORWARD -p tcp -j ACCEPT\nCOMMIT\n`, {
      destination: '10.244.5.5',
    })
    expect(t.outcomes).toEqual([
      expect.objectContaining({verdict: 'dropped', reason: 'the policy of filter FORWARD is DROP'}),
    ])
  })

  it('a jump to a chain the input lacks is unknown, naming the chain and how to collect it', () => {
    const t = trace(NAT('-A PREROUTING -d 10.96.0.10/32 -j KUBE-SVC-ABCDEFGHIJKLMNOP'))
    expect(t.outcomes).toEqual([
      expect.objectContaining({
        verdict: 'unknown',
        reason:
          'chain KUBE-SVC-ABCDEFGHIJKLMNOP is not in the input (collect it with `iptables-save -t nat`)',
      }),
    ])
  })

  it('an interface match splits the answer into conditions; one that changes nothing is dropped', () => {
    const t = trace(
      NAT(`-A PREROUTING -i eth1 -j DNAT --to-destination 10.244.1.1:53
-A PREROUTING -j DNAT --to-destination 10.244.2.2:53`),
    )
    expect(t.outcomes.map((o) => [o.conditions, o.dnat])).toEqual([
      [['the connection arrives on interface eth1'], '10.244.1.1:53'],
      [['the connection does not arrive on interface eth1'], '10.244.2.2:53'],
    ])
    const same = trace(
      NAT(`-A PREROUTING -i eth1 -j LOG
-A PREROUTING -j DNAT --to-destination 10.244.2.2:53`),
    )
    expect(same.outcomes.map((o) => [o.conditions, o.dnat])).toEqual([[[], '10.244.2.2:53']])
  })

  it('chains that jump into each other without end stop with a reason', () => {
    const t = trace(NAT(`:A - [0:0]\n:B - [0:0]\n-A PREROUTING -j A\n-A A -j B\n-A B -j A`))
    expect(t.outcomes[0]).toMatchObject({verdict: 'unknown'})
    expect(t.outcomes[0]!.reason).toMatch(/deeper than \d+ levels/)
  })

  it('from the node, the walk takes nat OUTPUT, not PREROUTING', () => {
    const rules = NAT(`-A PREROUTING -j DNAT --to-destination 10.244.1.1:53
-A OUTPUT -j DNAT --to-destination 10.244.2.2:53`)
    expect(trace(rules, {from: 'node'}).outcomes.map((o) => o.dnat)).toEqual(['10.244.2.2:53'])
    expect(trace(rules, {from: 'external'}).outcomes.map((o) => o.dnat)).toEqual(['10.244.1.1:53'])
  })

  it('a source match on a pod client: in the pod CIDR, outside it, or open when it straddles', () => {
    const rules = (cidr: string) =>
      NAT(`-A PREROUTING -s ${cidr} -j DNAT --to-destination 10.244.1.1:53
-A PREROUTING -j DNAT --to-destination 10.244.2.2:53`)
    expect(trace(rules('10.0.0.0/8')).outcomes.map((o) => o.dnat)).toEqual(['10.244.1.1:53'])
    expect(trace(rules('192.168.0.0/16')).outcomes.map((o) => o.dnat)).toEqual(['10.244.2.2:53'])
    expect(trace(rules('10.244.3.0/24')).outcomes.map((o) => o.conditions)).toEqual([
      ["the pod's address is in 10.244.3.0/24"],
      ["the pod's address is not in 10.244.3.0/24"],
    ])
    expect(
      trace(rules('10.244.3.0/24'), {source: '10.244.3.7'}).outcomes.map((o) => o.dnat),
    ).toEqual(['10.244.1.1:53'])
  })
})
