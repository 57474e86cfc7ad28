/** Cluster-wide questions asked through kubectl: the nodes, a node's kube-proxy pod, the Services. */
import {EnvironmentError} from '../../errors.js'
import type {SourceText} from '../../readers/types.js'
import {COLLECTOR_LABEL} from './collector-label.js'
import type {RemoteOptions} from './index.js'
import {type Kubectl, type PodRef, getJson, kubectlOf} from './kubectl.js'

interface Container {
  name?: string
  image?: string
  command?: string[]
  args?: string[]
}
interface Pod {
  metadata?: {name?: string; namespace?: string; labels?: Record<string, string>}
  spec?: {nodeName?: string; containers?: Container[]}
  status?: {phase?: string}
}
interface List<T> {
  items?: T[]
}

const query = (params: Record<string, string | undefined>): string => {
  const q = Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
  return q.length > 0 ? `?${q.join('&')}` : ''
}

export async function listNodesImpl(o: RemoteOptions, selector?: string): Promise<string[]> {
  const k = kubectlOf(o)
  const list = (await getJson(k, `/api/v1/nodes${query({labelSelector: selector})}`, {
    verb: 'list',
    resource: 'nodes',
  })) as List<{metadata?: {name?: string}}>
  return (list.items ?? [])
    .map((n) => n.metadata?.name)
    .filter((n): n is string => typeof n === 'string')
    .sort()
}

// kube-proxy is started as `kube-proxy --config=...` (kubeadm), `/usr/local/bin/kube-proxy ...`,
// or through a shell (`/bin/sh -c "kube-proxy ... 2>&1 | tee"`, GCE kube-up's static pod).
const RUNS_KUBE_PROXY = /(^|[\s/])kube-proxy(\s|$)/

/** The container of a pod that runs kube-proxy, if any: by what it runs, not by a label (distributions differ). */
export function kubeProxyContainer(pod: Pod): Container | null {
  const containers = pod.spec?.containers ?? []
  const byCommand = containers.find((c) =>
    [...(c.command ?? []), ...(c.args ?? [])].some((a) => RUNS_KUBE_PROXY.test(a)),
  )
  if (byCommand) return byCommand
  // An image whose entrypoint is kube-proxy, started with flags only.
  return (
    containers.find(
      (c) => (c.command ?? []).length === 0 && /(^|\/)kube-proxy(:|@|$)/.test(c.image ?? ''),
    ) ?? null
  )
}

function podsPath(o: RemoteOptions, node?: string): string {
  const where = o.kubeProxyNamespace
    ? `/api/v1/namespaces/${encodeURIComponent(o.kubeProxyNamespace)}/pods`
    : '/api/v1/pods'
  return `${where}${query({
    fieldSelector: node ? `spec.nodeName=${node}` : undefined,
    labelSelector: o.kubeProxySelector,
  })}`
}

function refOf(pod: Pod, c: Container): PodRef {
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    name: pod.metadata?.name ?? '',
    container: c.name ?? '',
    image: c.image ?? null,
  }
}

/** kube-system's first: another namespace's match is more likely a look-alike. */
const bySystemFirst = (a: PodRef, b: PodRef) =>
  Number(b.namespace === 'kube-system') - Number(a.namespace === 'kube-system') ||
  a.name.localeCompare(b.name)

/** The running kube-proxy pods (of one node, or all). */
export async function kubeProxyPods(
  k: Kubectl,
  o: RemoteOptions,
  node?: string,
): Promise<PodRef[]> {
  const list = (await getJson(k, podsPath(o, node), {
    verb: 'list',
    resource: 'pods',
    namespace: o.kubeProxyNamespace,
  })) as List<Pod>
  const refs: PodRef[] = []
  for (const pod of list.items ?? []) {
    if (pod.metadata?.labels?.[COLLECTOR_LABEL.key] === COLLECTOR_LABEL.value) continue
    if (node !== undefined && pod.spec?.nodeName !== node) continue
    const c = kubeProxyContainer(pod)
    if (c && pod.status?.phase === 'Running') refs.push(refOf(pod, c))
  }
  return refs.sort(bySystemFirst)
}

/** The kube-proxy pod on `node`; exit 4 with the next step when there is none. */
export async function findKubeProxyPod(
  k: Kubectl,
  o: RemoteOptions,
  node: string,
): Promise<PodRef> {
  const pods = await kubeProxyPods(k, o, node)
  if (pods.length > 0) return pods[0]!
  const exists = await getJson(
    k,
    `/api/v1/nodes/${encodeURIComponent(node)}`,
    {verb: 'get', resource: 'nodes'},
    'null',
  )
  if (exists === null)
    throw new EnvironmentError(
      `the cluster has no node ${node}`,
      'LIVE_NO_KUBE_PROXY_POD',
      null,
      null,
      ['list the nodes with `kubectl get nodes`'],
    )
  const where = [
    o.kubeProxyNamespace ? `namespace ${o.kubeProxyNamespace}` : 'any namespace',
    o.kubeProxySelector ? `selector ${o.kubeProxySelector}` : null,
  ]
    .filter(Boolean)
    .join(', ')
  throw new EnvironmentError(
    `no running pod on node ${node} runs kube-proxy (looked in ${where})`,
    'LIVE_NO_KUBE_PROXY_POD',
    null,
    null,
    [
      'k3s and RKE2 run kube-proxy outside any pod: read the node through a short-lived pod kp creates and deletes with --collector-pod',
      'if kube-proxy runs under another namespace or label, say so with --kube-proxy-namespace / --kube-proxy-selector',
    ],
  )
}

/**
 * The Services and EndpointSlices, as one `kind: List` the kube reader takes (what
 * `kubectl get services,endpointslices -A -o json` prints): a list from the API has no
 * kind/apiVersion on its items, kubectl's output does.
 */
export async function clusterObjects(k: Kubectl, label: string): Promise<SourceText> {
  const [services, slices] = await Promise.all([
    getJson(k, '/api/v1/services', {verb: 'list', resource: 'services'}),
    getJson(k, '/apis/discovery.k8s.io/v1/endpointslices', {
      verb: 'list',
      resource: 'endpointslices',
    }),
  ])
  const items = [
    ...((services as List<object>).items ?? []).map((s) => ({
      kind: 'Service',
      apiVersion: 'v1',
      ...s,
    })),
    ...((slices as List<object>).items ?? []).map((s) => ({
      kind: 'EndpointSlice',
      apiVersion: 'discovery.k8s.io/v1',
      ...s,
    })),
  ]
  return {
    path: `${label}:kubectl get services,endpointslices -A -o json`,
    text: JSON.stringify({apiVersion: 'v1', kind: 'List', items}),
    format: 'kube',
  }
}
