/** Cluster-wide questions asked through kubectl: the nodes, the kube-proxy pod of a node. */
import type {RemoteOptions} from './index.js'

export async function listNodesImpl(_o: RemoteOptions, _selector?: string): Promise<string[]> {
  throw new Error('not implemented yet')
}
