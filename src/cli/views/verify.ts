/**
 * `kp verify` for people: one verdict line per service port (agrees / differs / not verified,
 * how many probes), and on a difference each check that differs with what was expected.
 */
import type {VerifyResult} from '../../analyze/verify/types.js'
import {escapeControl} from '../escape.js'
import type {Style} from './style.js'

export function renderVerify(r: VerifyResult, style: Style): string {
  const own = renderOne(r, style)
  if (!r.against) return own
  const files = r.against.files.map(escapeControl).join(', ')
  return `${own}\n\nThe same probes through ${files}, held to the same answers:\n${renderOne(r.against.result, style)}`
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
