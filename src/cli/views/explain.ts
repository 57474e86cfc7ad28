/**
 * The human view of an ExplainResult: per service port, its endpoints, then per frontend what
 * a new connection gets and why, in plain words; with --rules, where the sources say so.
 */
import {endpointAddress, formatShare} from '../../analyze/addresses.js'
import type {
  ExplainResult,
  FrontendExplanation,
  MasqueradeWhen,
  ServiceExplanation,
} from '../../analyze/explain.js'
import {escapeControl} from '../escape.js'
import type {RuleText} from '../../readers/rule-text.js'
import {frontendLabel, pointOfViewWords} from './service-words.js'
import type {Style} from './style.js'
import {type Column, renderTable} from './table.js'
import {wrapLine} from '../wrap.js'

export interface ExplainViewOptions {
  rules: boolean
  ruleText: RuleText
  style: Style
  /** The terminal's width for prose (src/cli/wrap.ts); null: lines are not wrapped. */
  width?: number | null
}

const MASQUERADE_WORD: Record<MasqueradeWhen, string> = {
  always: 'always',
  never: 'never',
  conditional: 'depends on the client',
  unknown: 'unknown',
}

const INDENT = '    '

type Row = ServiceExplanation['endpoints'][number]

const ENDPOINT_COLUMNS: Column<Row>[] = [
  {header: 'ENDPOINT', cell: (ep) => escapeControl(ep.address)},
  {header: 'SHARE', cell: (ep) => formatShare(ep.share)},
  {
    header: 'ON THIS NODE',
    cell: (ep) => (ep.local === null ? 'unknown' : ep.local ? 'yes (local)' : 'no (remote)'),
  },
  {
    header: 'STATE',
    cell: (ep) =>
      [ep.state ?? '-', ep.weight === null ? '' : `weight ${ep.weight}`].filter(Boolean).join(', '),
  },
]

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => (line ? prefix + line : line))
    .join('\n')
}

function renderFrontend(fe: FrontendExplanation, sp: ServiceExplanation, style: Style): string[] {
  const lines = [`  ${style.bold(frontendLabel(fe, style))}`]
  const said = escapeControl(fe.verdict)
  const verdict =
    fe.incomplete !== null
      ? style.yellow(said)
      : fe.action === 'forward' && fe.reaches.length > 0
        ? style.green(said)
        : fe.action === 'forward'
          ? style.yellow(said)
          : style.red(said)
  lines.push(`${INDENT}${verdict}`)
  // Under a Local policy the frontend reaches a subset; say which, with the shares among them.
  // So does a frontend with its own real servers (IPVS virtual servers that disagree).
  const subset = fe.reaches.length < sp.endpoints.length || fe.ownEndpoints !== null
  if (fe.action === 'forward' && fe.reaches.length > 0 && subset) {
    const to = fe.reaches.map((r) =>
      r.share === null
        ? escapeControl(endpointAddress(r))
        : `${escapeControl(endpointAddress(r))} ${formatShare(r.share)}`,
    )
    lines.push(`${INDENT}Reaches: ${to.join(', ')}`)
  }
  // The reason quotes node facts from the input (pod CIDRs, interface names).
  lines.push(
    `${INDENT}Source NAT (masquerade): ${MASQUERADE_WORD[fe.masquerade.when]}. ${escapeControl(fe.masquerade.reason)}`,
  )
  for (const note of fe.notes) lines.push(`${INDENT}${escapeControl(note)}`)
  return lines
}

function renderMatch(
  sp: ServiceExplanation,
  opts: ExplainViewOptions,
  result: ExplainResult,
): string[] {
  const {style} = opts
  const out: string[] = []
  const family = sp.service.family === 'IPv6' ? 'IPv6, ' : ''
  const pov = pointOfViewWords(result.pointOfView, result.node)
  out.push(
    `${style.bold.underline(escapeControl(sp.service.displayName))}  (${family}${result.mode} mode${pov})`,
  )
  const facts = [
    `internalTrafficPolicy ${sp.policies.internalTrafficPolicy ?? 'not shown'}`,
    `externalTrafficPolicy ${sp.policies.externalTrafficPolicy ?? 'not shown'}`,
    `session affinity ${sp.affinity === null ? 'none' : sp.affinity.text}`,
  ]
  if (sp.healthCheckNodePort !== null)
    facts.push(`health check node port ${sp.healthCheckNodePort}`)
  if (sp.scheduler !== null) facts.push(`IPVS scheduler ${escapeControl(sp.scheduler)}`)
  for (const fact of facts) out.push(...wrapLine(`  ${fact}`, opts.width ?? null))
  out.push('')
  // A fragment that shows no endpoint does not show that there are none.
  if (sp.endpoints.length === 0 && sp.incomplete !== null)
    out.push(`  Endpoints: ${style.yellow('none in the input (incomplete)')}`)
  else if (sp.endpoints.length === 0) out.push(`  Endpoints: ${style.red('none')}`)
  else {
    const how = sp.endpoints.every((ep) => ep.share === null)
      ? sp.scheduler === null
        ? 'how a new connection picks one is not shown'
        : `the IPVS ${escapeControl(sp.scheduler)} scheduler picks one per new connection`
      : 'shares are for a new connection from inside the cluster'
    out.push(...wrapLine(`  Endpoints (${sp.endpoints.length}); ${how}:`, opts.width ?? null))
    const width = opts.width == null ? null : opts.width - INDENT.length
    out.push(indent(renderTable(ENDPOINT_COLUMNS, sp.endpoints, style, {width}), INDENT))
  }
  // Prose wraps at the terminal's width; the endpoint table above and rule lines below do not.
  const say = (line: string) => wrapLine(line, opts.width ?? null)
  for (const fe of sp.frontends) {
    out.push('')
    out.push(...renderFrontend(fe, sp, style).flatMap(say))
  }
  if (sp.notes.length > 0) {
    out.push('')
    for (const note of sp.notes) out.push(...say(`  Note: ${escapeControl(note)}`))
  }
  if (opts.rules) {
    out.push('')
    if (sp.rules.length === 0) out.push('  Rules: the sources name no rule for this service port.')
    else {
      out.push(`  Rules (${sp.rules.length}), in source order:`)
      const places = sp.rules.map((ref) => escapeControl(`${ref.path}:${ref.line}`))
      const width = places.reduce((w, p) => Math.max(w, p.length), 0)
      sp.rules.forEach((ref, i) => {
        const [first, ...more] = opts.ruleText(ref, sp.rules)
        const place = places[i]!
        if (first === undefined) {
          out.push(`${INDENT}${style.dim(place)}`)
          return
        }
        out.push(`${INDENT}${style.dim(place.padEnd(width))}  ${escapeControl(first)}`)
        // One cited nft -j chain is its rules: each on a line of its own, under the first.
        for (const line of more) out.push(`${INDENT}${' '.repeat(width)}  ${escapeControl(line)}`)
      })
    }
  }
  return out
}

export function renderExplain(result: ExplainResult, opts: ExplainViewOptions): string {
  const blocks = result.matches.map((m) => renderMatch(m, opts, result).join('\n'))
  const header =
    result.matches.length > 1
      ? `${result.matches.length} service ports match ${JSON.stringify(escapeControl(result.query.text))}:\n\n`
      : ''
  // What could not be read may hold more endpoints or frontends of these service ports.
  const footer = result.complete
    ? ''
    : '\n\nThe input is incomplete: rules or objects of these service ports may be missing.'
  return header + blocks.join('\n\n') + footer
}
