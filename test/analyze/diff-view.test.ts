import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import {formatDiff} from '../../src/cli/views/diff.js'
import {emptyState} from '../../src/core/state.js'

describe('formatDiff (the human view of kp diff)', () => {
  const a = emptyState('iptables')
  const b = emptyState('nftables')
  a.node.nodePortAddresses = []
  b.node.nodePortAddresses = ['192.168.0.2']
  a.sources.push({path: 'a\u001b[31m.rules', format: 'iptables-save', tool: null})
  const result = diffStates(a, b)

  it('says what an empty nodePortAddresses means, and escapes control characters from the input', () => {
    const text = formatDiff(result, {color: false})
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        '  - nodePortAddresses: (every local address)',
        '  + nodePortAddresses: 192.168.0.2',
        '--- a: iptables mode, from a\\x1b[31m.rules',
      ]),
    )
    expect(text).not.toContain('\u001b')
  })

  it('colour is only an extra: the -/+ signs stay', () => {
    const text = formatDiff(result, {color: true})
    expect(text).toContain('\u001b[')
    expect(text.replace(/\u001b\[[0-9;]*m/g, '')).toBe(formatDiff(result, {color: false}))
  })
})
