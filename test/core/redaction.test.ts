/**
 * src/core/redaction.ts: the closed list of redaction placeholders (README "Partial and redacted
 * input"). Each spelling people use is one; an address, a damaged word or a chain name is not.
 */
import {describe, expect, it} from 'vitest'
import {isRedacted} from '../../src/core/redaction.js'

describe('isRedacted', () => {
  it.each([
    'x.x.x.x',
    'X.X.X.X',
    '10.x.x.x',
    '192.168.*.*',
    '10.0.XXX.1',
    'x.x.x.x/32',
    'xxxx:xxxx::x',
    'fd00::xxxx',
    '<IP>',
    '<node-ip>',
    '<pod ip>',
    '[REDACTED]',
    '{{ pod_ip }}',
    'REDACTED',
    'redacted',
    'redacted_ip',
    'IP-REDACTED',
    'HIDDEN',
    'masked',
    'ANONYMIZED',
    'XXX',
    'xxxx',
    '***',
    '****',
  ])('%s is a placeholder', (value) => {
    expect(isRedacted(value)).toBe(true)
  })

  it.each([
    '10.0.0.1',
    'fd00::1',
    '[fd00::1]',
    '10.180.0.3::80',
    '10.0.0.999x',
    'COMMIT',
    'KUBE-SVC-XPGD46QRK7WJZT7O',
    'x',
    '*',
    '',
    'x.x.x',
    '10.0.0.1/33/x',
    'deadbeef',
  ])('%s is not', (value) => {
    expect(isRedacted(value)).toBe(false)
  })
})
