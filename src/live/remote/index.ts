/**
 * Reading a node of a cluster from the operator's machine (README, "Reaching nodes through
 * kubectl"): kp finds the kube-proxy pod on the node, runs the same read-only probes as live mode
 * with `kubectl exec` in it, and fetches the Services and EndpointSlices for that node's view.
 * Nothing is created in the cluster unless --collector-pod asks for it.
 */
import type {Mode, ProxyState} from '../../model/types.js'
import type {BundleManifest, BundleReach} from '../../readers/bundle.js'
import type {ReadOptions, SourceText} from '../../readers/types.js'
import type {LiveCollection} from '../collect-live.js'

export interface RemoteOptions {
  /** The kubectl program (default: `kubectl` on PATH). */
  kubectl?: string
  kubeconfig?: string
  context?: string
  /** Where to look for the kube-proxy pod (default: every namespace, kube-system first). */
  kubeProxyNamespace?: string
  /** A label selector for the kube-proxy pod (default: any pod with a container running kube-proxy). */
  kubeProxySelector?: string
  /** Start a short-lived collector pod on the node instead of exec-ing into kube-proxy's. */
  collectorPod?: boolean
  /** The collector pod's image (default: the cluster's kube-proxy image). */
  collectorImage?: string
  /** Per kubectl call. */
  timeoutMs?: number
  signal?: AbortSignal
  /** Forces the proxy mode (`--mode`). */
  mode?: Mode
}

/** Which kubectl reached the node, and through which pod: said in --verbose and in bundles. */
export type ReachedThrough = BundleReach

/** One node read through the cluster: what live mode returns, plus the cluster objects and the way in. */
export interface RemoteNodeState {
  node: string
  /** The node's ProxyState, read with the node's point of view of the cluster objects. */
  state: ProxyState
  /** The probe outputs, facts, warnings and commands, as collectLive returns them. */
  collection: LiveCollection
  /** `kubectl get services,endpointslices` as sources (what `--cluster` would give). */
  cluster: SourceText[]
  reachedThrough: ReachedThrough
}

export interface RemoteBundleOptions {
  force?: boolean
  /** "kp/0.1.0". */
  createdBy?: string
}

/** The nodes of the cluster (names), optionally by label selector. */
export async function listNodes(o: RemoteOptions, selector?: string): Promise<string[]> {
  const {listNodesImpl} = await import('./cluster.js')
  return listNodesImpl(o, selector)
}

/** Reads one node through the cluster. Throws EnvironmentError (exit 4) when it cannot be reached. */
export async function readRemoteNode(
  o: RemoteOptions,
  node: string,
  read: ReadOptions = {},
): Promise<RemoteNodeState> {
  const {readRemoteNodeImpl} = await import('./read-node.js')
  return readRemoteNodeImpl(o, node, read)
}

/** `kp collect --node NAME --out DIR`: the bundle kp collect writes on the node, written here. */
export async function collectRemoteBundle(
  o: RemoteOptions,
  node: string,
  outFile: string,
  b: RemoteBundleOptions = {},
): Promise<BundleManifest> {
  const {collectRemoteBundleImpl} = await import('./read-node.js')
  return collectRemoteBundleImpl(o, node, outFile, b)
}

/** `kp collect --cleanup`: deletes collector pods kp left behind; returns how many. */
export async function cleanupRemote(o: RemoteOptions): Promise<number> {
  const {cleanupRemoteImpl} = await import('./collector.js')
  return cleanupRemoteImpl(o)
}
