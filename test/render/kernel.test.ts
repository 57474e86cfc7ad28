/**
 * Sanity check that the rendered files load into a real kernel with the real tools, inside a
 * network namespace this test creates and deletes (test/live/netns.ts). Skips with the reason
 * when namespaces are not available. The full load-and-read-back tests belong to test/live.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import {renderIpvs} from '../../src/render/ipvs/render.js'
import type {ProxyState} from '../../src/model/types.js'
import {Netns, kernelUnavailable, skipEachWhen} from '../live/netns.js'
import {stateFromExpect} from './corpus-states.js'

const unavailable = kernelUnavailable('test/render/kernel.test.ts')

/** The overall scenario, dual-stack: ns1/svc1 also gets an IPv6 twin. */
function dualStackOverall(): ProxyState {
  const state = stateFromExpect('iptables-overall', 'iptables', {
    sourceRanges: {'ns5/svc5': ['203.0.113.0/25']},
    healthCheckNodePorts: {'ns2/svc2': 30000},
    node: {
      podCIDRs: ['10.0.0.0/8', 'fd00:10::/64'],
      randomFully: true,
      localhostNodePorts: true,
      nodePortAddresses: [],
    },
  })
  const v4 = state.services[0]!
  state.services.push({
    ...v4,
    family: 'IPv6',
    frontends: [
      {type: 'ClusterIP', ip: 'fd00:172:30::41', port: 80, sourceRanges: [], action: 'forward'},
    ],
    endpoints: [
      {ip: 'fd00:10::1', port: 80, local: null, share: null, weight: null, state: 'ready'},
    ],
  })
  return state
}

describe('rendered files load into a kernel (network namespace)', () => {
  skipEachWhen(unavailable)
  let ns: Netns
  let state: ProxyState
  beforeAll(() => {
    if (unavailable !== null) return
    ns = new Netns()
    state = dualStackOverall()
  })
  afterAll(() => ns?.delete())

  it('nft -f accepts the script, twice (it replaces the tables)', () => {
    const text = renderNftables(state, {
      nodePortAddresses: ['192.168.0.2'],
      serviceCIDRs: ['172.30.0.0/16', 'fd00:172:30::/108'],
    }).text
    ns.run(['nft', '-f', '-'], text)
    ns.run(['nft', '-f', '-'], text)
    const tables = ns.run(['nft', 'list', 'tables'])
    expect(tables).toContain('table ip kube-proxy')
    expect(tables).toContain('table ip6 kube-proxy')
    expect(ns.run(['nft', 'list', 'chain', 'ip', 'kube-proxy', 'services'])).toContain(
      'vmap @service-ips',
    )
  })

  it('the older nftables layout loads too, replacing the current one', () => {
    const text = renderNftables(state, {
      nodePortAddresses: ['192.168.0.2'],
      nftablesLayout: 'older',
    }).text
    ns.run(['nft', '-f', '-'], text)
    expect(
      ns.run(['nft', 'list', 'chain', 'ip', 'kube-proxy', 'filter-output-post-dnat']),
    ).toContain('jump cluster-ips-check')
  })

  it('iptables-restore and ip6tables-restore --noflush accept their files, twice', () => {
    const r = renderIptables(state)
    for (const f of r.files) {
      const tool = f.family === 'IPv6' ? 'ip6tables-restore' : 'iptables-restore'
      ns.run([tool, '--noflush'], f.text)
      ns.run([tool, '--noflush'], f.text)
    }
    expect(ns.run(['iptables-save', '-t', 'nat'])).toContain(
      '-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O',
    )
    expect(ns.run(['ip6tables-save', '-t', 'nat'])).toContain(
      '-j DNAT --to-destination [fd00:10::1]:80',
    )
  })

  it('ipset restore -exist and the IPVS companion rules load, twice', () => {
    // The node inside the LB source range: no KUBE-IPVS-OUT-FILTER rule, whose ipvs match this kernel lacks.
    const r = renderIpvs(state, {nodeIPs: ['203.0.113.5']})
    for (let i = 0; i < 2; i++) {
      ns.run(
        ['ipset', 'restore', '-exist'],
        r.files.find((f) => f.name === 'ipset-restore.txt')!.text,
      )
      for (const f of r.files.filter((x) => x.name.startsWith('ipvs-iptables-restore')))
        ns.run(
          [f.family === 'IPv6' ? 'ip6tables-restore' : 'iptables-restore', '--noflush'],
          f.text,
        )
    }
    expect(ns.run(['ipset', 'list', 'KUBE-CLUSTER-IP'])).toContain('172.30.0.41,tcp:80')
    expect(ns.run(['ipset', 'list', '-n'])).toContain('KUBE-6-LOAD-BALANCER-SOURCE-CID')
  })
})
