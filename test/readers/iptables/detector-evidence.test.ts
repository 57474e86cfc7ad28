/**
 * What tells the local-traffic detector: the "! -s podCIDR -j KUBE-MARK-MASQ" rule kube-proxy
 * writes into a ClusterIP's own chain. A KUBE-SVC chain reached only from KUBE-EXT (a service with
 * internalTrafficPolicy=Local, no local endpoint, and a NodePort) has no such rule whatever the
 * detector. It was taken for evidence of the no-op detector, so the IPv4 dump below read as
 * localDetector "none", and beside an IPv6 dump that shows the CIDR detector, the node's
 * detector came out "none" (found by rendering random Services into iptables and back).
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {readState} from '../../../src/readers/read-state.js'

const V4 = `*filter
:KUBE-SERVICES - [0:0]
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-EXT-KHR4DVXWDTXS4DPO - [0:0]
:KUBE-SVC-KHR4DVXWDTXS4DPO - [0:0]
:KUBE-SEP-TGWJAB6V7IXVTHGG - [0:0]
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-NODEPORTS -m comment --comment b/s2 -m udp -p udp --dport 30004 -j KUBE-EXT-KHR4DVXWDTXS4DPO
-A KUBE-EXT-KHR4DVXWDTXS4DPO -m comment --comment "masquerade traffic for b/s2 external destinations" -j KUBE-MARK-MASQ
-A KUBE-EXT-KHR4DVXWDTXS4DPO -j KUBE-SVC-KHR4DVXWDTXS4DPO
-A KUBE-SVC-KHR4DVXWDTXS4DPO -m comment --comment "b/s2 -> 10.244.2.2:8080" -j KUBE-SEP-TGWJAB6V7IXVTHGG
-A KUBE-SEP-TGWJAB6V7IXVTHGG -m comment --comment b/s2 -s 10.244.2.2 -j KUBE-MARK-MASQ
-A KUBE-SEP-TGWJAB6V7IXVTHGG -m comment --comment b/s2 -m udp -p udp -j DNAT --to-destination 10.244.2.2:8080
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
COMMIT
`
const V6_PATH = 'fixtures/iptables/realsave-handmade-ipv6/input.rules'

describe('local-traffic detector evidence', () => {
  it('a KUBE-SVC chain reached only from KUBE-EXT says nothing about the detector', async () => {
    const v4 = await readState({sources: [{path: 'v4.rules', text: V4}]})
    expect(v4.services.map((sp) => sp.name)).toEqual(['s2'])
    expect(v4.node.localDetector).toBeNull()
    const both = await readState({
      sources: [
        {path: 'v4.rules', text: V4},
        {path: V6_PATH, text: readFileSync(V6_PATH, 'utf8')},
      ],
    })
    expect(both.node.localDetector).toBe('cidr')
    expect(both.node.podCIDRs).toEqual(['fd00:10:244::/48'])
  })
})
