/** One node through the cluster: its kube-proxy pod (or a collector pod) as a ProbeRunner. */
import {randomBytes} from 'node:crypto'
import type {BundleManifest, BundleReach} from '../../readers/bundle.js'
import type {ReadOptions} from '../../readers/types.js'
import {collectLive} from '../collect-live.js'
import {type CommandResult, type RunOptions, commandLineOf} from '../exec.js'
import type {ProbeRunner} from '../probe.js'
import {clusterObjects, findKubeProxyPod} from './cluster.js'
import {type Collector, startCollector} from './collector.js'
import type {RemoteBundleOptions, RemoteNodeState, RemoteOptions} from './index.js'
import {
  type Kubectl,
  type PodRef,
  currentContext,
  execBatch,
  execIn,
  kubectlOf,
  kubectlVersion,
} from './kubectl.js'

/**
 * Prints each readable file after a marker line: `\n<token> <path>\n<content>`. One exec for every
 * /proc and /sys file the snapshot reads (a dozen sysctls), with the image's own sh and cat.
 */
const READ_FILES_SCRIPT =
  'for f; do if [ -r "$f" ]; then printf \'\\n%s %s\\n\' "$0" "$f"; cat "$f"; fi; done'

export function parseFileDump(out: string, token: string, paths: readonly string[]) {
  const files = new Map<string, string | null>(paths.map((p) => [p, null]))
  for (const part of out.split(`\n${token} `).slice(1)) {
    const nl = part.indexOf('\n')
    if (nl < 0) continue
    const path = part.slice(0, nl)
    if (files.has(path)) files.set(path, part.slice(nl + 1))
  }
  return files
}

interface Job {
  argv: readonly string[]
  resolve: (r: CommandResult) => void
  reject: (e: unknown) => void
}

/**
 * Runs asked for in the same turn of the event loop (the snapshot asks for its probes all at
 * once) go into one `kubectl exec` (execBatch): on a loaded machine each kubectl process costs
 * more than the programs it runs.
 */
function batching(k: Kubectl, pod: PodRef) {
  let queue: Job[] = []
  let opts: RunOptions = {}
  const flush = () => {
    const jobs = queue
    queue = []
    const done =
      jobs.length === 1
        ? execIn(k, pod, jobs[0]!.argv, opts).then((r) => [r])
        : execBatch(
            k,
            pod,
            jobs.map((j) => j.argv),
            opts,
          )
    done.then(
      (results) => jobs.forEach((j, i) => j.resolve(results[i]!)),
      (error: unknown) => jobs.forEach((j) => j.reject(error)),
    )
  }
  return (argv: readonly string[], o: RunOptions): Promise<CommandResult> =>
    new Promise((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      opts = o
      queue.push({argv, resolve, reject})
    })
}

export function podRunner(k: Kubectl, pod: PodRef, node: string): ProbeRunner {
  const run = batching(k, pod)
  return {
    run,
    async readFiles(paths, opts) {
      const token = `==kp-${randomBytes(6).toString('hex')}==`
      const r = await run(['sh', '-c', READ_FILES_SCRIPT, token, ...paths], opts)
      if (r.failure === null) return parseFileDump(r.stdout, token, paths)
      // No sh in the image: one `cat` per file.
      const texts = await Promise.all(
        paths.map(async (p) => {
          const c = await run(['cat', p], opts)
          return c.failure === null ? c.stdout : null
        }),
      )
      return new Map(paths.map((p, i) => [p, texts[i] ?? null]))
    },
    nodeName: () => node,
    label: `node/${node}`,
    shown: (line) =>
      `${commandLineOf([k.program, ...k.base, 'exec', '-n', pod.namespace, pod.name, '-c', pod.container, '--'])} ${line}`,
    podTools: true,
  }
}

interface Reached {
  k: Kubectl
  pod: PodRef
  collector: Collector | null
}

async function reach(o: RemoteOptions, node: string): Promise<Reached> {
  const k = kubectlOf(o)
  if (o.collectorPod) {
    const collector = await startCollector(k, o, node)
    return {k, pod: collector.pod, collector}
  }
  return {k, pod: await findKubeProxyPod(k, o, node), collector: null}
}

/** kubectl's version and context, asked while the pod is looked for; null when not wanted. */
function describeKubectl(k: Kubectl, o: RemoteOptions) {
  return o.describe === false
    ? Promise.resolve({version: null, context: k.context})
    : Promise.all([kubectlVersion(k), currentContext(k)]).then(([version, context]) => ({
        version,
        context,
      }))
}

function reachedThrough(
  r: Reached,
  node: string,
  d: {version: string | null; context: string | null},
): BundleReach {
  const {version, context} = d
  return {
    kubectl: r.k.path,
    kubectlVersion: version,
    context,
    node,
    pod: `${r.pod.namespace}/${r.pod.name}`,
    container: r.pod.container,
    collectorPod: r.collector !== null,
  }
}

export async function readRemoteNodeImpl(
  o: RemoteOptions,
  node: string,
  read: ReadOptions,
): Promise<RemoteNodeState> {
  const k = kubectlOf(o)
  // The cluster objects and kubectl's version do not depend on the pod: asked at the same time.
  const clusterRead = read.cluster ? Promise.resolve(null) : clusterObjects(k, `node/${node}`)
  const described = describeKubectl(k, o)
  clusterRead.catch(() => undefined)
  const r = await reach(o, node)
  try {
    const runner = podRunner(r.k, r.pod, node)
    const mode = o.mode ?? read.mode
    const [collection, cluster, d] = await Promise.all([
      collectLive({mode, timeoutMs: o.timeoutMs, runner}),
      clusterRead,
      described,
    ])
    const through = reachedThrough(r, node, d)
    const {readState} = await import('../../readers/read-state.js')
    const clusterSources = read.cluster ?? (cluster ? [cluster] : [])
    const state = await readState(
      {sources: collection.sources, facts: collection.facts},
      {...read, mode, node, cluster: clusterSources},
    )
    return {node, state, collection, cluster: clusterSources, reachedThrough: through}
  } finally {
    await r.collector?.stop()
  }
}

export async function collectRemoteBundleImpl(
  o: RemoteOptions,
  node: string,
  outDir: string,
  b: RemoteBundleOptions,
): Promise<BundleManifest> {
  const k = kubectlOf(o)
  const described = describeKubectl(k, {...o, describe: true})
  // The node's point of view needs the cluster objects, as `--node NAME` without a bundle reads them.
  const cluster = clusterObjects(k, `node/${node}`)
  cluster.catch(() => undefined)
  const r = await reach(o, node)
  try {
    const {collectBundle} = await import('../collect-bundle.js')
    return await collectBundle({
      cluster: {
        text: (await cluster).text,
        command: [
          'kubectl',
          'get',
          '--raw',
          '/api/v1/services',
          '/apis/discovery.k8s.io/v1/endpointslices',
        ],
      },
      outDir,
      force: b.force,
      mode: o.mode,
      timeoutMs: o.timeoutMs,
      createdBy: b.createdBy ?? 'kp',
      runner: podRunner(r.k, r.pod, node),
      reachedThrough: reachedThrough(r, node, await described),
    })
  } finally {
    await r.collector?.stop()
  }
}
