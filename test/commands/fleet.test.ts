/**
 * The fleet commands over fleet folders (`--fleet DIR`, as `kp collect --all-nodes` writes them),
 * built from kube-proxy's own upstream dump: node-c keeps a stale service, node-d lacks one.
 */
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {UPSTREAM, withStale, withoutSvc6, writeFleet} from '../helpers/fleet.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const TMP = mkdtempSync(join(tmpdir(), 'kp-fleet-cmd-'))
afterAll(() => rmSync(TMP, {recursive: true, force: true}))
const CLUSTER = 'fixtures/kube/iptables-overall/cluster.yaml'

const ALIKE = writeFleet(
  join(TMP, 'alike'),
  ['node-a', 'node-b', 'node-c'].map((name) => ({name, rules: UPSTREAM})),
)
const ODD = writeFleet(join(TMP, 'odd'), [
  {name: 'node-a', rules: UPSTREAM},
  {name: 'node-b', rules: UPSTREAM},
  {name: 'node-c', rules: withStale(UPSTREAM)},
  {name: 'node-d', rules: withoutSvc6(UPSTREAM)},
  {name: 'node-e', rules: UPSTREAM},
])
const FAILED = writeFleet(join(TMP, 'failed'), [
  {name: 'node-a', rules: UPSTREAM},
  {name: 'node-b', rules: UPSTREAM},
  {name: 'node-f', rules: null, error: 'timed out after 300 s'},
])

const json = (stdout: string) => JSON.parse(stdout)

describe('kp migrate --check over a fleet', () => {
  it('lists each finding once with the nodes it hits; exit by --fail-on over all nodes', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '--check',
      '--fleet',
      ODD,
      '--json',
    ])
    expect(r.exitCode).toBe(0)
    const doc = json(r.stdout)
    expect(doc).toMatchObject({kind: 'FleetMigrateResult', to: 'nftables', failOn: 'error'})
    expect(doc.nodes.map((n: {name: string; ok: boolean}) => [n.name, n.ok])).toEqual([
      ['node-a', true],
      ['node-b', true],
      ['node-c', true],
      ['node-d', true],
      ['node-e', true],
    ])
    const ids = doc.findings.map((f: {id: string}) => f.id)
    // Node-wide findings are one entry each, on every node.
    const localhost = doc.findings.filter(
      (f: {id: string}) => f.id === 'MIGRATE_LOCALHOST_NODEPORTS',
    )
    expect(localhost).toHaveLength(1)
    expect(localhost[0].nodes).toEqual(['node-a', 'node-b', 'node-c', 'node-d', 'node-e'])
    expect(localhost[0].evidence).toBeUndefined()
    expect(new Set(ids).size).toBeLessThan(ids.length) // a finding with other services is its own entry
    expect(doc.nodes[0].counts.warning).toBeGreaterThan(0)

    const strict = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '--check',
      '--fleet',
      ODD,
      '--fail-on',
      'warning',
      '-o',
      'yaml',
    ])
    expect(strict.exitCode).toBe(1)
    expect(strict.stdout).toMatch(/^kind: FleetMigrateResult$/m)
  })

  it('prints the findings × nodes table', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '--check', '--fleet', ALIKE])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/^SEVERITY\s+FINDING\s+NODES/m)
    expect(r.stdout).toMatch(/MIGRATE_LOCALHOST_NODEPORTS\s+3\/3/)
    expect(r.stdout).toMatch(/^node-b\s+iptables\s+0\s+\d+\s+\d+\s+read$/m)
    // Not a terminal: one plain progress line per node.
    expect(r.stderr).toMatch(/^kp: \[3\/3\] node-\w: ok$/m)
  })

  it('a node that could not be collected: the others answered, exit 4 listing it', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '--check',
      '--fleet',
      FAILED,
      '--json',
    ])
    expect(r.exitCode).toBe(4)
    const doc = json(r.stdout)
    expect(doc.nodes.find((n: {name: string}) => n.name === 'node-f')).toMatchObject({
      ok: false,
      code: 'LIVE_TIMEOUT',
      error: 'timed out after 300 s',
    })
    expect(doc.findings.length).toBeGreaterThan(0)
    expect(r.stderr).toMatch(/1 of 3 node\(s\) could not be read \[LIVE_FLEET_PARTIAL\]/)
    expect(r.stderr).toMatch(/node-f: timed out after 300 s \[LIVE_TIMEOUT\]/)
  })
})

describe('kp diff over a fleet', () => {
  it('names the nodes that are not like the others: a stale service, a missing one', async () => {
    const r = await runKpInProcess(['diff', '--fleet', ODD, '--json'])
    expect(r.exitCode).toBe(1)
    const doc = json(r.stdout)
    expect(doc).toMatchObject({
      kind: 'FleetDiffResult',
      equal: false,
      oddNodes: ['node-c', 'node-d'],
    })
    expect(doc.services).toEqual([
      expect.objectContaining({
        service: 'ns6/svc6:p80/tcp',
        majority: ['node-a', 'node-b', 'node-c', 'node-e'],
        odd: [expect.objectContaining({nodes: ['node-d'], absent: true})],
      }),
      expect.objectContaining({
        service: 'ns9/stale:p80/tcp',
        majority: ['node-a', 'node-b', 'node-d', 'node-e'],
        odd: [expect.objectContaining({nodes: ['node-c'], absent: false})],
      }),
    ])
    const text = await runKpInProcess(['diff', '--fleet', ODD])
    expect(text.stdout).toMatch(/node-c: only here \(stale rules\?\)/)
    expect(text.stdout).toMatch(/Not like the others: node-c, node-d/)
  })

  it('limits the comparison to one SERVICE', async () => {
    const r = await runKpInProcess(['diff', '--fleet', ODD, 'ns9/stale', '--json'])
    const doc = json(r.stdout)
    expect(doc.service).toBe('ns9/stale')
    expect(doc.services.map((s: {service: string}) => s.service)).toEqual(['ns9/stale:p80/tcp'])
    expect(doc.oddNodes).toEqual(['node-c'])
    const same = await runKpInProcess(['diff', '--fleet', ODD, 'ns4/svc4:p80', '--json'])
    expect(same.exitCode).toBe(0)
    expect(json(same.stdout)).toMatchObject({equal: true, services: [], oddNodes: []})
  })

  it('exits 0 when every node is alike', async () => {
    const r = await runKpInProcess(['diff', '--fleet', ALIKE])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/All 3 nodes read are alike\./)
  })

  it('--cluster: each node against the objects read from its point of view', async () => {
    const r = await runKpInProcess(['diff', '--fleet', ODD, '--cluster', CLUSTER, '--json'])
    expect(r.exitCode).toBe(1)
    const doc = json(r.stdout)
    const off = doc.cluster.filter((c: {services: unknown[]}) => c.services.length > 0)
    expect(off).toEqual([
      {
        node: 'node-c',
        services: [expect.objectContaining({service: 'ns9/stale:p80/tcp', change: 'added'})],
      },
      {
        node: 'node-d',
        services: [expect.objectContaining({service: 'ns6/svc6:p80/tcp', change: 'removed'})],
      },
    ])
  })

  it('a --cluster file that cannot be read is one error, before any node', async () => {
    const r = await runKpInProcess(['diff', '--fleet', ODD, '--cluster', join(TMP, 'nope.yaml')])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).not.toMatch(/node-a/)
  })
})

describe('fleet inputs', () => {
  it.each([
    [['migrate', '--to', 'nftables', '--check', '--fleet', ODD, '-f', 'x.rules']],
    [['migrate', '--to', 'nftables', '--check', '--fleet', ODD, '--all-nodes']],
    [['migrate', '--to', 'nftables', '--fleet', ODD]],
    [['diff', '--fleet', ODD, 'ns1/svc1', 'extra']],
    [['diff', '--fleet', ODD, '--node', 'node-a']],
  ])('%j is a usage error (USAGE_FLEET_INPUT, exit 2)', async (args) => {
    const r = await runKpInProcess([...args, '--json'])
    expect(r.exitCode).toBe(2)
    expect(json(r.stdout).error.code).toBe('USAGE_FLEET_INPUT')
  })

  it('kp diff without a fleet still needs A and B', async () => {
    const r = await runKpInProcess(['diff', 'x.rules', '--json'])
    expect(r.exitCode).toBe(2)
    expect(json(r.stdout).error).toMatchObject({
      code: 'USAGE_INVALID',
      message: 'Missing 1 required arg: b',
    })
  })

  it('a folder that is not a fleet: INPUT_NOT_FLEET (exit 3)', async () => {
    const cases: Array<[string, string | null, RegExp]> = [
      ['empty', null, /no fleet\.json/],
      ['broken', '{', /fleet\.json: /],
      ['bundle', JSON.stringify({kind: 'KpBundle'}), /not of kind KpFleet/],
      ['none', JSON.stringify({kind: 'KpFleet', nodes: []}), /lists no nodes/],
      [
        'outside',
        JSON.stringify({kind: 'KpFleet', nodes: [{name: 'a', dir: '../../etc'}]}),
        /outside the fleet/,
      ],
    ]
    for (const [name, index, message] of cases) {
      const dir = join(TMP, `bad-${name}`)
      mkdirSync(dir, {recursive: true})
      if (index !== null) writeFileSync(join(dir, 'fleet.json'), index)
      const r = await runKpInProcess(['diff', '--fleet', dir, '--json'])
      expect(r.exitCode, name).toBe(3)
      const {error} = json(r.stdout)
      expect(error.code, name).toBe('INPUT_NOT_FLEET')
      expect(error.message, name).toMatch(message)
    }
  })

  it('--all-nodes with no cluster to reach: exit 4 with the reason, never a crash', async () => {
    const r = await runKpInProcess(
      ['migrate', '--to', 'nftables', '--check', '--all-nodes', '--json'],
      {env: {KUBECONFIG: join(TMP, 'no-kubeconfig'), PATH: '/nonexistent'}},
    )
    expect(r.exitCode).toBe(4)
    expect(json(r.stdout).error.code).toMatch(
      /^LIVE_(NEEDS_CLUSTER|CLUSTER_UNREACHABLE|MISSING_PROGRAM)$/,
    )
  })
})
