/**
 * --collector-pod: a short-lived pod kp creates on a node where no kube-proxy pod can be exec'd
 * into (k3s, static pods, no exec rights). It is pinned to the node, on the host's network, with
 * only NET_ADMIN and NET_RAW, runs the cluster's own kube-proxy image (already on the node), and
 * is deleted when done, on Ctrl-C too; `kp collect --cleanup` deletes any left behind.
 */
import {randomBytes} from 'node:crypto'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {EnvironmentError} from '../../errors.js'
import {kubeProxyPods} from './cluster.js'
import {COLLECTOR_LABEL} from './collector-label.js'
import type {RemoteOptions} from './index.js'
import {type Kubectl, type PodRef, clusterError, getJson, kubectl, kubectlOf} from './kubectl.js'

const CONTAINER = 'kp-collector'
/** The pod ends by itself after this long, should every delete fail (kp killed with SIGKILL). */
const DEADLINE_SECONDS = 600

/** Deletes still owed, run on Ctrl-C before kp exits. */
const owed = new Map<string, () => Promise<unknown>>()
let handlersInstalled = false

/** A fleet run stops itself on Ctrl-C (and deletes its pods): then the pods' handler must not exit. */
let exitOnInterrupt = true
export function interruptHandledByCaller(handled: boolean): void {
  exitOnInterrupt = !handled
}

function onInterrupt(signal: NodeJS.Signals): void {
  process.stderr.write(`kp: ${signal}: deleting ${owed.size} collector pod(s)\n`)
  void Promise.allSettled([...owed.values()].map((d) => d())).then(() => {
    if (exitOnInterrupt) process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}

function owe(key: string, del: () => Promise<unknown>): void {
  owed.set(key, del)
  if (!handlersInstalled) {
    handlersInstalled = true
    process.once('SIGINT', onInterrupt)
    process.once('SIGTERM', onInterrupt)
  }
}

function settle(key: string): void {
  owed.delete(key)
  if (owed.size === 0 && handlersInstalled) {
    handlersInstalled = false
    process.off('SIGINT', onInterrupt)
    process.off('SIGTERM', onInterrupt)
  }
}

export function collectorPodSpec(name: string, namespace: string, node: string, image: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: {[COLLECTOR_LABEL.key]: COLLECTOR_LABEL.value, 'kp.io/node': node.slice(0, 63)},
    },
    spec: {
      nodeName: node,
      hostNetwork: true,
      restartPolicy: 'Never',
      activeDeadlineSeconds: DEADLINE_SECONDS,
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      // A node kube-proxy serves may carry any taint; the pod must land there anyway.
      tolerations: [{operator: 'Exists'}],
      containers: [
        {
          name: CONTAINER,
          image,
          command: ['sleep', String(DEADLINE_SECONDS)],
          securityContext: {
            capabilities: {drop: ['ALL'], add: ['NET_ADMIN', 'NET_RAW']},
          },
        },
      ],
    },
  }
}

export interface Collector {
  pod: PodRef
  /** Deletes the pod (once). */
  stop(): Promise<void>
}

async function collectorImage(k: Kubectl, o: RemoteOptions): Promise<string> {
  if (o.collectorImage) return o.collectorImage
  const image = (await kubeProxyPods(k, o)).find((p) => p.image)?.image
  if (image) return image
  throw new EnvironmentError(
    'no kube-proxy pod in the cluster to take the collector image from',
    'LIVE_COLLECTOR_POD',
    null,
    null,
    [
      'name an image with nft and iptables in it: --collector-image registry.k8s.io/kube-proxy:v1.32.0',
    ],
  )
}

async function deletePod(k: Kubectl, namespace: string, name: string): Promise<void> {
  const r = await kubectl(k, [
    'delete',
    '--raw',
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
  ])
  if (r.failure && !/\(NotFound\)|not found/i.test(r.stderr))
    throw clusterError(k, r, {verb: 'delete', resource: 'pods', namespace})
}

/** Creates the collector pod on `node` and waits until it runs. */
export async function startCollector(
  k: Kubectl,
  o: RemoteOptions,
  node: string,
): Promise<Collector> {
  const namespace = o.kubeProxyNamespace ?? 'kube-system'
  const image = await collectorImage(k, o)
  const name = `kp-collector-${randomBytes(4).toString('hex')}`
  const dir = await mkdtemp(join(tmpdir(), 'kp-collector-'))
  const file = join(dir, 'pod.json')
  await writeFile(file, JSON.stringify(collectorPodSpec(name, namespace, node, image)))
  const key = `${namespace}/${name}`
  let stopped: Promise<void> | null = null
  const stop = () => (stopped ??= deletePod(k, namespace, name).finally(() => settle(key)))
  owe(key, stop)
  try {
    const r = await kubectl(k, [
      'create',
      '--raw',
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      '-f',
      file,
    ])
    if (r.failure) {
      settle(key)
      throw clusterError(k, r, {verb: 'create', resource: 'pods', namespace})
    }
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
  try {
    await waitRunning(k, o, namespace, name)
  } catch (error) {
    await stop().catch(() => undefined)
    throw error
  }
  return {pod: {namespace, name, container: CONTAINER, image}, stop}
}

async function waitRunning(
  k: Kubectl,
  o: RemoteOptions,
  namespace: string,
  name: string,
): Promise<void> {
  const deadline = Date.now() + (o.timeoutMs ?? 60_000)
  let phase = 'unknown'
  while (Date.now() < deadline) {
    if (o.signal?.aborted) break
    const pod = (await getJson(
      k,
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
      {verb: 'get', resource: 'pods', namespace},
    )) as {status?: {phase?: string}}
    phase = pod.status?.phase ?? 'unknown'
    if (phase === 'Running') return
    if (phase === 'Failed' || phase === 'Succeeded') break
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new EnvironmentError(
    `the collector pod ${namespace}/${name} did not start (phase ${phase})`,
    'LIVE_COLLECTOR_POD',
    null,
    null,
    [`see why with: kubectl -n ${namespace} describe pod ${name}`],
  )
}

export async function cleanupRemoteImpl(o: RemoteOptions): Promise<number> {
  const k = kubectlOf(o)
  const list = (await getJson(
    k,
    `/api/v1/pods?labelSelector=${encodeURIComponent(`${COLLECTOR_LABEL.key}=${COLLECTOR_LABEL.value}`)}`,
    {verb: 'list', resource: 'pods'},
  )) as {items?: Array<{metadata?: {name?: string; namespace?: string}}>}
  let removed = 0
  for (const p of list.items ?? []) {
    const name = p.metadata?.name
    const namespace = p.metadata?.namespace
    if (!name || !namespace) continue
    await deletePod(k, namespace, name)
    removed++
  }
  return removed
}
