/** The `kp list` table: one row per service port, as the state is sorted. */
import {missingText} from '../../analyze/explain.js'
import {pushTo} from '../../core/arrays.js'
import {displayName} from '../../core/state.js'
import type {Frontend, ProxyState, ServicePort} from '../../model/types.js'
import {escapeControl} from '../escape.js'
import {endpointLabel, frontendLabel, pointOfViewWords} from './service-words.js'
import {ownEndpoints, ownEndpointsDifference} from '../../analyze/frontend-endpoints.js'
import type {Style} from './style.js'
import {type Column, renderTable} from './table.js'

export interface ListViewOptions {
  wide: boolean
  /** The -n filter, to say what an empty table means. */
  namespace?: string
  /** Service ports in the state before the -n filter. */
  total: number
  style: Style
  /** The terminal's width: a wider table folds its FRONTENDS column (null: never). */
  width?: number | null
}

const CLUSTER_WIDE =
  'Cluster-wide view: no --node was given and this host is not a node of these objects; --node NAME shows what one node does.'

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

/**
 * A frontend, and under it, when its IPVS virtual server's real servers differ from the service
 * port's (kubernetes #89923), how: wide lists them, the table says how many and what differs.
 */
function frontendCell(sp: ServicePort, fe: Frontend, opts: ListViewOptions): string {
  const label = frontendLabel(fe, opts.style)
  const own = ownEndpoints(sp, fe)
  if (own === null) return label
  const note = opts.style.red(
    `  own endpoints (${escapeControl(ownEndpointsDifference(own))})${opts.wide ? ':' : ''}`,
  )
  if (!opts.wide) return `${label}\n${note}`
  const listed = own.endpoints.map((ep) => `    ${endpointLabel(ep)}`)
  return [label, note, ...(listed.length > 0 ? listed : ['    none'])].join('\n')
}

function columns(opts: ListViewOptions & {showScheduler: boolean}): Column<ServicePort>[] {
  const {style} = opts
  return [
    {
      header: 'SERVICE PORT',
      cell: (sp) =>
        escapeControl(displayName(sp)) + (sp.incomplete ? `\n${style.yellow('(incomplete)')}` : ''),
    },
    {
      header: 'FRONTENDS',
      fold: true,
      cell: (sp) =>
        sp.frontends.length > 0
          ? sp.frontends.map((fe) => frontendCell(sp, fe, opts)).join('\n')
          : '-',
    },
    opts.wide
      ? {
          header: 'ENDPOINTS',
          cell: (sp) =>
            sp.endpoints.length > 0
              ? sp.endpoints.map((ep) => endpointLabel(ep)).join('\n')
              : sp.incomplete
                ? style.yellow('?')
                : style.red('none'),
        }
      : {
          header: 'ENDPOINTS',
          cell: (sp) =>
            sp.endpoints.length > 0
              ? endpointCount(sp)
              : sp.incomplete
                ? style.yellow('?')
                : style.red('0'),
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
  const table = renderTable(columns({...opts, showScheduler}), state.services, opts.style, {
    width: opts.width,
  })
  const where = opts.namespace === undefined ? '' : ` in namespace ${escapeControl(opts.namespace)}`
  const pov = pointOfViewWords(state.node.view, state.node.name)
  // The stderr line says it too; the table alone must not read as the whole node.
  const partial = state.complete === false ? '; input incomplete, more may be missing' : ''
  const footer = `${ports} service port${ports === 1 ? '' : 's'}${where} (${modeAndLayout(state)}${pov}${partial})${footnote(state.services)}`
  return state.node.view === 'cluster-wide'
    ? `${table}\n\n${footer}\n${CLUSTER_WIDE}`
    : `${table}\n\n${footer}`
}

/** Why a row says (incomplete): what the input references but lacks, and how to collect it. */
function footnote(services: ServicePort[]): string {
  // One line per different gap: an ipvsadm listing without `ipset save` lacks the same sets for
  // every service port.
  const byGap = new Map<string, string[]>()
  for (const sp of services)
    if (sp.incomplete !== undefined) pushTo(byGap, missingText(sp.incomplete), displayName(sp))
  if (byGap.size === 0) return ''
  const lines = [...byGap].map(([gap, names]) => {
    const who = names.length <= 2 ? names.join(', ') : `${names.length} service ports`
    return `  ${escapeControl(who)}: ${escapeControl(gap)}`
  })
  return `\n\n(incomplete): read from a fragment; what depends on these is unknown, not "no":\n${lines.join('\n')}`
}
