import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runKpInProcess} from '../helpers/run-in-process.js'

const DIR = 'fixtures/diff/upstream-overall/'
// Other readers' fixtures of the same upstream scenario (see each folder's PROVENANCE.md).
const IPT_OVERALL = 'fixtures/iptables/upstream-overall/input.rules'
const IPT_OLDER = 'fixtures/iptables/upstream-multipleservices-older/input.rules'
const NFT_OVERALL = 'fixtures/nft/upstream-overall/input.nft'
const CLUSTER = 'fixtures/kube/iptables-overall/cluster.yaml'

describe('kp diff on saved states', () => {
  it('exits 0 and reports equal for the same scenario in iptables and nftables mode', async () => {
    const r = await runKpInProcess([
      'diff',
      `${DIR}iptables.state.json`,
      `${DIR}nftables.state.json`,
      '--json',
    ])
    expect(r.exitCode).toBe(0)
    const doc = JSON.parse(r.stdout)
    expect(doc).toMatchObject({
      schemaVersion: 1,
      kind: 'DiffResult',
      equal: true,
      services: [],
      node: [],
    })
    expect(doc.a.mode).toBe('iptables')
    expect(doc.b).toEqual({
      mode: 'nftables',
      sources: [{path: 'corpus/upstream/nftables-overall.dump', format: 'nft', tool: null}],
      complete: true,
    })
  })

  it('shows differences as -/+ lines grouped by service, without colour when not on a terminal, and exits 1', async () => {
    const r = await runKpInProcess([
      'diff',
      `${DIR}iptables.state.json`,
      `${DIR}iptables-older.state.json`,
    ])
    expect(r.exitCode).toBe(1)
    const lines = r.stdout.split('\n')
    const at = lines.indexOf('ns5/svc5:p80/tcp  (changed)')
    expect(at).toBeGreaterThan(0)
    expect(lines.slice(at + 1, at + 3)).toEqual([
      '  - sessionAffinity: ClientIP 10800s',
      '  + sessionAffinity: None',
    ])
    expect(r.stdout).not.toMatch(/\u001b\[/)
  })

  it('reads one side from stdin', async () => {
    const r = await runKpInProcess(['diff', '-', `${DIR}nftables.state.json`, '--json'], {
      input: readFileSync(`${DIR}iptables.state.json`, 'utf8'),
    })
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout).equal).toBe(true)
  })
})

describe('kp diff on real dumps (through the readers)', () => {
  it('the older upstream iptables test differs only by ns5/svc5 session affinity (fixtures/PROVENANCE.md), in one JSON document', async () => {
    const r = await runKpInProcess(['diff', IPT_OVERALL, IPT_OLDER, '--json'])
    expect(r.exitCode).toBe(1)
    const doc = JSON.parse(r.stdout)
    expect(doc.services).toEqual([
      {
        service: 'ns5/svc5:p80/tcp',
        change: 'changed',
        differences: [{field: 'sessionAffinity', a: 'ClientIP 10800s', b: 'None'}],
      },
    ])
  })

  it('iptables rules equal the cluster objects they come from, seen from test-node', async () => {
    const r = await runKpInProcess(['diff', IPT_OVERALL, CLUSTER, '--node', 'test-node', '--json'])
    expect(JSON.parse(r.stdout)).toMatchObject({
      equal: true,
      services: [],
      node: [],
      a: {mode: 'iptables'},
      b: {mode: 'cluster'},
    })
    expect(r.exitCode).toBe(0)
  })

  it('iptables and nftables of the same scenario proxy the same service ports; node settings differ', async () => {
    const r = await runKpInProcess(['diff', IPT_OVERALL, NFT_OVERALL, '--json'])
    expect(r.exitCode).toBe(1)
    const doc = JSON.parse(r.stdout)
    expect(doc.services).toEqual([])
    // nftables always masquerades fully-random (docs/kube-proxy-layouts.md §3.8), never serves localhost NodePorts,
    // and this dump lists its NodePort addresses; the iptables test has localhost NodePorts on.
    expect(doc.node.map((d: {field: string}) => d.field).sort()).toEqual([
      'localhostNodePorts',
      'nodePortAddresses',
      'randomFully',
    ])
  })
})

describe('kp diff errors', () => {
  it('exits 3 with path:line on an unreadable side, 2 when both sides are stdin', async () => {
    const r = await runKpInProcess([
      'diff',
      `${DIR}iptables.state.json`,
      'does/not/exist',
      '--json',
    ])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('does/not/exist:1: cannot read')
    expect((await runKpInProcess(['diff', '-', '-'])).exitCode).toBe(2)
  })
})

describe('kp diff of cluster objects against the rules kube-proxy makes of them', () => {
  it('internalTrafficPolicy=Local on a NodePort Service: no difference in iptables or nftables mode', async () => {
    // The cluster-object reader gave shares over all endpoints where the rules' readers give them
    // over the ClusterIP's local chain: every endpoint of such a service was reported changed.
    const yaml = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: web, namespace: ns}
  spec:
    type: NodePort
    clusterIP: 10.96.0.10
    clusterIPs: [10.96.0.10]
    internalTrafficPolicy: Local
    externalTrafficPolicy: Cluster
    ipFamilies: [IPv4]
    ports:
    - {name: http, port: 80, protocol: TCP, targetPort: 8080, nodePort: 30080}
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata:
    name: web-abc
    namespace: ns
    labels: {kubernetes.io/service-name: web}
  addressType: IPv4
  ports:
  - {name: http, port: 8080, protocol: TCP}
  endpoints:
  - {addresses: [10.244.1.5], conditions: {ready: true}, nodeName: node-a}
  - {addresses: [10.244.2.6], conditions: {ready: true}, nodeName: node-b}
  - {addresses: [10.244.2.7], conditions: {ready: true}, nodeName: node-b}
`
    const dir = mkdtempSync(join(tmpdir(), 'kp-diff-itp-'))
    try {
      const cluster = join(dir, 'cluster.yaml')
      writeFileSync(cluster, yaml)
      for (const [to, file] of [
        ['iptables', 'rules.txt'],
        ['nftables', 'rules.nft'],
      ] as const) {
        const out = join(dir, file)
        const m = await runKpInProcess([
          'migrate',
          '--to',
          to,
          '-f',
          cluster,
          '--node',
          'node-a',
          '--pod-cidr',
          '10.244.0.0/16',
          '--out',
          out,
        ])
        expect(m.exitCode, m.stderr).toBe(0)
        const d = await runKpInProcess(['diff', cluster, out, '--node', 'node-a', '--json'])
        const doc = JSON.parse(d.stdout)
        expect(doc.services, to).toEqual([])
        expect(d.exitCode, to).toBe(0)
      }
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
