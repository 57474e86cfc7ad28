/**
 * The human view of `kp diff`: one block per service port with `-` lines for A and `+` lines
 * for B, like a unified diff. Colour is an extra only: the `-`/`+` signs carry the meaning.
 */
import {Chalk} from 'chalk'
import type {DiffResult, DiffSide, FieldDifference} from '../../analyze/diff.js'
import {escapeControl} from '../escape.js'
import {wrapLine} from '../wrap.js'

export interface DiffViewOptions {
  color: boolean
  /** The terminal's width (src/cli/wrap.ts terminalWidth); null: lines are not wrapped. */
  width?: number | null
}

/** Set members (a frontend, an endpoint) are shown bare; attributes as `field: value`. */
const MEMBER_FIELDS = new Set(['frontend', 'endpoint'])

function formatValue(field: string, v: unknown): string {
  // The model's nodePortAddresses [] means kube-proxy's default, every local address (types.ts).
  if (field === 'nodePortAddresses' && Array.isArray(v) && v.length === 0)
    return '(every local address)'
  if (Array.isArray(v)) return v.length === 0 ? '(none)' : v.map((x) => String(x)).join(', ')
  return String(v)
}

function sideLine(name: string, side: DiffSide): string {
  const paths = side.sources.map((s) => s.path).join(', ') || '(no sources)'
  return `${name}: ${side.mode} mode, from ${escapeControl(paths)}`
}

const changeWords = {added: 'only in b', removed: 'only in a', changed: 'changed'} as const

export function formatDiff(result: DiffResult, opts: DiffViewOptions): string {
  const c = new Chalk({level: opts.color ? 1 : 0})
  // Without colour chalk returns its argument unchanged; skip the calls (a diff can be very long).
  const plain = (text: string): string => text
  const red = opts.color ? c.red : plain
  const green = opts.color ? c.green : plain
  const lines: string[] = []
  // Wrapped before it is coloured, so that each wrapped line carries its own colour codes.
  const push = (paint: (text: string) => string, text: string): void => {
    for (const l of wrapLine(text, opts.width ?? null)) lines.push(paint(l))
  }
  push(red, `--- ${sideLine('a', result.a)}`)
  push(green, `+++ ${sideLine('b', result.b)}`)
  const pushDifference = (d: FieldDifference): void => {
    const field = escapeControl(d.field)
    const label = MEMBER_FIELDS.has(d.field) ? `${field} ` : `${field}: `
    if (d.a !== null) push(red, `  - ${label}${escapeControl(formatValue(d.field, d.a))}`)
    if (d.b !== null) push(green, `  + ${label}${escapeControl(formatValue(d.field, d.b))}`)
  }
  for (const s of result.services) {
    lines.push('')
    push(c.bold, `${escapeControl(s.service)}  (${changeWords[s.change]})`)
    for (const d of s.differences) pushDifference(d)
  }
  if (result.node.length > 0) {
    lines.push('', c.bold('node settings'))
    for (const d of result.node) pushDifference(d)
  }
  // Unknown is not a difference: neither signed - nor +, each with what its side lacks.
  for (const u of result.unknown) {
    const why =
      u.missing.length > 0
        ? `${u.missing.join(', ')} not in ${u.side}'s input; collect with \`${u.collect ?? ''}\``
        : u.redacted
          ? `${u.side}'s input hid a source range (redacted), so the range sets may or may not be the same`
          : `${u.side} is a fragment that does not show it`
    lines.push('')
    push(c.bold, `${escapeControl(u.service)}  (unknown: ${escapeControl(why)})`)
    for (const d of u.fields) {
      const value = u.side === 'a' ? d.b : d.a
      const shown =
        value === null || value === 'unknown'
          ? ''
          : ` (${u.side === 'a' ? 'b' : 'a'}: ${formatValue(d.field, value)})`
      push(plain, `  ? ${escapeControl(d.field)}${escapeControl(shown)}`)
    }
  }
  lines.push('')
  const unknownPart =
    result.unknown.length > 0
      ? ` ${result.unknown.length} service port(s) cannot be compared: one side's input does not show them (unknown, not a difference).`
      : ''
  if (result.equal)
    push(plain, 'No differences: both states proxy the same service ports the same way.')
  else if (result.services.length === 0 && result.node.length === 0)
    push(plain, `No known differences.${unknownPart}`)
  else {
    const count = (change: keyof typeof changeWords) =>
      result.services.filter((s) => s.change === change).length
    const parts = [
      `${count('changed')} changed`,
      `${count('removed')} only in a`,
      `${count('added')} only in b`,
    ]
    const nodePart = result.node.length > 0 ? `; ${result.node.length} node setting(s) differ` : ''
    push(plain, `Service ports: ${parts.join(', ')}${nodePart}.${unknownPart}`)
  }
  return lines.join('\n')
}
