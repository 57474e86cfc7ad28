/** The `kp list` table: one row per service port, as the state is sorted. */
import {displayName} from '../../core/state.js'
import type {ProxyState, ServicePort} from '../../model/types.js'
import {escapeControl} from '../escape.js'
import {endpointLabel, frontendLabel} from './service-words.js'
import type {Style} from './style.js'
import {type Column, renderTable} from './table.js'

export interface ListViewOptions {
  wide: boolean
  /** The -n filter, to say what an empty table means. */
  namespace?: string
  /** Service ports in the state before the -n filter. */
  total: number
  style: Style
}

function endpointCount(sp: ServicePort): string {
  const n = sp.endpoints.length
  const known = sp.endpoints.filter((ep) => ep.local !== null)
  if (known.length === 0) return String(n)
  return `${n} (${known.filter((ep) => ep.local).length} local)`
}

function policies(sp: ServicePort): string {
  const lines: string[] = []
  if (sp.internalTrafficPolicy !== null) lines.push(`ITP=${sp.internalTrafficPolicy}`)
  if (sp.externalTrafficPolicy !== null) lines.push(`ETP=${sp.externalTrafficPolicy}`)
  return lines.length > 0 ? lines.join('\n') : '-'
}

function affinity(sp: ServicePort): string {
  if (sp.sessionAffinity === null) return '-'
  const t = sp.sessionAffinity.timeoutSeconds
  return t === null ? 'ClientIP' : `ClientIP ${t}s`
}

function columns(opts: ListViewOptions & {showScheduler: boolean}): Column<ServicePort>[] {
  const {style} = opts
  return [
    {header: 'SERVICE PORT', cell: (sp) => escapeControl(displayName(sp))},
    {
      header: 'FRONTENDS',
      cell: (sp) =>
        sp.frontends.length > 0
          ? sp.frontends.map((fe) => frontendLabel(fe, style)).join('\n')
          : '-',
    },
    opts.wide
      ? {
          header: 'ENDPOINTS',
          cell: (sp) =>
            sp.endpoints.length > 0
              ? sp.endpoints.map((ep) => endpointLabel(ep)).join('\n')
              : style.red('none'),
        }
      : {
          header: 'ENDPOINTS',
          cell: (sp) => (sp.endpoints.length > 0 ? endpointCount(sp) : style.red('0')),
        },
    {header: 'POLICY', cell: policies},
    {header: 'AFFINITY', cell: affinity},
    ...(opts.wide && opts.showScheduler
      ? [{header: 'SCHEDULER', cell: (sp: ServicePort) => sp.scheduler ?? '-'}]
      : []),
  ]
}

/** "nftables mode, 1.36+ layout": the kube-proxy layout generation(s) the rules show, when known. */
function modeAndLayout(state: ProxyState): string {
  const layouts = state.node.kubeProxyLayouts ?? []
  if (layouts.length === 0) return `${state.mode} mode`
  const mixed = layouts.length > 1 ? ' (mixed)' : ''
  return `${state.mode} mode, ${layouts.join(' and ')} layout${mixed}`
}

export function renderServiceList(state: ProxyState, opts: ListViewOptions): string {
  const ports = state.services.length
  if (ports === 0) {
    if (opts.namespace !== undefined && opts.total > 0) {
      return `No service ports in namespace ${escapeControl(opts.namespace)} (${opts.total} in other namespaces; drop -n to see them).`
    }
    return `No service ports found (${state.mode} mode, ${state.sources.length} source${state.sources.length === 1 ? '' : 's'} read).`
  }
  // Only IPVS has schedulers; the column would be all dashes in the other modes.
  const showScheduler = state.services.some((sp) => sp.scheduler !== null)
  const table = renderTable(columns({...opts, showScheduler}), state.services, opts.style)
  const where = opts.namespace === undefined ? '' : ` in namespace ${escapeControl(opts.namespace)}`
  return `${table}\n\n${ports} service port${ports === 1 ? '' : 's'}${where} (${modeAndLayout(state)})`
}
