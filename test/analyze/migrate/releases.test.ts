import {describe, expect, it} from 'vitest'
import type {KubeProxyConfig} from '../../../src/model/types.js'
import {ep, fe, one, plan, sp, state} from './states.js'

/** A configuration as the reader makes it, with only `fields` set. */
function config(fields: Partial<KubeProxyConfig> = {}): KubeProxyConfig {
  return {
    kind: 'KubeProxyConfig',
    form: 'configmap',
    mode: null,
    detectLocalMode: null,
    nodePortAddresses: null,
    localDetector: null,
    localInterface: null,
    clusterCIDRs: null,
    masqueradeBit: null,
    masqueradeAll: null,
    localhostNodePorts: null,
    conntrackTcpBeLiberal: null,
    ipvsScheduler: null,
    ipvsStrictARP: null,
    ipvsExcludeCIDRs: null,
    featureGates: {},
    at: {},
    ...fields,
  }
}

describe('service port names over 128 bytes (kubernetes #139515)', () => {
  // 'ns/' + name + ':http': 129 bytes with a 121-byte name, 128 with 120.
  const long = sp('a'.repeat(121))
  const fits = sp('a'.repeat(120))

  it('is an error for kube-proxy 1.36, naming the service port', () => {
    const f = one(state('iptables', [long, fits]), 'nftables', 'MIGRATE_NFT_LONG_NAME', {
      kubeProxyVersion: '1.36',
    })
    expect(f.severity).toBe('error')
    expect(f.services).toEqual([`ns/${'a'.repeat(121)}:http/tcp`])
    expect(f.evidence).toEqual([{path: 'dump.txt', line: 7}])
  })

  it('counts bytes, not characters', () => {
    const wide = sp('é'.repeat(61)) // 122 bytes of name: 130 in all, 69 characters
    expect(
      plan(state('iptables', [wide]), 'nftables', 'MIGRATE_NFT_LONG_NAME', {
        kubeProxyVersion: '1.35',
      }),
    ).toHaveLength(1)
  })

  it('says nothing at 128 bytes, for 1.37 (which cuts comments), or for another target', () => {
    const opts = {kubeProxyVersion: '1.36' as const}
    expect(plan(state('iptables', [fits]), 'nftables', 'MIGRATE_NFT_LONG_NAME', opts)).toEqual([])
    expect(plan(state('iptables', [long]), 'nftables', 'MIGRATE_NFT_LONG_NAME')).toEqual([])
    expect(plan(state('iptables', [long]), 'ipvs', 'MIGRATE_NFT_LONG_NAME', opts)).toEqual([])
  })
})

describe('tables of a newer host nft (kubernetes #136786)', () => {
  const node = {
    nftVersion: 'nftables v1.1.3 (Commodore Bullmoose #4)',
    otherTables: ['inet firewalld'],
  }

  it('is an error before 1.36, a warning for 1.36, nothing for 1.37', () => {
    const s = state('iptables', [], node)
    const f = one(s, 'nftables', 'MIGRATE_NFT_FOREIGN_NEWER_NFT', {kubeProxyVersion: '1.35'})
    expect(f.severity).toBe('error')
    expect(f.message).toContain('inet firewalld')
    expect(
      one(s, 'nftables', 'MIGRATE_NFT_FOREIGN_NEWER_NFT', {kubeProxyVersion: '1.36'}).severity,
    ).toBe('warning')
    expect(plan(s, 'nftables', 'MIGRATE_NFT_FOREIGN_NEWER_NFT')).toEqual([])
  })

  it('needs both: an older host nft or no other table is no finding; no listing is "cannot verify"', () => {
    const opts = {kubeProxyVersion: '1.35' as const}
    expect(
      plan(
        state('iptables', [], {...node, nftVersion: '1.1.1'}),
        'nftables',
        'MIGRATE_NFT_FOREIGN_NEWER_NFT',
        opts,
      ),
    ).toEqual([])
    expect(
      plan(
        state('iptables', [], {...node, otherTables: []}),
        'nftables',
        'MIGRATE_NFT_FOREIGN_NEWER_NFT',
        opts,
      ),
    ).toEqual([])
    const s = state('iptables', [], {nftVersion: '1.1.5'})
    expect(plan(s, 'nftables', 'MIGRATE_NFT_FOREIGN_NEWER_NFT', opts)).toEqual([])
    expect(one(s, 'nftables', 'MIGRATE_NFT_FOREIGN_NEWER_NFT_UNVERIFIED', opts).severity).toBe(
      'warning',
    )
  })
})

describe('nftables sync time at scale (kubernetes #135639, #139513)', () => {
  const many = (n: number, endpoints = 1) =>
    Array.from({length: n}, (_, i) =>
      sp(`s${i}`, {
        endpoints: Array.from({length: endpoints}, (_, j) => ep(`10.244.${i % 250}.${j + 1}`, 80)),
      }),
    )

  it('warns from 500 service ports before 1.36, and is info from 1.36', () => {
    const s = state('iptables', many(500))
    expect(one(s, 'nftables', 'MIGRATE_NFT_SCALE', {kubeProxyVersion: '1.35'}).severity).toBe(
      'warning',
    )
    expect(one(s, 'nftables', 'MIGRATE_NFT_SCALE', {kubeProxyVersion: '1.36'}).severity).toBe(
      'info',
    )
  })

  it('counts endpoints too (25,000), and says nothing below both thresholds', () => {
    expect(plan(state('iptables', many(100, 250)), 'nftables', 'MIGRATE_NFT_SCALE')).toHaveLength(1)
    expect(plan(state('iptables', many(499, 50)), 'nftables', 'MIGRATE_NFT_SCALE')).toEqual([])
    expect(plan(state('nftables', many(600)), 'iptables', 'MIGRATE_NFT_SCALE')).toEqual([])
  })
})

describe('kernel features and the nft binary', () => {
  it('MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED unless the rules were loaded; _MISSING when they failed', () => {
    expect(
      one(state('iptables'), 'nftables', 'MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED').severity,
    ).toBe('info')
    expect(
      plan(state('iptables'), 'nftables', 'MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED', {
        kernelCheck: {loaded: true},
      }),
    ).toEqual([])
    const f = one(state('iptables'), 'nftables', 'MIGRATE_NFT_KERNEL_FEATURES_MISSING', {
      kernelCheck: {
        loaded: false,
        error: 'Error: Could not process rule: No such file or directory',
      },
    })
    expect(f.severity).toBe('error')
    expect(f.message).toContain('No such file or directory')
    expect(
      one(state('iptables'), 'nftables', 'MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED', {
        kernelCheck: {loaded: null, reason: 'not root'},
      }).message,
    ).toContain('not root')
    expect(plan(state('nftables'), 'nftables', 'MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED')).toEqual(
      [],
    )
  })

  it('MIGRATE_NFT_BINARY_UNVERIFIED asks for JSON support before 1.37 only', () => {
    expect(
      one(state('ipvs'), 'nftables', 'MIGRATE_NFT_BINARY_UNVERIFIED', {kubeProxyVersion: '1.36'})
        .message,
    ).toContain('--json')
    expect(one(state('ipvs'), 'nftables', 'MIGRATE_NFT_BINARY_UNVERIFIED').message).not.toContain(
      '--json',
    )
    expect(plan(state('ipvs'), 'iptables', 'MIGRATE_NFT_BINARY_UNVERIFIED')).toEqual([])
  })
})

describe('ClusterIP ports no Service uses (cluster-ips-check)', () => {
  it('iptables -> nftables: refused instead of timing out', () => {
    const f = one(
      state('iptables', [sp('web')]),
      'nftables',
      'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED',
    )
    expect(f.addresses).toEqual(['10.96.0.10'])
    expect(f.message).toContain('cluster-ips-check')
  })

  it('nftables -> iptables: open (un-NATed) instead of refused, the same rule the other way', () => {
    const f = one(state('nftables', [sp('web')]), 'iptables', 'MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN')
    expect(f.severity).toBe('info')
    expect(f.addresses).toEqual(['10.96.0.10'])
    expect(f.action).toContain('pass un-NATed to whatever routes them')
    expect(
      plan(state('nftables', [sp('web')]), 'iptables', 'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED'),
    ).toEqual([])
    expect(
      plan(state('iptables', [sp('web')]), 'nftables', 'MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN'),
    ).toEqual([])
    expect(
      plan(state('nftables', [sp('web')]), 'ipvs', 'MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN'),
    ).toEqual([])
  })

  it('not from ipvs (its own finding), nor without ClusterIPs', () => {
    expect(
      plan(state('ipvs', [sp('web')]), 'nftables', 'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED'),
    ).toEqual([])
    expect(
      plan(
        state('iptables', [sp('np', {frontends: [fe('NodePort', null, 30080)]})]),
        'nftables',
        'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED',
      ),
    ).toEqual([])
  })
})

describe('the default mode change (KEP-5343)', () => {
  it('warns when the configuration given does not set mode, or sets it to ""', () => {
    expect(
      one(state('iptables'), 'nftables', 'MIGRATE_DEFAULT_MODE_CHANGE', {config: config()})
        .severity,
    ).toBe('warning')
    const f = one(state('iptables'), 'nftables', 'MIGRATE_DEFAULT_MODE_CHANGE', {
      config: config({mode: '', at: {mode: {path: 'cm.yaml', line: 12}}}),
    })
    expect(f.evidence).toEqual([{path: 'cm.yaml', line: 12}])
  })

  it('is silent when mode is set, "cannot verify" without a configuration, and only from iptables', () => {
    expect(
      plan(state('iptables'), 'nftables', 'MIGRATE_DEFAULT_MODE_CHANGE', {
        config: config({mode: 'iptables'}),
      }),
    ).toEqual([])
    expect(
      one(state('iptables'), 'nftables', 'MIGRATE_DEFAULT_MODE_CHANGE_UNVERIFIED').severity,
    ).toBe('info')
    expect(plan(state('ipvs'), 'nftables', 'MIGRATE_DEFAULT_MODE_CHANGE_UNVERIFIED')).toEqual([])
  })
})

describe('IPVS timeline and localhost NodePorts in 1.37', () => {
  it('MIGRATE_IPVS_DEPRECATED names the gate and the releases', () => {
    const f = one(state('iptables'), 'ipvs', 'MIGRATE_IPVS_DEPRECATED')
    expect(f.message).toMatch(/KubeProxyIPVS.*1\.40.*1\.43/)
    expect(f.message).toContain('refuses to start')
  })

  const np = sp('np', {frontends: [fe('NodePort', null, 30080)]})
  it('names the 1.37 alpha gate, its TCP-only limit and bug #142183', () => {
    const f = one(
      state('iptables', [np], {localhostNodePorts: true}),
      'nftables',
      'MIGRATE_LOCALHOST_NODEPORTS',
    )
    expect(f.severity).toBe('warning')
    expect(f.message).toContain('KubeProxyNFTablesLocalhostNodePorts')
    expect(f.message).toContain('#142183')
    const old = one(
      state('iptables', [np], {localhostNodePorts: true}),
      'nftables',
      'MIGRATE_LOCALHOST_NODEPORTS',
      {
        kubeProxyVersion: '1.36',
      },
    )
    expect(old.message).not.toContain('KubeProxyNFTablesLocalhostNodePorts')
  })

  it('is info (TCP only) when the configuration turns the gate on with localhost in nodePortAddresses', () => {
    const f = one(
      state('iptables', [np], {localhostNodePorts: true}),
      'nftables',
      'MIGRATE_LOCALHOST_NODEPORTS',
      {
        config: config({
          nodePortAddresses: ['primary', 'localhost'],
          featureGates: {KubeProxyNFTablesLocalhostNodePorts: true},
        }),
      },
    )
    expect(f.severity).toBe('info')
    expect(f.title).toContain('TCP only')
  })

  it('reads localhostNodePorts from the configuration when the rules do not show it', () => {
    const s = state('iptables', [np])
    expect(
      plan(s, 'nftables', 'MIGRATE_LOCALHOST_NODEPORTS', {
        config: config({localhostNodePorts: false}),
      }),
    ).toEqual([])
    expect(
      plan(s, 'nftables', 'MIGRATE_LOCALHOST_NODEPORTS', {
        config: config({localhostNodePorts: true}),
      }),
    ).toHaveLength(1)
  })
})

describe('the CNI must follow (Calico, kube-router)', () => {
  it('Calico chains in iptables: MIGRATE_CNI_NFTABLES_MODE names nftablesMode', () => {
    const f = one(
      state('iptables', [], {otherChains: ['cali-', 'FLANNEL-']}),
      'nftables',
      'MIGRATE_CNI_NFTABLES_MODE',
    )
    expect(f.title).toContain('Calico')
    expect(f.message).toContain('nftablesMode: Enabled')
  })

  it('kube-router from a foreign KUBE-ROUTER-* chain', () => {
    const s = state('iptables', [], {otherChains: ['KUBE-ROUTER-']})
    expect(one(s, 'nftables', 'MIGRATE_CNI_NFTABLES_MODE').title).toContain('kube-router')
  })

  it('nothing when Calico already has its nftables table, or no CNI kp knows; "cannot verify" without rules', () => {
    expect(
      plan(
        state('iptables', [], {otherChains: ['cali-'], otherTables: ['inet calico']}),
        'nftables',
        'MIGRATE_CNI_NFTABLES_MODE',
      ),
    ).toEqual([])
    expect(
      plan(
        state('iptables', [], {otherChains: ['CILIUM_']}),
        'nftables',
        'MIGRATE_CNI_NFTABLES_MODE',
      ),
    ).toEqual([])
    expect(
      plan(
        state('iptables', [], {otherChains: []}),
        'nftables',
        'MIGRATE_CNI_NFTABLES_MODE_UNVERIFIED',
      ),
    ).toEqual([])
    expect(
      one(state('iptables'), 'nftables', 'MIGRATE_CNI_NFTABLES_MODE_UNVERIFIED').severity,
    ).toBe('info')
    expect(
      plan(state('iptables', [], {otherChains: ['cali-']}), 'ipvs', 'MIGRATE_CNI_NFTABLES_MODE'),
    ).toEqual([])
  })
})

describe("kube-proxy's configuration feeds the other findings", () => {
  it('gives the source mode of cluster objects (an unset mode is the default, iptables)', () => {
    const cluster = state('cluster', [sp('web')])
    expect(plan(cluster, 'nftables', 'MIGRATE_SOURCE_MODE_UNKNOWN')).toHaveLength(1)
    const opts = {config: config({mode: ''})}
    expect(plan(cluster, 'nftables', 'MIGRATE_SOURCE_MODE_UNKNOWN', opts)).toEqual([])
    expect(plan(cluster, 'nftables', 'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED', opts)).toHaveLength(
      1,
    )
    const ipvs = {config: config({mode: 'ipvs'})}
    expect(plan(cluster, 'nftables', 'MIGRATE_IPVS_CONFIG', ipvs)).toHaveLength(1)
    expect(
      plan(cluster, 'nftables', 'MIGRATE_SOURCE_MODE_UNKNOWN', {
        config: config({mode: 'kernelspace'}),
      }),
    ).toHaveLength(1)
  })

  it('MIGRATE_IPVS_CONFIG lists the ipvs.* fields it sets, citing their lines', () => {
    const at = {path: 'cm.yaml', line: 30}
    const f = one(state('ipvs'), 'nftables', 'MIGRATE_IPVS_CONFIG', {
      config: config({
        mode: 'ipvs',
        ipvsScheduler: 'lc',
        ipvsStrictARP: true,
        at: {ipvsScheduler: at},
      }),
    })
    expect(f.message).toContain('ipvs.scheduler=lc')
    expect(f.message).toContain('ipvs.strictARP=true')
    expect(f.evidence).toEqual([at])
    expect(one(state('ipvs'), 'nftables', 'MIGRATE_IPVS_CONFIG').message).not.toContain(
      'ipvs.scheduler=',
    )
  })
})
