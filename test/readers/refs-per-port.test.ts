/**
 * ReadOptions.refsPerPort (kp migrate reads its input so): each service port keeps its first rule
 * references, in line order, and nothing else of the state changes; kp migrate's findings cite
 * the same evidence as from a full read.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {EVIDENCE_REFS_PER_PORT} from '../../src/analyze/findings.js'
import {planMigration} from '../../src/analyze/migrate.js'
import type {ProxyState} from '../../src/model/types.js'
import {readFiles} from '../../src/readers/read-state.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import {ROOT} from '../helpers/run-cli.js'

function inputs(format: string): string[] {
  return readdirSync(join(ROOT, 'fixtures', format), {withFileTypes: true}).flatMap((d) => {
    if (!d.isDirectory()) return []
    const input = readdirSync(join(ROOT, 'fixtures', format, d.name)).find((f) =>
      f.startsWith('input.'),
    )
    return input ? [join(ROOT, 'fixtures', format, d.name, input)] : []
  })
}

// The iptables reader makes only the refs it keeps; the others' lists are cut by readState.
const FILES = [...inputs('iptables'), ...inputs('nft'), join(ROOT, 'fixtures/ipvs/generated')]

const read = async (file: string, refsPerPort?: number): Promise<ProxyState> =>
  (await readFiles({files: [file], refsPerPort})).state

const cut = (s: ProxyState, keep: number): ProxyState => ({
  ...s,
  services: s.services.map((sp) => ({...sp, rules: sp.rules.slice(0, keep)})),
})

describe('refsPerPort reads (kp migrate)', () => {
  it.each([0, 1, 5])(
    'keep the first %i rule references of each service port and change nothing else',
    async (keep) => {
      let cutAway = 0
      for (const file of FILES) {
        const full = await read(file)
        const lean = await read(file, keep)
        expect(lean, file).toEqual(cut(full, keep))
        cutAway += full.services.reduce((n, sp) => n + Math.max(0, sp.rules.length - keep), 0)
      }
      // Lists longer than what is kept, so that keeping too many (or all) fails the comparison.
      expect(cutAway).toBeGreaterThan(100)
    },
  )

  it('give kp migrate the same findings, evidence included, as full reads', async () => {
    let withEvidence = 0
    for (const file of FILES) {
      const [full, lean] = await Promise.all([read(file), read(file, EVIDENCE_REFS_PER_PORT)])
      for (const to of ['nftables', 'iptables'] as const) {
        const findings = (s: ProxyState) => [
          ...planMigration(s, to),
          ...(to === 'nftables' ? renderNftables(s) : renderIptables(s)).findings,
        ]
        const expected = findings(full)
        expect(findings(lean), `${file} to ${to}`).toEqual(expected)
        withEvidence += expected.filter((f) => f.evidence.length >= EVIDENCE_REFS_PER_PORT).length
      }
    }
    // Findings that cite as many refs as are kept: citing one more would fail the comparison.
    expect(withEvidence).toBeGreaterThan(0)
  })
})
