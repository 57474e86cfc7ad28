/** Words the list and explain views share for frontends, actions and endpoints. */
import {endpointAddress, formatShare, frontendAddress} from '../../analyze/addresses.js'
import type {
  Endpoint,
  Frontend,
  FrontendAction,
  FrontendType,
  Incomplete,
} from '../../model/types.js'
import {REDACTED_SHOWN} from '../../core/redaction.js'
import {escapeControl} from '../escape.js'
import type {Style} from './style.js'

const TYPE_LABEL: Record<FrontendType, string> = {
  ClusterIP: 'ClusterIP',
  NodePort: 'NodePort',
  ExternalIP: 'ExternalIP',
  LoadBalancer: 'LB',
  External: 'External',
}

/** `REJECT` / `DROP` as words (coloured on a terminal); nothing for forward. */
export function actionMark(action: FrontendAction, style: Style): string {
  if (action === 'reject') return style.red('REJECT')
  if (action === 'drop') return style.red('DROP')
  return ''
}

/**
 * `ClusterIP 172.30.0.41:80`, `NodePort *:3001 DROP`, `LB 5.6.7.8:80 (from 203.0.113.0/25)`,
 * `NodePort *:31000 UNKNOWN` when the input lacks what decides its action.
 */
export function frontendLabel(
  fe: Omit<Frontend, 'incomplete'> & {incomplete?: Incomplete | null},
  style: Style,
): string {
  const parts = [`${TYPE_LABEL[fe.type]} ${escapeControl(frontendAddress(fe))}`]
  // A range the input hid shows as <redacted>: the set is partly unknown.
  const ranges = [...fe.sourceRanges, ...(fe.redactedSourceRanges ?? []).map(() => REDACTED_SHOWN)]
  if (ranges.length > 0) parts.push(`(from ${escapeControl(ranges.join(', '))})`)
  const mark = fe.incomplete ? style.yellow('UNKNOWN') : actionMark(fe.action, style)
  if (mark) parts.push(mark)
  // Cluster-wide view: a Local policy forwards on these nodes only.
  const nodes = fe.forwardedOnNodes ?? []
  if (nodes.length > 0)
    parts.push(`(on ${escapeControl(nodes.join(', '))}; ${style.red('DROP')} elsewhere)`)
  return parts.join(' ')
}

/**
 * Whose view a state is, for a heading: `, cluster-wide` for cluster objects read without a
 * node; `, node NAME` when a node is named; nothing for a dump of an unnamed node.
 */
export function pointOfViewWords(
  view: 'node' | 'cluster-wide' | undefined,
  node: string | null,
): string {
  if (view === 'cluster-wide') return ', cluster-wide'
  return node === null ? '' : `, node ${escapeControl(node)}`
}

export function localityWord(local: boolean | null): string {
  return local === true ? 'local' : local === false ? 'remote' : ''
}

/** `10.180.0.4:80 50 % local`, `10.244.2.7:8080 weight 0 remote draining`: what the source shows. */
export function endpointLabel(ep: Endpoint): string {
  // No share where a scheduler decides (IPVS): the weight says what there is to say.
  const parts =
    ep.share === null
      ? [escapeControl(endpointAddress(ep))]
      : [escapeControl(endpointAddress(ep)), formatShare(ep.share)]
  if (ep.weight !== null) parts.push(`weight ${ep.weight}`)
  const where = localityWord(ep.local)
  if (where) parts.push(where)
  if (ep.state !== null && ep.state !== 'ready') parts.push(ep.state)
  return parts.join(' ')
}
