/**
 * Readers never throw on bad input (DESIGN §1): a fixed-seed run of mutated real dumps through
 * both stages. Each mutation must give a state (maybe with diagnostics), never an exception.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {buildIptablesState} from '../../../src/readers/iptables/build.js'
import {parse} from '../../../src/readers/iptables/parse.js'

/** mulberry32: a small deterministic PRNG, so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const NOISE = ['"', '\\', '!', ' ', '-j', '-A', '*nat', 'COMMIT', ':', '[1:2]', '\u0000', '\r', '\n', 'KUBE-SEP-', '--probability', '-X KUBE-SVC-']

function mutate(text: string, rnd: () => number): string {
  let out = text
  const edits = 1 + Math.floor(rnd() * 4)
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rnd() * out.length)
    const kind = Math.floor(rnd() * 4)
    if (kind === 0) out = out.slice(0, at) // cut
    else if (kind === 1) out = out.slice(0, at) + out.slice(at + 1 + Math.floor(rnd() * 40)) // delete
    else if (kind === 2) out = out.slice(0, at) + NOISE[Math.floor(rnd() * NOISE.length)]! + out.slice(at) // insert
    else {
      // swap two lines
      const lines = out.split('\n')
      const i = Math.floor(rnd() * lines.length)
      const j = Math.floor(rnd() * lines.length)
      ;[lines[i], lines[j]] = [lines[j]!, lines[i]!]
      out = lines.join('\n')
    }
  }
  return out
}

describe('mutated dumps never make the reader throw', () => {
  for (const fixture of ['realsave-overall', 'upstream-overall', 'handmade-ipv6', 'handmade-legacy-xlb']) {
    it(fixture, () => {
      const text = readFileSync(`fixtures/iptables/${fixture}/input.rules`, 'utf8')
      const rnd = prng(0x6b70)
      for (let round = 0; round < 100; round++) {
        const mutated = mutate(text, rnd)
        const state = buildIptablesState([parse({path: 'm', text: mutated})], {})
        expect(state.mode).toBe('iptables')
        for (const sp of state.services) for (const e of sp.endpoints) expect(e.share === null || (e.share >= 0 && e.share <= 1)).toBe(true)
      }
    })
  }
})
