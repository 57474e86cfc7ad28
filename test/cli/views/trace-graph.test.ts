/**
 * -o dot / -o mermaid quote what comes from a dump (chain names, comments, paths): a quote, a
 * backslash, a newline or `<`/`>` in a name must stay inside its label, never end it.
 */
import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import type {TraceResult} from '../../../src/analyze/trace/index.js'
import {renderTraceGraph} from '../../../src/cli/views/trace-graph.js'

const NASTY = 'KUBE-SVC-"x\\"];n9 -> n9; <b>\nevil'

const result: TraceResult = {
  kind: 'Trace',
  mode: 'iptables',
  packet: {from: 'pod', source: null, destination: '10.0.0.1', port: 80, protocol: 'TCP'},
  title: 'TCP from a pod to 10.0.0.1:80',
  assumed: [],
  unsupported: null,
  outcomes: [
    {
      conditions: [],
      probability: 1,
      verdict: 'rejected',
      dnat: null,
      masquerade: false,
      reason: `no endpoints for "${NASTY}"`,
      steps: [
        {
          table: 'nat',
          chain: NASTY,
          rule: {source: {path: 'a "b".rules', line: 3}, text: ''},
          note: `jump to ${NASTY}`,
        },
      ],
    },
  ],
}

describe('trace graphs quote names from the dump', () => {
  it('dot: every label is one DOT string; Graphviz draws exactly three nodes', () => {
    const dot = renderTraceGraph(result, 'dot')
    expect(dot).not.toContain('\nevil')
    if (spawnSync('dot', ['-V']).status !== 0) return
    // -Tplain lists nodes as `node NAME ...`: an injected `n9` would be a fourth.
    const plain = spawnSync('dot', ['-Tplain'], {input: dot, encoding: 'utf8'})
    expect(plain.status, plain.stderr).toBe(0)
    expect(plain.stdout.split('\n').filter((l) => l.startsWith('node ')).length).toBe(3)
  })

  it('mermaid: quotes and angle brackets are entities, one line per node', () => {
    const text = renderTraceGraph(result, 'mermaid')
    expect(text).toContain('#quot;')
    expect(text).toContain('#lt;b#gt;')
    const lines = text.split('\n')
    expect(lines).toHaveLength(6)
    for (const line of lines.slice(1, 4)) expect(line).toMatch(/^ {2}n\d+[[(]"[^"]*"[\])]$/)
  })
})
