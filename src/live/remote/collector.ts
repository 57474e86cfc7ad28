/** --collector-pod: a short-lived pod kp creates on a node, and `kp collect --cleanup`. */
import type {RemoteOptions} from './index.js'

export async function cleanupRemoteImpl(_o: RemoteOptions): Promise<number> {
  throw new Error('not implemented yet')
}
