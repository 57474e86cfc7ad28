/**
 * src/core/completeness.ts: which errors leave something worth showing (partial) and which
 * leave nothing (unreadable, as before issue 21 §1).
 */
import {describe, expect, it} from 'vitest'
import {completenessOf} from '../../src/core/completeness.js'
import {diag} from '../../src/core/state.js'
import type {DiagnosticCode} from '../../src/catalog/diagnostics.js'
import {proxyState, servicePort} from '../helpers/builders.js'

const at = {path: 'dump', line: 3}
const withErrors = (codes: DiagnosticCode[], services = 1) => {
  const s = proxyState(
    'iptables',
    Array.from({length: services}, () => servicePort()),
  )
  s.diagnostics = codes.map((c) => diag('error', c, 'x', at))
  return s
}

describe('completenessOf', () => {
  it('no errors: complete, warnings or not', () => {
    const s = withErrors([])
    s.diagnostics.push(diag('warning', 'INPUT_REDACTED', 'x', at))
    expect(completenessOf(s)).toBe('complete')
  })

  it('an error on one line, with services read: partial', () => {
    expect(completenessOf(withErrors(['INPUT_BAD_ADDRESS']))).toBe('partial')
    expect(completenessOf(withErrors(['NFT_TRUNCATED']))).toBe('partial')
    expect(completenessOf(withErrors(['IPT_TRUNCATED'], 0))).toBe('partial')
  })

  it('a source that gave nothing, and nothing else read: unreadable', () => {
    expect(completenessOf(withErrors(['INPUT_EMPTY'], 0))).toBe('unreadable')
    expect(completenessOf(withErrors(['KPJSON_SYNTAX'], 0))).toBe('unreadable')
    expect(completenessOf(withErrors(['KUBE_BAD_YAML'], 0))).toBe('unreadable')
  })

  it('a source that gave nothing beside one that was read: partial', () => {
    expect(completenessOf(withErrors(['INPUT_BINARY'], 2))).toBe('partial')
  })

  it('errors after which what was read would mislead: unreadable, services or not', () => {
    expect(completenessOf(withErrors(['IPVS_NOT_NUMERIC'], 3))).toBe('unreadable')
    expect(completenessOf(withErrors(['INPUT_SEVERAL_STATES'], 3))).toBe('unreadable')
  })

  it('a saved state marked incomplete stays incomplete', () => {
    const s = withErrors([])
    s.complete = false
    expect(completenessOf(s)).toBe('partial')
  })
})
