/**
 * Fleet bench through kubectl (docs/benchmarks.md, "Fleet"): NODES network namespaces loaded with
 * a generated iptables-save of SERVICES × 10 endpoints, each a node of the STAND-IN kube-apiserver
 * of the tests (test/helpers/fake-apiserver) with a kube-proxy pod; the real kubectl; then the built
 * kp's `migrate --to nftables --check --all-nodes --parallel 10`, wall seconds, median of 3.
 * Needs root, ip netns, iptables, nfacct and kubectl.
 *   npx tsx scripts/bench/fleet-live.ts [NODES=20] [SERVICES=1000]
 */
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {StandInApiServer, kubeProxyTools} from '../../test/helpers/fake-apiserver/index.js'
import {ROOT} from '../../test/helpers/run-cli.js'
import {generateIptablesSave} from './gen-iptables.mjs'

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{status: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {env})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('close', (status) => resolve({status, stdout, stderr}))
  })
}

const NODES = Number(process.argv[2] ?? 20)
const SERVICES = Number(process.argv[3] ?? 1000)
const tmp = mkdtempSync(join(tmpdir(), `kp-bench-fleet-live-${process.pid}-`))
process.env.KUBECACHEDIR = join(tmp, 'kube-cache')
const api = new StandInApiServer()
// test/live/netns.ts imports vitest; the bench makes its namespaces by itself.
const namespaces: string[] = []
function inNetns(ns: string, argv: string[], input?: string): void {
  const r = spawnSync('ip', ['netns', 'exec', ns, ...argv], {input, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`${argv.join(' ')} in ${ns}: ${r.stderr}`)
}
try {
  await api.start()
  const kubeconfig = api.kubeconfig(join(tmp, 'kubeconfig'))
  const dump = join(tmp, 'dump.txt')
  await generateIptablesSave(dump, {services: SERVICES, endpointsPerService: 10})
  const rules = readFileSync(dump, 'utf8')
  const tools = kubeProxyTools(join(tmp, 'tools'))
  for (let i = 0; i < NODES; i++) {
    const name = `node-${String(i).padStart(2, '0')}`
    const ns = `kp-bench-fleet-${process.pid}-${i}`
    if (spawnSync('ip', ['netns', 'add', ns]).status !== 0) throw new Error(`ip netns add ${ns}`)
    namespaces.push(ns)
    inNetns(ns, ['iptables-nft-restore'], rules)
    api.nodes.push({name, netns: ns, tools})
    api.addKubeProxyPod(name)
  }
  const args = ['migrate', '--to', 'nftables', '--check', '--all-nodes', '--parallel', '10']
  const times: number[] = []
  // CPU of kp and the kubectl processes it waited for (not the stand-in's, in this process).
  const cpu: number[] = []
  for (let i = 0; i < 3; i++) {
    // Not spawnSync: the stand-in API server answers from this process's event loop.
    const r = await run(
      '/usr/bin/time',
      ['-f', '%e %M %U %S', process.execPath, join(ROOT, 'bin/run.js'), ...args, '--json'],
      {...process.env, KUBECONFIG: kubeconfig},
    )
    const [wall, , user, sys] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number)
    cpu.push(user! + sys!)
    const doc = JSON.parse(r.stdout) as {nodes: Array<{ok: boolean}>}
    if (r.status !== 0 || doc.nodes.some((n) => !n.ok))
      throw new Error(
        `exit ${r.status}: ${r.stderr.slice(-3000)} ${JSON.stringify((JSON.parse(r.stdout) as {nodes: unknown[]}).nodes.slice(0, 3))}`,
      )
    times.push(wall!)
  }
  times.sort((a, b) => a - b)
  console.log(
    `migrate --check --all-nodes: ${NODES} nodes × ${SERVICES} services × 10 endpoints, --parallel 10: ${times[1]} s (median of ${times.join(', ')}), CPU of kp + kubectl ${cpu.map((c) => c.toFixed(1)).join(', ')} s`,
  )
} finally {
  for (const ns of namespaces) spawnSync('ip', ['netns', 'del', ns])
  await api.stop()
  rmSync(tmp, {recursive: true, force: true})
}
