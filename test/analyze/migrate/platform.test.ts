import {describe, expect, it} from 'vitest'
import {fe, one, plan, sp, state} from './states.js'

describe('kernel and nft versions for nftables (caveat 1)', () => {
  it('MIGRATE_NFT_KERNEL_TOO_OLD below 5.13, compared as numbers', () => {
    const f = one(
      state('iptables', [], {kernel: '5.10.0-23-amd64'}),
      'nftables',
      'MIGRATE_NFT_KERNEL_TOO_OLD',
    )
    expect(f.severity).toBe('error')
    expect(f.title).toContain('5.10.0-23-amd64')
    expect(
      plan(state('iptables', [], {kernel: '5.13.0'}), 'nftables', 'MIGRATE_NFT_KERNEL_TOO_OLD'),
    ).toEqual([])
    expect(
      plan(
        state('ipvs', [], {kernel: '6.1.0-18-cloud-amd64'}),
        'nftables',
        'MIGRATE_NFT_KERNEL_TOO_OLD',
      ),
    ).toEqual([])
    expect(
      plan(state('iptables', [], {kernel: '4.19.0'}), 'iptables', 'MIGRATE_NFT_KERNEL_TOO_OLD'),
    ).toEqual([])
  })

  it('MIGRATE_NFT_KERNEL_UNKNOWN when the input does not show the kernel, only for nftables', () => {
    expect(one(state('iptables'), 'nftables', 'MIGRATE_NFT_KERNEL_UNKNOWN').severity).toBe(
      'warning',
    )
    expect(
      plan(state('iptables', [], {kernel: '6.1.0'}), 'nftables', 'MIGRATE_NFT_KERNEL_UNKNOWN'),
    ).toEqual([])
    expect(plan(state('nftables'), 'ipvs', 'MIGRATE_NFT_KERNEL_UNKNOWN')).toEqual([])
  })

  it('MIGRATE_NFT_TOOL_TOO_OLD below 1.0.0; MIGRATE_NFT_TOOL_UNKNOWN when not shown', () => {
    expect(
      one(state('ipvs', [], {nftVersion: '0.9.8'}), 'nftables', 'MIGRATE_NFT_TOOL_TOO_OLD')
        .severity,
    ).toBe('error')
    expect(
      plan(state('ipvs', [], {nftVersion: '1.0.6'}), 'nftables', 'MIGRATE_NFT_TOOL_TOO_OLD'),
    ).toEqual([])
    expect(
      plan(state('ipvs', [], {nftVersion: '1.0.6'}), 'nftables', 'MIGRATE_NFT_TOOL_UNKNOWN'),
    ).toEqual([])
    expect(one(state('ipvs'), 'nftables', 'MIGRATE_NFT_TOOL_UNKNOWN').severity).toBe('info')
  })
})

describe('moving to IPVS', () => {
  it('MIGRATE_IPVS_DEPRECATED and MIGRATE_IPVS_PREREQUISITES_UNVERIFIED only when the target is ipvs', () => {
    expect(one(state('iptables'), 'ipvs', 'MIGRATE_IPVS_DEPRECATED').severity).toBe('warning')
    expect(one(state('nftables'), 'ipvs', 'MIGRATE_IPVS_PREREQUISITES_UNVERIFIED').severity).toBe(
      'info',
    )
    expect(plan(state('iptables'), 'nftables', 'MIGRATE_IPVS_DEPRECATED')).toEqual([])
    expect(plan(state('ipvs'), 'ipvs', 'MIGRATE_IPVS_DEPRECATED')).toEqual([])
  })
})

describe('clean-up at the switch (caveat 11, platformCleanup)', () => {
  const keepalived = {
    kind: 'ipvs-virtual-server',
    name: 'TCP 192.168.1.100:6443',
    reason: 'no Service has this address',
    source: {path: 'ipvsadm-Sn.txt', line: 12},
  }

  it('MIGRATE_IPVS_FOREIGN_FLUSHED names the foreign virtual servers, with evidence', () => {
    const s = state('ipvs', [sp('a', {scheduler: 'rr'})])
    s.foreign.push(keepalived)
    const f = one(s, 'nftables', 'MIGRATE_IPVS_FOREIGN_FLUSHED')
    expect(f.severity).toBe('error')
    expect(f.addresses).toEqual(['TCP 192.168.1.100:6443'])
    expect(f.evidence).toEqual([{path: 'ipvsadm-Sn.txt', line: 12}])
  })

  it("ignores kube-proxy's scheduler probe 198.51.100.0:20000 and does not flag a switch to iptables", () => {
    const s = state('ipvs', [sp('a')])
    s.foreign.push({...keepalived, name: 'TCP 198.51.100.0:20000'})
    expect(plan(s, 'nftables', 'MIGRATE_IPVS_FOREIGN_FLUSHED')).toEqual([])
    expect(plan(s, 'nftables', 'MIGRATE_IPVS_FLUSH_UNVERIFIED')).toEqual([])
    const t = state('ipvs', [sp('a')])
    t.foreign.push(keepalived)
    expect(plan(t, 'iptables', 'MIGRATE_IPVS_FOREIGN_FLUSHED')).toEqual([])
  })

  it('MIGRATE_IPVS_FLUSH_UNVERIFIED when an iptables input holds no IPVS listing', () => {
    expect(one(state('iptables'), 'nftables', 'MIGRATE_IPVS_FLUSH_UNVERIFIED').severity).toBe(
      'info',
    )
    const s = state('iptables')
    s.sources.push({path: 'ipvsadm.txt', format: 'ipvsadm', tool: null})
    expect(plan(s, 'nftables', 'MIGRATE_IPVS_FLUSH_UNVERIFIED')).toEqual([])
  })

  it('MIGRATE_NO_AUTOMATIC_CLEANUP between iptables and ipvs, not to or from nftables', () => {
    expect(one(state('ipvs'), 'iptables', 'MIGRATE_NO_AUTOMATIC_CLEANUP').message).toContain(
      'kube-ipvs0',
    )
    expect(one(state('iptables'), 'ipvs', 'MIGRATE_NO_AUTOMATIC_CLEANUP').message).toContain(
      'KUBE-SVC-',
    )
    expect(plan(state('ipvs'), 'nftables', 'MIGRATE_NO_AUTOMATIC_CLEANUP')).toEqual([])
    expect(plan(state('nftables'), 'iptables', 'MIGRATE_NO_AUTOMATIC_CLEANUP')).toEqual([])
  })
})

describe('the input itself', () => {
  it('MIGRATE_SOURCE_MODE_UNKNOWN for cluster objects without --from', () => {
    const s = state('cluster', [sp('a', {frontends: [fe('ClusterIP', '10.96.0.1', 443)]})])
    expect(one(s, 'nftables', 'MIGRATE_SOURCE_MODE_UNKNOWN').severity).toBe('warning')
    expect(plan(s, 'nftables', 'MIGRATE_SOURCE_MODE_UNKNOWN', {from: 'ipvs'})).toEqual([])
    expect(plan(state('iptables'), 'nftables', 'MIGRATE_SOURCE_MODE_UNKNOWN')).toEqual([])
  })

  it('MIGRATE_INPUT_INCOMPLETE points at the reader warnings', () => {
    const s = state('iptables')
    s.diagnostics.push({
      severity: 'warning',
      code: 'IPT_UNKNOWN_MATCH',
      message: 'x',
      source: {path: 'dump.txt', line: 40},
    })
    expect(one(s, 'nftables', 'MIGRATE_INPUT_INCOMPLETE').evidence).toEqual([
      {path: 'dump.txt', line: 40},
    ])
    const clean = state('iptables')
    clean.diagnostics.push({severity: 'info', code: 'IPT_NOTE', message: 'x', source: null})
    expect(plan(clean, 'nftables', 'MIGRATE_INPUT_INCOMPLETE')).toEqual([])
  })

  it('a switch to the same mode has no mode-change findings', () => {
    const s = state(
      'iptables',
      [sp('a', {frontends: [fe('ClusterIP', '10.96.0.10', 80), fe('NodePort', null, 30080)]})],
      {localhostNodePorts: true, conntrackInvalidDrop: true, kernel: '6.1.0'},
    )
    expect(plan(s, 'iptables', 'MIGRATE_LOCALHOST_NODEPORTS')).toEqual([])
    expect(plan(s, 'iptables', 'MIGRATE_CONNTRACK_INVALID_DROP')).toEqual([])
  })
})

describe('failsOn (--fail-on)', () => {
  it('counts findings at or above the threshold; none never fails', async () => {
    const {failsOn} = await import('../../../src/analyze/migrate.js')
    const f = (severity: 'error' | 'warning' | 'info') => ({
      id: 'MIGRATE_INPUT_INCOMPLETE' as const,
      severity,
      title: '',
      message: '',
      services: [],
      addresses: [],
      evidence: [],
      action: '',
      docs: null,
    })
    expect(failsOn([f('warning')], 'error')).toBe(false)
    expect(failsOn([f('warning')], 'warning')).toBe(true)
    expect(failsOn([f('info')], 'warning')).toBe(false)
    expect(failsOn([f('info')], 'info')).toBe(true)
    expect(failsOn([f('error')], 'none')).toBe(false)
    expect(failsOn([], 'info')).toBe(false)
  })
})
