/**
 * The human view of a TraceResult: the connection, the hooks kp assumed, then each way it can
 * go (grouped by the conditions it depends on), with its chance, verdict and the rules it took.
 */
import {formatShare} from '../../analyze/addresses.js'
import type {TraceOutcome, TraceResult} from '../../analyze/trace/index.js'
import {escapeControl} from '../escape.js'
import type {Style} from './style.js'

function verdictWords(o: TraceOutcome): string {
  const nat = o.masquerade ? 'source masqueraded' : 'source kept'
  switch (o.verdict) {
    case 'forwarded':
      return o.dnat === null
        ? `forwarded unchanged, ${nat}`
        : `forwarded to ${o.dnat} (DNAT), ${nat}`
    case 'delivered':
      return 'delivered to this node (no service rule took it)'
    case 'rejected':
      return `rejected: ${o.reason ?? 'no reason given'}`
    case 'dropped':
      return `dropped: ${o.reason ?? 'no reason given'}`
    case 'unknown':
      return `unknown: ${o.reason ?? 'kp cannot follow the rules here'}`
  }
}

function stepLines(o: TraceOutcome, style: Style): string[] {
  return o.steps.map((s) => {
    const where = s.rule ? `${s.rule.source.path}:${s.rule.source.line}` : '(assumed)'
    return `        ${style.dim(where)}  ${s.table} ${s.chain}: ${escapeControl(s.note)}`
  })
}

export function renderTrace(result: TraceResult, style: Style): string {
  const lines = [`${style.bold(escapeControl(result.title))}  (${result.mode} mode)`]
  if (result.assumed.length > 0)
    lines.push('  Assumed, where the input does not say:', ...result.assumed.map((a) => `    ${a}`))
  const groups = new Map<string, TraceOutcome[]>()
  for (const o of result.outcomes) {
    const key = o.conditions.join('\n')
    const list = groups.get(key)
    if (list) list.push(o)
    else groups.set(key, [o])
  }
  for (const [key, outcomes] of groups) {
    lines.push('')
    if (key !== '') lines.push(`  If ${key.split('\n').map(escapeControl).join(', and ')}:`)
    for (const o of outcomes) {
      lines.push(`    ${formatShare(o.probability).padStart(7)}  ${escapeControl(verdictWords(o))}`)
      lines.push(...stepLines(o, style))
    }
  }
  if (result.outcomes.length === 0) lines.push('', '  No way through the rules was found.')
  return lines.join('\n')
}
