/**
 * The human view of migration findings (stderr): one block per finding, the severity spelled
 * out in the first word so colour is never the only signal.
 */
import {Chalk} from 'chalk'
import type {Finding} from '../../analyze/findings.js'
import {formatDiagnostic} from '../../errors.js'
import type {Severity} from '../../model/types.js'
import {escapeControl} from '../escape.js'
import {wrapText} from '../wrap.js'

export interface FindingsViewOptions {
  color: boolean
  /** The terminal's width for the findings' prose (src/cli/wrap.ts); null: not wrapped. */
  width?: number | null
}

/** Enough positions to find the spot; the full list is in --json. */
const MAX_EVIDENCE_SHOWN = 5
const MAX_ITEMS_SHOWN = 10

function list(items: string[]): string {
  const shown = items.slice(0, MAX_ITEMS_SHOWN).map(escapeControl).join(', ')
  return items.length > MAX_ITEMS_SHOWN
    ? `${shown}, ... (${items.length - MAX_ITEMS_SHOWN} more, see --json)`
    : shown
}

export function formatFindings(findings: Finding[], opts: FindingsViewOptions): string {
  const c = new Chalk({level: opts.color ? 1 : 0})
  const paint: Record<Severity, (s: string) => string> = {
    error: (s) => c.red.bold(s),
    warning: (s) => c.yellow.bold(s),
    info: (s) => c.cyan(s),
  }
  const lines: string[] = []
  for (const f of findings) {
    lines.push(`${paint[f.severity](f.severity.toUpperCase())} ${f.id}: ${escapeControl(f.title)}`)
    lines.push(`  ${escapeControl(f.message)}`)
    if (f.services.length > 0) lines.push(`  services: ${list(f.services)}`)
    if (f.addresses.length > 0) lines.push(`  addresses: ${list(f.addresses)}`)
    if (f.evidence.length > 0) {
      const shown = f.evidence
        .slice(0, MAX_EVIDENCE_SHOWN)
        .map((ref) =>
          escapeControl(formatDiagnostic({message: '', source: ref}).replace(/: $/, '')),
        )
      const more =
        f.evidence.length > MAX_EVIDENCE_SHOWN
          ? ` (+${f.evidence.length - MAX_EVIDENCE_SHOWN} more)`
          : ''
      lines.push(`  seen at: ${shown.join(', ')}${more}`)
    }
    lines.push(`  what to do: ${escapeControl(f.action)}`)
    if (f.docs) lines.push(`  see: ${f.docs}`)
    lines.push('')
  }
  const count = (s: Severity) => findings.filter((f) => f.severity === s).length
  lines.push(
    findings.length === 0
      ? 'No migration findings.'
      : `${findings.length} finding(s): ${count('error')} error, ${count('warning')} warning, ${count('info')} info.`,
  )
  return wrapText(lines.join('\n'), opts.width ?? null)
}
