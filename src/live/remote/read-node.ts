/** One node through the cluster: its kube-proxy pod (or a collector pod) as a ProbeRunner. */
import type {BundleManifest} from '../../readers/bundle.js'
import type {ReadOptions} from '../../readers/types.js'
import type {RemoteBundleOptions, RemoteNodeState, RemoteOptions} from './index.js'

export async function readRemoteNodeImpl(
  _o: RemoteOptions,
  _node: string,
  _read: ReadOptions,
): Promise<RemoteNodeState> {
  throw new Error('not implemented yet')
}

export async function collectRemoteBundleImpl(
  _o: RemoteOptions,
  _node: string,
  _outDir: string,
  _b: RemoteBundleOptions,
): Promise<BundleManifest> {
  throw new Error('not implemented yet')
}
