/**
 * node.otherChains and node.otherTables: what else programs netfilter on the node, which the
 * migration findings read (the CNI that must follow kube-proxy, tables that crash an older nft).
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../src/model/types.js'
import {ROOT} from '../helpers/run-cli.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

async function list(args: string[], stdin?: string): Promise<ProxyState> {
  const r = await runKpInProcess(
    ['list', '--json', ...args],
    stdin === undefined ? {} : {input: stdin},
  )
  expect(r.exitCode, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as ProxyState
}

describe('node.otherChains (iptables dumps)', () => {
  it('names the first word of each chain neither kube-proxy, kubelet nor iptables made', async () => {
    const s = await list(['-f', 'fixtures/iptables/handmade-node-with-cni/input.rules'])
    // cali-FORWARD, CNI-DN-1234 / CNI-HOSTPORT-*, DOCKER and DOCKER-ISOLATION-STAGE-1 / DOCKER-USER.
    expect(s.node.otherChains).toEqual(['CNI-', 'DOCKER', 'DOCKER-', 'cali-'])
  })

  it('is [] for a dump of kube-proxy and kubelet chains only', async () => {
    const s = await list(['-f', 'fixtures/iptables/upstream-overall/input.rules'])
    expect(s.node.otherChains).toEqual([])
  })
})

describe('node.otherTables (nft listings)', () => {
  const kubeProxy = readFileSync(join(ROOT, 'fixtures/nft/upstream-overall/list.nft'), 'utf8')

  it('lists every table that is not kube-proxy\'s, as "family name"', async () => {
    const firewalld =
      'table inet firewalld {\n\tchain filter_INPUT {\n\t\ttype filter hook input priority filter + 10; policy accept;\n\t}\n}\n'
    const s = await list(['-f', '-', '--format', 'nft'], kubeProxy + firewalld)
    expect(s.node.otherTables).toEqual(['inet firewalld'])
  })

  it('is [] with only kube-proxy tables, and absent for an iptables dump', async () => {
    expect((await list(['-f', 'fixtures/nft/upstream-overall/list.nft'])).node.otherTables).toEqual(
      [],
    )
    const s = await list(['-f', 'fixtures/iptables/upstream-overall/input.rules'])
    expect(s.node.otherTables).toBeUndefined()
  })

  it('a saved state without these fields (written before them) still reads', async () => {
    const saved = await list(['-f', 'fixtures/nft/upstream-overall/list.nft'])
    delete saved.node.otherTables
    delete saved.node.otherChains
    const again = await list(['-f', '-', '--format', 'kp-json'], JSON.stringify(saved))
    expect(again.node.otherTables).toBeUndefined()
  })
})
