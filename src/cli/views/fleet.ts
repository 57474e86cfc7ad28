/**
 * Text views of the fleet answers: the findings × nodes table of `kp migrate --check` over a
 * fleet, and the odd-one-out of `kp diff` over a fleet. Node lists are shortened; --json has all.
 */
import type {
  FleetDiffResult,
  FleetMigrateResult,
  FleetNode,
  FleetVariant,
} from '../../analyze/fleet.js'
import type {FieldDifference} from '../../analyze/diff.js'
import {escapeControl} from '../escape.js'
import type {Style} from './style.js'
import {renderTable} from './table.js'
import {shortError} from '../fleet/short-error.js'

const NODES_SHOWN = 6

/** `node-a, node-b, ... (+12)`, or `all` when every read node is in the list. */
function nodeList(nodes: string[], readCount: number): string {
  if (nodes.length === readCount && readCount > 1) return `all ${readCount}`
  const shown = nodes.slice(0, NODES_SHOWN).map(escapeControl).join(', ')
  return nodes.length > NODES_SHOWN ? `${shown}, ... (+${nodes.length - NODES_SHOWN})` : shown
}

function shortList(items: string[]): string {
  const shown = items.slice(0, 3).map(escapeControl).join(', ')
  return items.length > 3 ? `${shown}, ... (+${items.length - 3})` : shown
}

function failedLines(nodes: FleetNode[]): string[] {
  const failed = nodes.filter((n) => !n.ok)
  if (failed.length === 0) return []
  return [
    '',
    `Not read (${failed.length}):`,
    ...failed.map((n) => `  ${escapeControl(n.name)}: ${escapeControl(shortError(n.error ?? ''))}`),
  ]
}

export function renderFleetMigrate(
  result: FleetMigrateResult,
  style: Style,
  width: number | null,
): string {
  const read = result.nodes.filter((n) => n.ok).length
  const paint = {
    error: (s: string) => style.red.bold(s),
    warning: (s: string) => style.yellow.bold(s),
    info: (s: string) => style.cyan(s),
  }
  const lines: string[] = [
    `${result.to} migration check over ${result.nodes.length} node(s), ${read} read (kube-proxy ${result.kubeProxyVersion} layout)`,
    '',
  ]
  if (result.findings.length > 0) {
    lines.push(
      renderTable(
        [
          {header: 'SEVERITY', cell: (f) => paint[f.severity](f.severity.toUpperCase())},
          {header: 'FINDING', cell: (f) => f.id},
          {header: 'NODES', cell: (f) => `${f.nodes.length}/${read}`},
          {
            header: 'TITLE / WHICH NODES',
            fold: true,
            cell: (f) =>
              [
                escapeControl(f.title),
                ...(f.services.length > 0 ? [`services: ${shortList(f.services)}`] : []),
                `on: ${nodeList(f.nodes, read)}`,
              ].join('\n'),
          },
        ],
        result.findings,
        style,
        {width},
      ),
    )
    lines.push('')
  }
  lines.push(
    renderTable(
      [
        {header: 'NODE', cell: (n) => escapeControl(n.name)},
        {header: 'FROM', cell: (n) => n.from ?? '-'},
        {header: 'ERRORS', cell: (n) => (n.ok ? String(n.counts.error) : '-')},
        {header: 'WARNINGS', cell: (n) => (n.ok ? String(n.counts.warning) : '-')},
        {header: 'INFO', cell: (n) => (n.ok ? String(n.counts.info) : '-')},
        {
          header: 'STATUS',
          cell: (n) => (!n.ok ? `not read [${n.code ?? ''}]` : n.complete ? 'read' : 'incomplete'),
        },
      ],
      result.nodes,
      style,
      {width},
    ),
  )
  lines.push(...failedLines(result.nodes))
  lines.push(
    '',
    `${result.findings.length} distinct finding(s); \`kp migrate --to ${result.to} --check -f DIR/NODE\` details one node`,
  )
  return lines.join('\n')
}

function differenceLine(d: FieldDifference): string {
  const show = (v: unknown) =>
    v === null ? '-' : typeof v === 'string' ? escapeControl(v) : escapeControl(JSON.stringify(v))
  return `${escapeControl(d.field)}: ${show(d.a)} -> ${show(d.b)}`
}

function variantLines(v: FleetVariant, read: number): string[] {
  const head = `  ${nodeList(v.nodes, read)}: `
  if (v.absent) return [`${head}missing (the majority has it)`]
  if (v.differences.every((d) => d.a === null))
    return [
      `${head}only here (stale rules?)`,
      ...v.differences.map((d) => `      ${differenceLine(d)}`),
    ]
  return [`${head}differs`, ...v.differences.map((d) => `      ${differenceLine(d)}`)]
}

export function renderFleetDiff(result: FleetDiffResult, style: Style): string {
  const read = result.nodes.filter((n) => n.ok).length
  const scope = result.service === null ? '' : ` for ${escapeControl(result.service)}`
  const lines: string[] = [`${read} of ${result.nodes.length} node(s) compared${scope}`]
  for (const s of result.services) {
    lines.push('', style.bold(escapeControl(s.service)))
    lines.push(
      s.majority === null
        ? '  no majority: the nodes split evenly'
        : `  majority (${s.majority.length}): ${nodeList(s.majority, read)}`,
    )
    for (const v of s.odd) lines.push(...variantLines(v, read))
  }
  if (result.cluster !== null) {
    const off = result.cluster.filter((c) => c.services.length > 0)
    lines.push('', `Against the cluster objects: ${off.length} node(s) differ`)
    for (const c of off) {
      lines.push(`  ${escapeControl(c.node)}:`)
      for (const s of c.services.slice(0, 10)) {
        const what =
          s.change === 'added'
            ? 'in the rules, not in the objects (stale?)'
            : s.change === 'removed'
              ? 'in the objects, not in the rules'
              : 'differs'
        lines.push(`    ${escapeControl(s.service)}: ${what}`)
        for (const d of s.differences.slice(0, 5)) lines.push(`      ${differenceLine(d)}`)
      }
      if (c.services.length > 10) lines.push(`    ... (+${c.services.length - 10}, see --json)`)
    }
  }
  lines.push(...failedLines(result.nodes))
  lines.push(
    '',
    read < 2
      ? 'Fewer than two nodes read: nothing to compare.'
      : result.oddNodes.length === 0
        ? `All ${read} nodes read are alike.`
        : `Not like the others: ${result.oddNodes.map(escapeControl).join(', ')}`,
  )
  return lines.join('\n')
}
