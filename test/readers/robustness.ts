/**
 * Shared by the per-format robustness tests (test/readers/<format>/robustness.test.ts): a
 * fixed-seed PRNG, mutations of real dumps, and the checks every mutated read must pass.
 * Readers never throw on bad input (docs/architecture.md); an error is one line at a real `path:line`
 * (src/errors.ts EXIT, exit 3); shares stay probabilities and ports stay ports (docs/model.md).
 * Modelled on test/readers/iptables/robustness.test.ts.
 */
import {readFileSync} from 'node:fs'
import {expect} from 'vitest'
import type {ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import type {FormatId, ReadOptions, SourceText} from '../../src/readers/types.js'
import {ROOT} from '../helpers/run-cli.js'

/** mulberry32: a small deterministic PRNG, so a failure can be replayed. */
export function prng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Noise every format gets: quotes, control characters, odd numbers, a very long token. */
export const COMMON_NOISE = [
  '"',
  "'",
  '\\',
  ' ',
  '\t',
  '\u0000',
  '\r',
  '\n',
  'é',
  '\u2028',
  '😀',
  'x'.repeat(3000),
  '-',
  ':',
  '#',
  '-1',
  '99999999999999999999',
  'NaN',
  '1e309',
]

const pick = <T>(list: readonly T[], rnd: () => number): T => list[Math.floor(rnd() * list.length)]!

/** Text mutations: cut, delete a span, insert a noise token, swap two lines, duplicate a line. */
export function mutate(text: string, rnd: () => number, noise: readonly string[]): string {
  let out = text
  const edits = 1 + Math.floor(rnd() * 4)
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rnd() * out.length)
    const kind = Math.floor(rnd() * 5)
    if (kind === 0)
      out = out.slice(0, at) // cut
    else if (kind === 1)
      out = out.slice(0, at) + out.slice(at + 1 + Math.floor(rnd() * 40)) // delete
    else if (kind === 2)
      out = out.slice(0, at) + pick(noise, rnd) + out.slice(at) // insert
    else {
      const lines = out.split('\n')
      const i = Math.floor(rnd() * lines.length)
      const j = Math.floor(rnd() * lines.length)
      if (kind === 3)
        [lines[i], lines[j]] = [lines[j]!, lines[i]!] // swap two lines
      else lines.splice(j, 0, lines[i]!) // duplicate a line elsewhere
      out = lines.join('\n')
    }
  }
  return out
}

/** What a mutated JSON value may become: wrong types, null, huge numbers, deep nesting. */
function wrongValue(rnd: () => number): unknown {
  switch (Math.floor(rnd() * 11)) {
    case 0:
      return null
    case 1:
      return rnd() < 0.5 ? 1e308 : -1e308
    case 2:
      return -1
    case 3:
      return 70000
    case 4:
      return 0.5
    case 5:
      return 'x\ny'
    case 6:
      return {}
    case 7:
      return [null]
    case 8:
      return {toString: 1}
    case 9: {
      let deep: unknown = 1
      for (let i = 0; i < 6000; i++) deep = rnd() < 0.5 ? [deep] : {elem: {val: deep}}
      return deep
    }
    default:
      return true
  }
}

/** Structure-aware mutation of JSON text: a few members deleted, duplicated or given a wrong value. */
export function mutateJson(text: string, rnd: () => number): string {
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch {
    return mutate(text, rnd, COMMON_NOISE)
  }
  const slots: Array<[Record<string | number, unknown>, string | number]> = []
  const walk = (x: unknown): void => {
    if (typeof x !== 'object' || x === null) return
    for (const k of Object.keys(x)) {
      slots.push([x as Record<string, unknown>, Array.isArray(x) ? Number(k) : k])
      walk((x as Record<string, unknown>)[k])
    }
  }
  walk(root)
  const edits = 1 + Math.floor(rnd() * 3)
  for (let e = 0; e < edits && slots.length > 0; e++) {
    const [parent, key] = pick(slots, rnd)
    const op = Math.floor(rnd() * 3)
    if (op === 0 && !Array.isArray(parent)) delete parent[key]
    else if (op === 1 && Array.isArray(parent))
      parent.splice(key as number, 0, parent[key as number])
    else parent[key] = wrongValue(rnd)
  }
  let out: string
  try {
    out = JSON.stringify(root)
  } catch {
    return text // nested past JSON.stringify's stack: keep the round, unmutated
  }
  // A repeated member name, which JSON.parse accepts (the last one wins).
  if (rnd() < 0.2) out = out.replace(/\{"/, '{"kind":"dup","')
  return out
}

/**
 * The contract every read of bad input keeps: (a) the caller got a state (no throw: awaited by
 * the caller); (c) every error is one line at a line of one of the inputs; (d) every share is a
 * probability and every port a port. `label` says which round failed, so it can be replayed.
 */
export function expectSane(
  state: ProxyState,
  inputs: Array<{path: string; text: string}>,
  label: string,
): void {
  expect(state.kind, label).toBe('ProxyState')
  const lineCounts = new Map(inputs.map((s) => [s.path, s.text.split('\n').length]))
  for (const d of state.diagnostics) {
    if (d.severity !== 'error') continue
    expect(d.message, `${label}: ${d.code}`).not.toMatch(/\n/)
    expect(d.source, `${label}: ${d.code} ${d.message}`).not.toBeNull()
    const lines = lineCounts.get(d.source!.path)
    expect(lines, `${label}: ${d.code} at ${d.source!.path}`).toBeDefined()
    expect(
      Number.isInteger(d.source!.line) && d.source!.line >= 1 && d.source!.line <= lines!,
      `${label}: ${d.code} at line ${d.source!.line} of ${lines}`,
    ).toBe(true)
  }
  const isPort = (p: number | null) => p === null || (Number.isInteger(p) && p >= 0 && p <= 65535)
  for (const sp of state.services) {
    for (const f of sp.frontends)
      expect(isPort(f.port), `${label}: frontend port ${f.port}`).toBe(true)
    for (const e of sp.endpoints) {
      expect(isPort(e.port), `${label}: endpoint port ${e.port}`).toBe(true)
      expect(e.share === null || (e.share >= 0 && e.share <= 1), `${label}: share ${e.share}`).toBe(
        true,
      )
    }
  }
  expect(() => JSON.stringify(state), label).not.toThrow()
}

export interface MutationRun {
  /** The sources of one node, as `-f` gives them; fixture paths are relative to the checkout. */
  files: string[]
  /** Which of `files` get mutated (one per round); default: all. */
  mutable?: number[]
  /** The format the mutated file is forced to in every other round (the rest are sniffed). */
  format?: FormatId
  noise: readonly string[]
  rounds: number
  seed?: number
  opts?: ReadOptions
}

/** Reads `rounds` mutations of the files through readState and checks each with expectSane. */
export async function mutatedReads(run: MutationRun): Promise<void> {
  const texts = run.files.map((f) => readFileSync(`${ROOT}${f}`, 'utf8'))
  const mutable = run.mutable ?? texts.map((_, i) => i)
  const rnd = prng(run.seed ?? 0x6b70)
  for (let round = 0; round < run.rounds; round++) {
    const i = mutable[Math.floor(rnd() * mutable.length)]!
    const original = texts[i]!
    const mutated =
      /^\s*[[{]/.test(original) && rnd() < 0.5
        ? mutateJson(original, rnd)
        : mutate(original, rnd, run.noise)
    const sources: SourceText[] = texts.map((text, k) => ({
      path: `in${k}`,
      text: k === i ? mutated : text,
    }))
    const format = round % 2 === 1 && run.files.length === 1 ? run.format : undefined
    const state = await readState({sources, format}, run.opts)
    expectSane(state, sources, `${run.files[i]} round ${round}${format ? ` as ${format}` : ''}`)
  }
}
