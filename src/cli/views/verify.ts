/**
 * `kp verify` for people: one verdict line per service port (agrees / differs / not verified,
 * how many probes), and on a difference each check that differs with what was expected.
 */
import type {Attribution, AttributedDifference, VerifyResult} from '../../analyze/verify/types.js'
import {escapeControl} from '../escape.js'
import type {Style} from './style.js'

export function renderVerify(r: VerifyResult, style: Style): string {
  const own = renderOne(r, style)
  const attributed = r.attributed ? renderAttribution(r.attributed, style) : ''
  if (!r.against) return own + attributed
  const files = r.against.files.map(escapeControl).join(', ')
  return `${own}\n\nThe same probes through ${files}, held to the same answers:\n${renderOne(r.against.result, style)}${attributed}`
}

/** The differences under the migration findings that announce them, then the unexpected ones. */
export function renderAttribution(a: Attribution, style: Style): string {
  const total = a.unexpected.length + a.announced.reduce((n, f) => n + f.differences.length, 0)
  if (total === 0) return ''
  const line = (d: AttributedDifference) =>
    `    ${escapeControl(d.service)} from ${d.client} ${d.source} to ${escapeControl(d.frontend)}: ${d.differences.map(escapeControl).join('; ')}`
  const lines = ['', '', `Differences by the migration finding (to ${a.mode}) that announces them:`]
  for (const f of a.announced)
    lines.push(`  ${style.yellow(f.id)}  ${escapeControl(f.title)}`, ...f.differences.map(line))
  if (a.unexpected.length > 0)
    lines.push(
      `  ${style.red('unexpected differences')}  (no migration finding announces them)`,
      ...a.unexpected.map(line),
    )
  lines.push(
    '',
    a.unexpected.length === 0
      ? `All ${total} difference(s) are announced by migration findings.`
      : `${a.unexpected.length} of ${total} difference(s) are not announced by any migration finding.`,
  )
  return lines.join('\n')
}

function renderOne(r: VerifyResult, style: Style): string {
  const lines: string[] = []
  const word = {
    agrees: style.green('agrees'),
    differs: style.red('differs'),
    'not verified': style.yellow('not verified'),
  }
  for (const s of r.services) {
    const name = escapeControl(s.service)
    if (s.verdict === 'not verified') {
      lines.push(`${word[s.verdict]}  ${name}: ${s.reason}`)
      continue
    }
    const clients = [...new Set(s.checks.map((c) => c.client))].join(', ')
    lines.push(`${word[s.verdict]}  ${name}  (${s.probes} probes; ${clients})`)
    for (const c of s.checks.filter((x) => !x.agrees)) {
      lines.push(
        `    from ${c.client} ${c.source} to ${escapeControl(c.frontend)}: expected ${c.expected}`,
      )
      for (const d of c.differences) lines.push(`      - ${d}`)
      const seen = Object.entries(c.observed)
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ×${n}`)
        .join(', ')
      lines.push(`      kernel: ${seen}`)
    }
  }
  if (r.assumedHooks.length > 0)
    lines.push(
      '',
      'Changed before loading (the rules as kube-proxy alone would have them):',
      ...r.assumedHooks.map((h) => `  ${escapeControl(h)}`),
    )
  const {agrees, differs, notVerified} = r.summary
  lines.push(
    '',
    `${r.probes} probe connections in ${r.seconds} s (rules loaded with ${r.loadedWith}): ${agrees} service port(s) agree, ${differs} differ, ${notVerified} not verified`,
  )
  return lines.join('\n')
}
