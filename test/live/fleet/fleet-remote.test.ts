/**
 * The fleet through kubectl, end to end: the real kubectl client talks to a STAND-IN
 * kube-apiserver (test/helpers/fake-apiserver: no RBAC evaluation, admission, scheduler or
 * kubelet; `pods/exec` runs in the network namespace standing for the pod's node, with only the
 * kube-proxy image's tools on PATH). Ten nodes are network namespaces loaded with kube-proxy's
 * upstream test rules (six services each): node-07 keeps a stale service, node-09 has no
 * kube-proxy pod. Collection over the whole fleet is run once, stopped with Ctrl-C part-way (the
 * whole run is covered by test/live/fleet/collect.test.ts), to keep this file under a minute. kp runs as a CLI process, so Ctrl-C is a real SIGINT.
 */
import {existsSync, mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {spawn} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {StandInApiServer, kubeProxyTools} from '../../helpers/fake-apiserver/index.js'
import {UPSTREAM, withStale} from '../../helpers/fleet.js'
import {ROOT, kpCommand} from '../../helpers/run-cli.js'
import {
  KERNEL_TOOLS,
  Netns,
  addKubeProxyNfacctCounters,
  kernelUnavailable,
  runKpAsync,
  skipEachWhen,
} from '../netns.js'

const skipReason = kernelUnavailable('test/live/fleet/fleet-remote.test.ts', [
  ...KERNEL_TOOLS,
  'kubectl',
])
skipEachWhen(skipReason)

const CLUSTER = join(ROOT, 'fixtures/kube/iptables-overall/cluster.yaml')
const NODES = Array.from({length: 10}, (_, i) => `node-${String(i).padStart(2, '0')}`)

const tmp = mkdtempSync(join(tmpdir(), `kp-fleet-${process.pid}-`))
process.env.KUBECACHEDIR = join(tmp, 'kube-cache')
const api = new StandInApiServer()
const namespaces: Netns[] = []
let kubeconfig = ''

beforeAll(async () => {
  if (skipReason) return
  await api.start()
  kubeconfig = api.kubeconfig(join(tmp, 'kubeconfig'))
  api.addClusterObjects(CLUSTER)
  const tools = kubeProxyTools(join(tmp, 'tools'))
  for (const [i, name] of NODES.entries()) {
    const ns = new Netns()
    namespaces.push(ns)
    addKubeProxyNfacctCounters(ns)
    ns.run(['iptables-restore'], name === 'node-07' ? withStale(UPSTREAM) : UPSTREAM)
    api.nodes.push({name, netns: ns.name, tools, labels: {pool: i >= 5 && i < 9 ? 'a' : 'b'}})
    if (name !== 'node-09') api.addKubeProxyPod(name)
  }
}, 60_000)

afterAll(async () => {
  for (const ns of namespaces) ns.delete()
  if (!skipReason) await api.stop()
  rmSync(tmp, {recursive: true, force: true})
})

const kp = (args: string[]) => runKpAsync([...args, '--kubeconfig', kubeconfig], {timeout: 120_000})

describe('the fleet through kubectl (real kubectl, stand-in API server, 10 namespace nodes)', () => {
  it('kp migrate --check --all-nodes: every node checked, the one without kube-proxy listed, exit 4', async () => {
    const r = await kp([
      ...['migrate', '--to', 'nftables', '--check', '--all-nodes', '--parallel', '10', '--json'],
    ])
    expect(r.exitCode).toBe(4)
    const doc = JSON.parse(r.stdout)
    expect(doc.nodes.map((n: {name: string}) => n.name)).toEqual(NODES)
    const failed = doc.nodes.filter((n: {ok: boolean}) => !n.ok)
    expect(failed).toEqual([
      expect.objectContaining({name: 'node-09', code: 'LIVE_NO_KUBE_PROXY_POD'}),
    ])
    const localhost = doc.findings.find((f: {id: string}) => f.id === 'MIGRATE_LOCALHOST_NODEPORTS')
    expect(localhost.nodes).toEqual(NODES.filter((n) => n !== 'node-09'))
    expect(r.stderr).toMatch(/node-09: .*\[LIVE_NO_KUBE_PROXY_POD\]/)
  })

  it('kp diff -l: the nodes with the label, node-07 not like the others (a stale service)', async () => {
    const r = await kp(['diff', '-l', 'pool=a', '--json'])
    expect(r.exitCode).toBe(1)
    const doc = JSON.parse(r.stdout)
    expect(doc.nodes.map((n: {name: string}) => n.name)).toEqual(NODES.slice(5, 9))
    expect(doc.oddNodes).toEqual(['node-07'])
    expect(doc.services).toEqual([
      expect.objectContaining({
        service: 'ns9/stale:p80/tcp',
        odd: [expect.objectContaining({nodes: ['node-07']})],
      }),
    ])
  })

  it('Ctrl-C during a fleet collect leaves no partial bundle and no collector pod; exit 130', async () => {
    const out = join(tmp, 'interrupted')
    const [cmd, ...rest] = kpCommand()
    const args = [
      ...rest,
      ...['collect', '--all-nodes', '--out', out, '--parallel', '2', '--collector-pod'],
      ...['--kubeconfig', kubeconfig],
    ]
    const child = spawn(cmd!, args, {cwd: ROOT, env: {...process.env, NO_COLOR: '1'}})
    let stderr = ''
    const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString()
        // Stopped once the first node is done and others are under way.
        if (/\[1\/10\]/.test(stderr)) resolve()
      })
      child.on('close', () => resolve())
    })
    child.kill('SIGINT')
    expect(await exit).toBe(130)
    const left = readdirSync(join(out, 'nodes'))
    expect(left.filter((f) => f.includes('partial'))).toEqual([])
    const index = JSON.parse(readFileSync(join(out, 'fleet.json'), 'utf8'))
    expect(index.interrupted).toBe(true)
    expect(index.nodes.filter((n: {dir: string | null}) => n.dir !== null).length).toBe(left.length)
    for (const f of left) expect(existsSync(join(out, 'nodes', f, 'manifest.json'))).toBe(true)
    // What was finished is a fleet kp reads.
    if (left.length > 0) {
      const read = await runKpAsync(['diff', '--fleet', out, '--json'])
      expect(JSON.parse(read.stdout).nodes.filter((n: {ok: boolean}) => n.ok)).toHaveLength(
        left.length,
      )
    }
    const kpPods = api.pods.filter(
      (p) => p.metadata.labels?.['app.kubernetes.io/managed-by'] === 'kp',
    )
    expect(kpPods).toEqual([])
    expect(stderr).toMatch(/LIVE_INTERRUPTED|stopped after/)
  })
})
