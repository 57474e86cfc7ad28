/**
 * Reaching nodes through kubectl, end to end: the real kubectl client (≥ 1.30, WebSocket exec)
 * talks to a STAND-IN kube-apiserver (test/helpers/fake-apiserver: no RBAC evaluation,
 * admission, scheduler or kubelet; it runs `pods/exec` in the network namespace standing for the
 * pod's node, with only the kube-proxy image's tools on PATH). The nodes are network namespaces
 * loaded with real kube-proxy rules; kp runs as a CLI process.
 */
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {BundleManifest} from '../../../src/readers/bundle.js'
import {readRemoteNode} from '../../../src/live/remote/index.js'
import {execBatch, execIn, kubectlOf} from '../../../src/live/remote/kubectl.js'
import {StandInApiServer, kubeProxyTools} from '../../helpers/fake-apiserver/index.js'
import {ROOT, kpCommand} from '../../helpers/run-cli.js'
import {
  KERNEL_TOOLS,
  Netns,
  addKubeProxyNfacctCounters,
  kernelUnavailable,
  objectsBeforeRules,
  runKpAsync,
  skipEachWhen,
} from '../netns.js'

const skipReason = kernelUnavailable('test/live/remote/remote.test.ts', [
  ...KERNEL_TOOLS,
  'kubectl',
])
skipEachWhen(skipReason)

const IPTABLES = readFileSync(join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'), 'utf8')
const NFTABLES = readFileSync(join(ROOT, 'fixtures/nft/upstream-overall/input.nft'), 'utf8')
const CLUSTER = join(ROOT, 'fixtures/kube/iptables-overall/cluster.yaml')

const tmp = mkdtempSync(join(tmpdir(), `kp-reach-${process.pid}-`))
// kubectl keeps its discovery cache here, not in the tester's home.
process.env.KUBECACHEDIR = join(tmp, 'kube-cache')
const api = new StandInApiServer()
const namespaces: Netns[] = []
let kubeconfig = ''

function node(
  name: string,
  load: (ns: Netns) => void,
  tools = kubeProxyTools(join(tmp, `tools-${name}`)),
): void {
  const ns = new Netns()
  namespaces.push(ns)
  load(ns)
  api.nodes.push({name, netns: ns.name, tools, labels: {'kubernetes.io/hostname': name}})
}

const loadIptables = (rules: string) => (ns: Netns) => {
  addKubeProxyNfacctCounters(ns)
  ns.run(['iptables-restore'], rules)
}

beforeAll(async () => {
  if (skipReason) return
  await api.start()
  kubeconfig = api.kubeconfig(join(tmp, 'kubeconfig'))
  api.addClusterObjects(CLUSTER)
  // node-a and node-d: the corpus' iptables-mode rules; node-b: the same without ns4/svc4
  // (a node whose kube-proxy missed a sync); node-c: nftables mode, its image's nft without JSON.
  node('node-a', loadIptables(IPTABLES))
  node(
    'node-b',
    loadIptables(
      IPTABLES.split('\n')
        .filter((l) => !l.includes('ns4/svc4'))
        .join('\n'),
    ),
  )
  node(
    'node-c',
    (ns) => ns.run(['nft', '-f', '-'], objectsBeforeRules(NFTABLES)),
    kubeProxyTools(join(tmp, 'tools-node-c'), {nftJson: false}),
  )
  node('node-d', loadIptables(IPTABLES))
  api.addKubeProxyPod('node-a')
  api.addKubeProxyPod('node-b')
  // Another distribution's static pod: no k8s-app label, started through a shell.
  api.addKubeProxyPod('node-c', {
    name: 'kube-proxy-static-node-c',
    labels: {component: 'kube-proxy', tier: 'node'},
    command: [
      '/bin/sh',
      '-c',
      'exec kube-proxy --master=https://10.0.0.1 1>>/var/log/kube-proxy.log 2>&1',
    ],
  })
  // node-d has none (k3s: kube-proxy runs inside the k3s process).
}, 60_000)

afterAll(async () => {
  for (const ns of namespaces) ns.delete()
  if (!skipReason) await api.stop()
  rmSync(tmp, {recursive: true, force: true})
})

const kp = (args: string[]) => runKpAsync([...args, '--kubeconfig', kubeconfig], {timeout: 60_000})

const serviceNames = (json: string): string[] =>
  (JSON.parse(json) as {services: Array<{namespace: string; name: string}>}).services
    .map((s) => `${s.namespace}/${s.name}`)
    .sort()

describe('one node through kubectl (real kubectl, stand-in API server)', () => {
  it('kp list --node reads the node as -f reads the same rules with the cluster objects', async () => {
    const remote = await kp(['list', '--node', 'node-a'])
    expect(remote.stderr).toBe('')
    expect(remote.exitCode).toBe(0)
    const local = await runKpAsync([
      'list',
      '-f',
      join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'),
      '--cluster',
      CLUSTER,
      '--node',
      'node-a',
    ])
    // Only the node's name differs: a node read through the cluster knows it.
    expect(remote.stdout).toBe(
      local.stdout.replace('(iptables mode)', '(iptables mode, node node-a)'),
    )
    expect(remote.stdout).toContain('ns4/svc4')
  })

  it('--verbose says which kubectl, its version, the pod, and each command run in it', async () => {
    const r = await kp(['list', '--node', 'node-a', '--verbose'])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toMatch(/kp: reached node\/node-a through \S*kubectl \(v1\.\d+/)
    expect(r.stderr).toContain('pod kube-system/kube-proxy-node-a container kube-proxy')
    expect(r.stderr).toContain('kp: ran kubectl --kubeconfig')
    expect(r.stderr).toContain(
      'exec -n kube-system kube-proxy-node-a -c kube-proxy -- iptables-nft-save',
    )
  })

  it('kp explain --node names the node and its view of the service', async () => {
    const r = await kp(['explain', 'ns2/svc2', '--node', 'node-a'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('ns2/svc2:p80/tcp  (iptables mode, node node-a)')
  })

  it('kp explain of a service the node lacks reads the node once, not again for the suggestions', async () => {
    const r = await kp(['explain', 'ns9/none', '--node', 'node-a', '--verbose'])
    expect(r.exitCode).toBe(3)
    expect(r.stderr.match(/kp: reached node\/node-a/g)).toHaveLength(1)
  })

  it('kp migrate --check --node checks the node', async () => {
    const r = await kp(['migrate', '--to', 'nftables', '--check', '--node', 'node-a', '--json'])
    expect([0, 1]).toContain(r.exitCode)
    const doc = JSON.parse(r.stdout) as {findings: unknown[]}
    expect(Array.isArray(doc.findings)).toBe(true)
  })

  it('kp collect --node writes a bundle that names the kubectl and pod, and reads back the same', async () => {
    const out = join(tmp, 'bundle-a')
    const r = await kp(['collect', '--node', 'node-a', '--out', out, '--json'])
    expect(r.exitCode).toBe(0)
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as BundleManifest
    expect(manifest.mode).toBe('iptables')
    expect(manifest.facts.node).toBe('node-a')
    expect(manifest.reachedThrough).toMatchObject({
      pod: 'kube-system/kube-proxy-node-a',
      container: 'kube-proxy',
      node: 'node-a',
      collectorPod: false,
      context: 'standin',
    })
    expect(manifest.reachedThrough?.kubectlVersion).toMatch(/^v1\./)
    const fromBundle = await runKpAsync(['list', '-f', out, '--json'])
    const fromNode = await kp(['list', '--node', 'node-a', '--json'])
    expect(serviceNames(fromBundle.stdout)).toEqual(serviceNames(fromNode.stdout))
    // The bundle keeps the cluster's Services and EndpointSlices (cluster.json), so it answers
    // from node-a's point of view as --node did: endpoint names, which are local, and policies.
    expect(manifest.files).toContainEqual(
      expect.objectContaining({path: 'cluster.json', format: 'kube', read: true}),
    )
    for (const args of [['list'], ['explain', 'ns2/svc2']]) {
      const bundle = await runKpAsync([...args, '-f', out])
      expect(bundle.exitCode).toBe(0)
      expect(bundle.stdout).toBe((await kp([...args, '--node', 'node-a'])).stdout)
    }
  })

  it('kp diff node/a node/b finds what one node lacks (exit 1)', async () => {
    const r = await kp(['diff', 'node/node-a', 'node/node-b'])
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toContain('ns4/svc4')
  })

  it('reads nftables mode through an nft without JSON support (text listing)', async () => {
    const r = await kp(['list', '--node', 'node-c', '--json'])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('no JSON support')
    expect(JSON.parse(r.stdout)).toMatchObject({mode: 'nftables'})
    expect(serviceNames(r.stdout)).toContain('ns1/svc1')
  })

  it('RBAC Forbidden on pods/exec: exit 4 naming the verb and resource to grant', async () => {
    api.forbid.add('create pods/exec')
    try {
      const r = await kp(['list', '--node', 'node-a'])
      expect(r.exitCode).toBe(4)
      expect(r.stderr).toContain('kp: the cluster refused to let kp create pods/exec')
      expect(r.stderr).toContain('`create` on `pods/exec`')
    } finally {
      api.forbid.clear()
    }
  })

  it('a node without a kube-proxy pod: exit 4 with --collector-pod as the next step', async () => {
    const r = await kp(['list', '--node', 'node-d', '--json'])
    expect(r.exitCode).toBe(4)
    const {error} = JSON.parse(r.stdout) as {error: {code: string; hints: string[]}}
    expect(error.code).toBe('LIVE_NO_KUBE_PROXY_POD')
    expect(error.hints.join('\n')).toContain('--collector-pod')
    const none = await kp(['list', '--node', 'no-such-node'])
    expect(none.exitCode).toBe(4)
    expect(none.stderr).toContain('the cluster has no node no-such-node')
  })

  it('--collector-pod creates a pinned, hostNetwork, NET_ADMIN/NET_RAW pod and deletes it', async () => {
    api.recorded.length = 0
    const r = await kp(['list', '--node', 'node-d', '--collector-pod', '--json'])
    expect(r.exitCode).toBe(0)
    expect(serviceNames(r.stdout)).toContain('ns4/svc4')
    const created = api.recorded.filter((x) => x.method === 'POST')
    expect(created).toHaveLength(1)
    expect(created[0]!.body).toMatchObject({
      metadata: {namespace: 'kube-system', labels: {'app.kubernetes.io/managed-by': 'kp'}},
      spec: {
        nodeName: 'node-d',
        hostNetwork: true,
        containers: [
          {
            image: 'registry.k8s.io/kube-proxy:v1.32.0',
            securityContext: {capabilities: {drop: ['ALL'], add: ['NET_ADMIN', 'NET_RAW']}},
          },
        ],
      },
    })
    const name = (created[0]!.body as {metadata: {name: string}}).metadata.name
    expect(api.recorded.filter((x) => x.method === 'DELETE').map((x) => x.path)).toEqual([
      `/api/v1/namespaces/kube-system/pods/${name}`,
    ])
    expect(api.pods.some((p) => p.metadata.name === name)).toBe(false)
  })

  it('Ctrl-C while reading through a collector pod deletes the pod before kp exits', async () => {
    api.recorded.length = 0
    api.execDelayMs = 3000
    try {
      const [cmd, ...args] = [
        ...kpCommand(),
        'list',
        '--node',
        'node-d',
        '--collector-pod',
        '--kubeconfig',
        kubeconfig,
      ]
      const child = spawn(cmd!, args, {cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']})
      let stderr = ''
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
      const exited = new Promise<number | null>((resolve) =>
        child.on('close', (code) => resolve(code)),
      )
      const t0 = Date.now()
      while (!api.recorded.some((x) => x.method === 'EXEC') && Date.now() - t0 < 30_000)
        await new Promise((resolve) => setTimeout(resolve, 50))
      child.kill('SIGINT')
      expect(await exited).toBe(130)
      expect(stderr).toContain('SIGINT: deleting 1 collector pod(s)')
      const created = api.recorded.filter((x) => x.method === 'POST')
      expect(created).toHaveLength(1)
      const name = (created[0]!.body as {metadata: {name: string}}).metadata.name
      expect(api.recorded.some((x) => x.method === 'DELETE' && x.path.endsWith(`/${name}`))).toBe(
        true,
      )
      expect(api.pods.some((p) => p.metadata.name === name)).toBe(false)
    } finally {
      api.execDelayMs = 0
    }
  }, 60_000)

  it('kp collect --cleanup deletes collector pods left behind, and only those', async () => {
    api.pods.push({
      metadata: {
        name: 'kp-collector-left',
        namespace: 'kube-system',
        labels: {'app.kubernetes.io/managed-by': 'kp'},
      },
      spec: {nodeName: 'node-d', containers: [{name: 'kp-collector'}]},
      status: {phase: 'Running'},
    })
    const before = api.pods.length
    const r = await kp(['collect', '--cleanup', '--json'])
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({removed: 1})
    expect(api.pods.length).toBe(before - 1)
  })

  it('no cluster: exit 4 with kubectl message', async () => {
    const bad = join(tmp, 'bad-kubeconfig')
    const closed = new StandInApiServer()
    await closed.start()
    closed.kubeconfig(bad)
    await closed.stop()
    const r = await runKpAsync(['list', '--node', 'node-a', '--kubeconfig', bad, '--json'], {
      timeout: 60_000,
    })
    expect(r.exitCode).toBe(4)
    const {error} = JSON.parse(r.stdout) as {error: {code: string; message: string}}
    expect(error.code).toBe('LIVE_CLUSTER_UNREACHABLE')
    expect(error.message).toMatch(/kubectl cannot reach the cluster: .*refused/)
  })

  it('a program missing in the pod is named with the pod, alone or in a batch', async () => {
    const k = kubectlOf({kubeconfig})
    const pod = {
      namespace: 'kube-system',
      name: 'kube-proxy-node-a',
      container: 'kube-proxy',
      image: null,
    }
    const missing = {
      code: 'LIVE_MISSING_PROGRAM',
      message: 'ipvsadm is not in the pod kube-system/kube-proxy-node-a (container kube-proxy)',
    }
    expect((await execIn(k, pod, ['ipvsadm', '-Sn'], {})).failure).toMatchObject(missing)
    const [a, b, c] = await execBatch(
      k,
      pod,
      [
        ['ipvsadm', '-Sn'],
        ['cat', '/proc/sys/kernel/osrelease'],
        ['nft', 'list', 'table', 'ip', 'none'],
      ],
      {},
    )
    expect(a!.failure).toMatchObject(missing)
    expect(b!.failure).toBeNull()
    expect(b!.stdout).toBe(readFileSync('/proc/sys/kernel/osrelease', 'utf8'))
    expect(c!.exitCode).toBe(1)
    expect(c!.stderr).toMatch(/^Error: No such file or directory/)
  })

  it("readRemoteNode (the API kp's fleet commands build on) gives the state, the outputs and the way in", async () => {
    const r = await readRemoteNode({kubeconfig}, 'node-b')
    expect(r.state.mode).toBe('iptables')
    expect(r.state.node.name).toBe('node-b')
    expect(r.state.services.some((s) => s.namespace === 'ns4')).toBe(false)
    expect(r.state.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
    expect(r.collection.sources.map((s) => s.path)).toContain('node/node-b:iptables-nft-save')
    expect(r.cluster).toHaveLength(1)
    expect(r.reachedThrough).toMatchObject({
      pod: 'kube-system/kube-proxy-node-b',
      collectorPod: false,
    })
  })

  it('bench: explain through --node end to end (docs/benchmarks.md)', async () => {
    const times: number[] = []
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now()
      const r = await kp(['explain', 'ns2/svc2', '--node', 'node-a'])
      times.push(performance.now() - t0)
      expect(r.exitCode).toBe(0)
    }
    const load = spawnSync('cat', ['/proc/loadavg'], {encoding: 'utf8'}).stdout.trim()
    console.log(
      `remote.test: explain --node: ${times.map((t) => Math.round(t)).join(', ')} ms (loadavg ${load})`,
    )
  }, 120_000)
})
