/**
 * The point of view of cluster objects read without `--node`. kube-proxy programs each node for
 * itself: under a Local traffic policy a frontend forwards on the nodes that run a usable endpoint
 * and drops elsewhere. When this host is one of the nodes the objects name (an endpoint's
 * nodeName), kp reads them as kube-proxy on this host would; when it is not (a laptop, a CI
 * runner), pretending it were would call every Local frontend dropped. kp then gives the
 * cluster-wide view: what holds on every node, and, where nodes differ, which nodes forward.
 */
import {isServingTerminating} from '../../kube-proxy/endpoints.js'
import type {KubeEndpointSlice} from './parse.js'

/** The nodes the objects name: every endpoint's nodeName. */
export function nodesNamed(slices: Iterable<KubeEndpointSlice>): Set<string> {
  const nodes = new Set<string>()
  for (const slice of slices)
    for (const e of slice.endpoints)
      if (e.nodeName !== null && e.nodeName !== '') nodes.add(e.nodeName)
  return nodes
}

/**
 * The node to read the objects for: `--node` when given, this host when the objects name it,
 * else null (the cluster-wide view).
 */
export function pointOfView(
  asked: string | undefined,
  host: string,
  named: ReadonlySet<string>,
): string | null {
  if (asked !== undefined) return asked
  return named.has(host) ? host : null
}

/** What CategorizeEndpoints needs of an endpoint to pick a node's local set, and where it runs. */
export interface PlacedEndpoint {
  nodeName: string | null
  ready: boolean
  serving: boolean
  terminating: boolean
}

/**
 * The local endpoints kube-proxy on each node would use (pkg/proxy/topology.go: the ready ones
 * on that node, else its serving-terminating ones), for every node that has any, by node name.
 */
export function localSetsByNode<E extends PlacedEndpoint>(
  endpoints: readonly E[],
): Map<string, E[]> {
  const byNode = new Map<string, E[]>()
  for (const e of endpoints) {
    if (e.nodeName === null || e.nodeName === '') continue
    const list = byNode.get(e.nodeName)
    if (list) list.push(e)
    else byNode.set(e.nodeName, [e])
  }
  const sets = new Map<string, E[]>()
  for (const [node, list] of byNode) {
    const ready = list.filter((e) => e.ready)
    const chosen = ready.length > 0 ? ready : list.filter(isServingTerminating)
    if (chosen.length > 0) sets.set(node, chosen)
  }
  return sets
}
