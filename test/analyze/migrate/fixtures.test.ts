/**
 * The saved states of fixtures/migrate/ stand in for what the readers make of the IPVS dumps
 * next to them; these tests keep the two in step and run the checks on the real reading too.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../../src/analyze/diff.js'
import {planMigration} from '../../../src/analyze/migrate.js'
import type {ProxyState} from '../../../src/model/types.js'
import {loadInputs} from '../../../src/readers/load.js'
import {readState} from '../../../src/readers/read-state.js'

const CLUSTER = 'fixtures/kube/ipvs-generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml'

async function readIpvs(dumpPath: string): Promise<ProxyState> {
  const inputs = await loadInputs([dumpPath])
  const cluster = (await loadInputs([CLUSTER])).sources
  return readState({sources: inputs.sources, facts: inputs.facts}, {node: 'node-a', cluster})
}

const saved = (path: string): ProxyState => JSON.parse(readFileSync(path, 'utf8')) as ProxyState

describe('fixtures/migrate saved states', () => {
  it('ipvs-node-a/state.json proxies what the IPVS reader reads from ipvsadm-Sn.txt with the cluster objects', async () => {
    const read = await readIpvs('fixtures/migrate/ipvs-node-a/ipvsadm-Sn.txt')
    expect(read.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
    const r = diffStates(saved('fixtures/migrate/ipvs-node-a/state.json'), read)
    expect(r.services).toEqual([])
    expect(r.node).toEqual([])
  })

  it('the keepalived virtual server read from the dump is flushed by the switch to nftables (MIGRATE_IPVS_FOREIGN_FLUSHED)', async () => {
    const read = await readIpvs('fixtures/migrate/ipvs-keepalived/ipvsadm-Sn.txt')
    const flushed = planMigration(read, 'nftables').find(
      (f) => f.id === 'MIGRATE_IPVS_FOREIGN_FLUSHED',
    )
    expect(flushed?.severity).toBe('error')
    expect(flushed?.evidence).toEqual([
      {path: 'fixtures/migrate/ipvs-keepalived/ipvsadm-Sn.txt', line: 44},
    ])
    const ids = planMigration(read, 'nftables').map((f) => f.id)
    expect(ids).toEqual(
      planMigration(saved('fixtures/migrate/ipvs-keepalived/state.json'), 'nftables').map(
        (f) => f.id,
      ),
    )
  })
})
