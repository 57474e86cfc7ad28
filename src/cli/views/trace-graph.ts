/**
 * `kp trace -o dot` and `-o mermaid`: the paths of a TraceResult as one picture. A node is a
 * rule the connection went through (table, chain, path:line, what it did) or a final verdict;
 * an edge carries the chance of the connections that take it. Outcomes under different
 * conditions are alternatives, not odds: each set of conditions is a box of its own.
 */
import {formatShare} from '../../analyze/addresses.js'
import type {TraceOutcome, TraceResult, TraceStep} from '../../analyze/trace/index.js'
import {escapeControl} from '../escape.js'

export type GraphFormat = 'dot' | 'mermaid'

interface Graph {
  /** "If …" of the group; '' when the outcomes need no condition. */
  title: string
  nodes: Map<string, {id: string; label: string[]; end: boolean}>
  /** "from→to" → summed chance. */
  edges: Map<string, {from: string; to: string; chance: number}>
}

function stepLabel(s: TraceStep): string[] {
  const where = s.rule ? `${s.rule.source.path}:${s.rule.source.line}` : '(assumed)'
  return [`${s.table} ${s.chain}`, where, s.note]
}

function verdictLabel(o: TraceOutcome): string[] {
  const nat = o.masquerade ? 'source masqueraded' : 'source kept'
  switch (o.verdict) {
    case 'forwarded':
      return o.dnat === null ? ['forwarded unchanged', nat] : [`forwarded to ${o.dnat}`, nat]
    case 'delivered':
      return ['delivered to this node']
    default:
      return [o.verdict, o.reason ?? '']
  }
}

/** The groups of outcomes (by their conditions) as graphs, their node ids unique over all. */
function graphsOf(result: TraceResult): Graph[] {
  const groups = new Map<string, TraceOutcome[]>()
  for (const o of result.outcomes) {
    const key = o.conditions.join(', and ')
    groups.set(key, [...(groups.get(key) ?? []), o])
  }
  let next = 0
  const start = 'start'
  return [...groups].map(([key, outcomes]) => {
    const g: Graph = {title: key === '' ? '' : `If ${key}`, nodes: new Map(), edges: new Map()}
    const node = (key: string, label: string[], end: boolean): string => {
      let n = g.nodes.get(key)
      if (!n) g.nodes.set(key, (n = {id: `n${next++}`, label, end}))
      return n.id
    }
    const first = node(start, [result.title], false)
    for (const o of outcomes) {
      let at = first
      for (const s of o.steps) {
        const label = stepLabel(s)
        const to = node(`step ${label.join('\n')}`, label, false)
        addEdge(g, at, to, o.probability)
        at = to
      }
      const label = verdictLabel(o)
      addEdge(g, at, node(`end ${label.join('\n')}`, label, true), o.probability)
    }
    return g
  })
}

function addEdge(g: Graph, from: string, to: string, chance: number): void {
  const key = `${from}→${to}`
  const e = g.edges.get(key)
  if (e) e.chance += chance
  else g.edges.set(key, {from, to, chance})
}

/** A DOT string: quotes and backslashes escaped, lines joined with DOT's `\n`. */
function dotString(lines: string[]): string {
  return `"${lines.map((l) => escapeControl(l).replace(/["\\]/g, (c) => `\\${c}`)).join('\\n')}"`
}

/** Mermaid text in quotes: its own entity for `"`, `<br>` between lines, `<` `>` as entities. */
function mermaidString(lines: string[]): string {
  const esc = (l: string) =>
    escapeControl(l)
      .replace(/&/g, '#amp;')
      .replace(/"/g, '#quot;')
      .replace(/</g, '#lt;')
      .replace(/>/g, '#gt;')
  return `"${lines.map(esc).join('<br>')}"`
}

/** An edge's label: the chance, shown only when it is not every connection. */
const chanceLabel = (chance: number): string | null =>
  chance > 0.9999995 ? null : formatShare(chance)

export function renderTraceGraph(result: TraceResult, format: GraphFormat): string {
  const graphs = graphsOf(result)
  const boxed = graphs.length > 1 || graphs.some((g) => g.title !== '')
  const out: string[] = []
  if (format === 'dot') {
    out.push('digraph trace {', '  rankdir=TB;', '  node [shape=box, fontname="monospace"];')
    out.push(`  label=${dotString([`${result.title} (${result.mode} mode)`])}; labelloc=t;`)
    graphs.forEach((g, i) => {
      const pad = boxed ? '    ' : '  '
      if (boxed) out.push(`  subgraph cluster_${i} {`, `    label=${dotString([g.title])};`)
      for (const n of g.nodes.values())
        out.push(`${pad}${n.id} [label=${dotString(n.label)}${n.end ? ', style=bold' : ''}];`)
      for (const e of g.edges.values()) {
        const label = chanceLabel(e.chance)
        out.push(`${pad}${e.from} -> ${e.to}${label ? ` [label=${dotString([label])}]` : ''};`)
      }
      if (boxed) out.push('  }')
    })
    out.push('}')
  } else {
    out.push('flowchart TD')
    graphs.forEach((g, i) => {
      const pad = boxed ? '    ' : '  '
      if (boxed) out.push(`  subgraph g${i} [${mermaidString([g.title || 'In every case'])}]`)
      for (const n of g.nodes.values())
        out.push(
          `${pad}${n.id}${n.end ? `(${mermaidString(n.label)})` : `[${mermaidString(n.label)}]`}`,
        )
      for (const e of g.edges.values()) {
        const label = chanceLabel(e.chance)
        out.push(`${pad}${e.from} -->${label ? `|${mermaidString([label])}|` : ''} ${e.to}`)
      }
      if (boxed) out.push('  end')
    })
  }
  return out.join('\n')
}
