/**
 * What `kp trace` needs read of an iptables dump: the rules a connection to one destination can
 * reach (ReadFocus, src/readers/iptables/focus.ts). A dispatch rule reaches a service by its
 * address (KUBE-SERVICES, the filter chains) or, for a NodePort, by its port alone
 * (KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES); the per-service chains it jumps to come with it,
 * and the node-wide chains are always read. A name is found in the rules' comments as for
 * `kp explain`.
 */
import {focusNeedles, type ServiceQuery} from '../explain-query.js'
import type {ReadFocus} from '../../readers/types.js'

/** The focus for a trace to `query`; null: read everything. */
export function traceFocus(query: ServiceQuery): ReadFocus | null {
  if (query.by === 'name') {
    const needles = focusNeedles(query)
    return needles ? {needles} : null
  }
  if (query.port === null) return null
  // Any address may be this node's (a NodePort then matches it), so the port's NodePort rules come too.
  return {
    needles: query.ip === null ? [] : [query.ip],
    portNeedles: [`--dport ${query.port}`],
  }
}
