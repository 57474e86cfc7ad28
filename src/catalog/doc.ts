/**
 * docs/codes.md, written from the catalogues: `npm run docs:codes` writes it, and
 * test/catalog/codes-doc.test.ts fails when the file is not what this returns.
 */
import {EXIT} from '../errors.js'
import {DIAGNOSTICS, severitiesOf, type CodeEntry} from './diagnostics.js'
import {FINDINGS} from './findings.js'

/** The families of codes, by prefix, in the order the document lists them. */
const GROUPS: Array<{prefix: string; title: string}> = [
  {prefix: 'IPT', title: 'iptables-save'},
  {prefix: 'NFT', title: 'nftables (`nft list ruleset`, `nft -j list ruleset`)'},
  {prefix: 'IPVS', title: 'IPVS (`ipvsadm -Ln` / `-Sn`, with ipset and ip addr)'},
  {prefix: 'IPSET', title: '`ipset save` / `ipset list`'},
  {prefix: 'IPADDR', title: '`ip addr` / `ip -j addr`'},
  {prefix: 'KUBE', title: 'Kubernetes objects (Services, EndpointSlices, Endpoints)'},
  {prefix: 'KPJSON', title: 'saved states (`kp list --json`)'},
  {prefix: 'KPCONF', title: "kube-proxy's configuration (`kp migrate --kube-proxy-config`)"},
  {prefix: 'INPUT', title: 'any input'},
  {prefix: 'LIVE', title: 'reading this node (no -f)'},
  {prefix: 'USAGE', title: 'command line'},
  {prefix: 'OUTPUT', title: 'output files'},
  {prefix: 'RENDER', title: 'rendered rules (`kp migrate`)'},
  {prefix: 'MIGRATE', title: 'migration checks (`kp migrate`)'},
]

export function prefixOf(code: string): string {
  return code.slice(0, code.indexOf('_'))
}

/** A table cell: one line, `|` escaped. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|')
}

function severityCell(entry: CodeEntry): string {
  return severitiesOf(entry).join(', ')
}

/** The exit status a code ends the run with, when it does. */
function exitCell(entry: CodeEntry): string {
  if (entry.exit !== undefined) return String(EXIT[entry.exit].code)
  const sev = severitiesOf(entry)
  if (!sev.includes('error')) return ''
  return sev.length === 1 ? String(EXIT.input.code) : `${EXIT.input.code} (as error)`
}

function table(entries: Record<string, CodeEntry>, prefix: string, withExit: boolean): string[] {
  const codes = Object.keys(entries)
    .filter((c) => prefixOf(c) === prefix)
    .sort()
  const head = withExit
    ? ['| code | severity | exit | meaning | what to do |', '|---|---|---|---|---|']
    : ['| ID | severity | meaning | what to do |', '|---|---|---|---|']
  return [
    ...head,
    ...codes.map((c) => {
      const e = entries[c]!
      const cols = withExit
        ? [`\`${c}\``, severityCell(e), exitCell(e), cell(e.meaning), cell(e.action)]
        : [`\`${c}\``, severityCell(e), cell(e.meaning), cell(e.action)]
      return `| ${cols.join(' | ')} |`
    }),
  ]
}

function sections(entries: Record<string, CodeEntry>, withExit: boolean): string[] {
  const out: string[] = []
  for (const g of GROUPS) {
    if (!Object.keys(entries).some((c) => prefixOf(c) === g.prefix)) continue
    out.push(`### ${g.prefix}_*: ${g.title}`, '', ...table(entries, g.prefix, withExit), '')
  }
  return out
}

export function codesDocument(): string {
  const diagnostics = Object.keys(DIAGNOSTICS).length
  const findings = Object.keys(FINDINGS).length
  return [
    '# Diagnostic codes and finding IDs',
    '',
    '<!-- Generated from src/catalog/ by `npm run docs:codes`; do not edit by hand. -->',
    '',
    `kp names every problem it reports with a stable code (${diagnostics} diagnostic codes) and every`,
    `finding with a stable ID (${findings} finding IDs). Scripts may match on them; the lists below are`,
    'all there are, and a new one is added here before kp reports it.',
    '',
    '## Diagnostic codes',
    '',
    'A diagnostic is something kp saw while reading its input. It is printed on stderr as',
    '`kp: SEVERITY: path:line: message [CODE]` (`info` only with `--verbose`), and listed in the',
    '`diagnostics` of a state (`kp list --json`: `.diagnostics[].code`). A code with an exit',
    'status ends the run: its code is `.error.code` of the `--json` output. An `error` diagnostic',
    'ends the run with exit 3 (the first one gives the message and the code); the codes with',
    'exit 2 or 4, and some with exit 3, are errors of the command line or the environment, never',
    'listed as diagnostics. A code listed with several severities is emitted with the one that',
    'fits the case.',
    '',
    ...sections(DIAGNOSTICS, true),
    '## Finding IDs',
    '',
    'A finding is something an operator should know before switching modes: `kp migrate` prints',
    'them on stderr as `SEVERITY ID: title` and, with `--json`, as `.findings[].id`.',
    '`kp migrate --check --fail-on SEVERITY` exits 1 when one is at or above that severity',
    '(`error`, `warning`, `info`; `none` never fails). An ID listed with several severities is',
    'emitted with the one that fits the case.',
    '',
    ...sections(FINDINGS, false),
  ]
    .join('\n')
    .trimEnd()
    .concat('\n')
}
