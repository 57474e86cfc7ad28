/**
 * nodePortAddresses keywords (`primary`, `localhost`, `all`, kube-proxy 1.37) and nftables
 * mode's default `primary`: the rendered file and the finding agree (issue 22 §2).
 */
import {describe, expect, it} from 'vitest'
import {renderNftables} from '../../src/render/nftables/render.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {invalidRenderOption} from '../../src/render/setting-values.js'
import type {ProxyState} from '../../src/model/types.js'
import {stateFromExpect} from './corpus-states.js'

function state(): ProxyState {
  const s = stateFromExpect('nftables-overall', 'nftables', {
    sourceRanges: {'ns5/svc5': ['203.0.113.0/25']},
  })
  s.node.nodePortAddresses = null
  return s
}
const NODE_IPS = ['192.168.0.2', '10.1.0.9']
const nodeportIps = (text: string): string[] =>
  [...text.matchAll(/add element ip kube-proxy nodeport-ips \{ (\S+) \}/g)].map((m) => m[1]!)

describe('nodePortAddresses keywords', () => {
  it('are accepted beside CIDRs', () => {
    for (const v of ['primary', 'localhost', 'all'])
      expect(invalidRenderOption({nodePortAddresses: ['10.0.0.0/8', v]})).toBeNull()
    expect(invalidRenderOption({nodePortAddresses: ['everything']})).not.toBeNull()
  })

  it('primary: the first node IP; all: every local address; localhost: a finding in nftables', () => {
    const primary = renderNftables(state(), {nodeIPs: NODE_IPS, nodePortAddresses: ['primary']})
    expect(nodeportIps(primary.text)).toEqual(['192.168.0.2'])
    const all = renderNftables(state(), {nodeIPs: NODE_IPS, nodePortAddresses: ['all']})
    expect(nodeportIps(all.text)).toEqual([])
    expect(all.text).toContain('fib daddr type local ip daddr != 127.0.0.0/8')
    const local = renderNftables(state(), {
      nodeIPs: NODE_IPS,
      nodePortAddresses: ['primary', 'localhost'],
    })
    expect(nodeportIps(local.text)).toEqual(['192.168.0.2'])
    expect(local.findings.map((f) => f.id)).toContain('RENDER_LOCALHOST_NODEPORTS_UNSUPPORTED')
  })
})

describe("nftables mode's default nodePortAddresses", () => {
  it('is primary when the node IPs are known, and the finding says so', () => {
    const r = renderNftables(state(), {nodeIPs: NODE_IPS})
    expect(nodeportIps(r.text)).toEqual(['192.168.0.2'])
    const f = r.findings.find((x) => x.id === 'RENDER_DEFAULT_NODEPORT_ADDRESSES')!
    expect(f.title).toContain('primary')
  })

  it('without node IPs: every local address, and a warning that kube-proxy would serve fewer', () => {
    const r = renderNftables(state(), {})
    expect(r.text).toContain('fib daddr type local')
    const f = r.findings.find((x) => x.id === 'RENDER_NODEPORT_ADDRESSES_WIDER_THAN_DEFAULT')!
    expect(f.severity).toBe('warning')
    expect(f.message).toContain('primary')
  })

  it('iptables keeps every local address as its default', () => {
    const r = renderIptables(state(), {nodeIPs: NODE_IPS})
    const f = r.findings.find((x) => x.id === 'RENDER_DEFAULT_NODEPORT_ADDRESSES')!
    expect(f.title).toContain('every local address')
  })
})
