/**
 * The behaviour MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED reports, measured with real packets: a
 * new connection to a ClusterIP on a port no Service uses leaves un-NATed under kube-proxy's
 * iptables rules (here it is lost beyond the gateway: the client times out), and is refused under
 * the nftables rules kp renders for the same node (cluster-ips-check rejects it). The Service's
 * own port is DNATed in both, so the difference is the port, not the address. Also
 * --check-kernel: the rendered rules pass `nft --check` in a namespace kp makes.
 */
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {Finding} from '../../src/analyze/findings.js'
import {checkKernel} from '../../src/live/kernel-check.js'
import {ROOT} from '../helpers/run-cli.js'
import {runKpInProcess} from '../helpers/run-in-process.js'
import {Netns, addKubeProxyNfacctCounters, kernelUnavailable, skipEachWhen} from './netns.js'

const skipReason = kernelUnavailable('test/live/cluster-ips-check.test.ts', [
  'ip',
  'iptables-restore',
  'nft',
  'nfacct',
  'unshare',
  'bash',
  'timeout',
])
skipEachWhen(skipReason)

const DUMP = join(ROOT, 'fixtures/iptables/upstream-overall/input.rules')
// ns1/svc1:p80 (fixtures/iptables/upstream-overall): ClusterIP 172.30.0.41, TCP port 80 only.
const CLUSTER_IP = '172.30.0.41'

/**
 * A namespace whose default route leads into a veth pair to nowhere (the gateway's MAC is a
 * permanent neighbour no one answers to): what leaves the node un-NATed is lost, as on a node
 * whose gateway drops it.
 */
function node(): Netns {
  const ns = new Netns()
  ns.run(['ip', 'link', 'set', 'lo', 'up'])
  ns.run(['ip', 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1'])
  ns.run(['ip', 'addr', 'add', '10.0.0.2/24', 'dev', 'v0'])
  ns.run(['ip', 'link', 'set', 'v0', 'up'])
  ns.run(['ip', 'link', 'set', 'v1', 'up'])
  ns.run([
    'ip',
    'neigh',
    'add',
    '10.0.0.1',
    'lladdr',
    '02:00:00:00:00:01',
    'dev',
    'v0',
    'nud',
    'permanent',
  ])
  ns.run(['ip', 'route', 'add', 'default', 'via', '10.0.0.1'])
  return ns
}

/** A TCP connect from inside `ns`: refused, timeout, or connected. */
function connect(ns: Netns, ip: string, port: number): 'refused' | 'timeout' | 'connected' {
  const r = spawnSync(
    'ip',
    ['netns', 'exec', ns.name, 'timeout', '2', 'bash', '-c', `exec 3<>/dev/tcp/${ip}/${port}`],
    {encoding: 'utf8'},
  )
  if (r.status === 124) return 'timeout'
  if (r.status === 0) return 'connected'
  if (/refused/i.test(r.stderr)) return 'refused'
  throw new Error(`connect ${ip}:${port} in ${ns.name}: exit ${r.status}: ${r.stderr}`)
}

describe('connections to a ClusterIP on a port no Service uses', () => {
  let tmp = ''
  let iptablesNode: Netns | null = null
  let nftablesNode: Netns | null = null

  beforeAll(async () => {
    if (skipReason) return
    tmp = mkdtempSync(join(tmpdir(), 'kp-cluster-ips-'))
    const rendered = join(tmp, 'kube-proxy.nft')
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', DUMP, '--out', rendered])
    if (r.exitCode !== 0) throw new Error(`kp migrate: ${r.stderr}`)
    iptablesNode = node()
    addKubeProxyNfacctCounters(iptablesNode)
    iptablesNode.run(['iptables-restore'], readFileSync(DUMP, 'utf8'))
    nftablesNode = node()
    nftablesNode.run(['nft', '-f', rendered])
  })
  afterAll(() => {
    iptablesNode?.delete()
    nftablesNode?.delete()
    if (tmp) rmSync(tmp, {recursive: true, force: true})
  })

  it('iptables mode: un-NATed and lost (timeout); nftables mode: refused at once', () => {
    expect(connect(iptablesNode!, CLUSTER_IP, 81)).toBe('timeout')
    expect(connect(nftablesNode!, CLUSTER_IP, 81)).toBe('refused')
  })

  it("the Service's own port is not refused in either (DNATed, then lost beyond the gateway)", () => {
    expect(connect(iptablesNode!, CLUSTER_IP, 80)).toBe('timeout')
    expect(connect(nftablesNode!, CLUSTER_IP, 80)).toBe('timeout')
  })

  it('kp migrate reports it for this node', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', DUMP, '--check', '--json'])
    const f = (JSON.parse(r.stdout).findings as Finding[]).find(
      (x) => x.id === 'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED',
    )
    expect(f?.addresses).toContain(CLUSTER_IP)
  })
})

describe('--check-kernel (nft --check in a namespace kp makes)', () => {
  it('the rendered rules load: no kernel-features finding', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '-f',
      DUMP,
      '--check',
      '--check-kernel',
      '--json',
    ])
    const found = (JSON.parse(r.stdout).findings as Finding[]).map((f) => f.id)
    expect(found.filter((id) => id.startsWith('MIGRATE_NFT_KERNEL_FEATURES'))).toEqual([])
    const without = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '-f',
      DUMP,
      '--check',
      '--json',
    ])
    expect((JSON.parse(without.stdout).findings as Finding[]).map((f) => f.id)).toContain(
      'MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED',
    )
  })

  it("a file nft refuses is loaded: false with nft's error, naming the file, and the host is untouched", async () => {
    const before = spawnSync('nft', ['list', 'tables'], {encoding: 'utf8'}).stdout
    const text = 'table ip kp-check-test {\n  chain c {\n    jump missing-chain\n  }\n}\n'
    const r = await checkKernel([{name: 'kube-proxy.nft', text}])
    expect(r.loaded).toBe(false)
    expect(r.loaded === false && r.error).toMatch(/^kube-proxy\.nft: .*/)
    const ok = await checkKernel([{name: 'ok.nft', text: 'table ip kp-check-test {\n}\n'}])
    expect(ok).toEqual({loaded: true})
    expect(spawnSync('nft', ['list', 'tables'], {encoding: 'utf8'}).stdout).toBe(before)
  })
})
