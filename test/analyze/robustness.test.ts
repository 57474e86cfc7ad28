/**
 * Bad input never crashes a command, not only a reader (test/readers/robustness.ts checks those):
 * the states read from mutated real dumps go through everything the commands do with a state —
 * the list table, explain and its view, the migration findings and all three renderers, diff and
 * its view — and nothing may throw. A fixed seed per input, so a failing round can be replayed
 * from its label.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import {explainService} from '../../src/analyze/explain.js'
import {parseServiceQuery} from '../../src/analyze/explain-query.js'
import {planMigration} from '../../src/analyze/migrate.js'
import {formatDiff} from '../../src/cli/views/diff.js'
import {renderExplain} from '../../src/cli/views/explain.js'
import {renderServiceList} from '../../src/cli/views/list.js'
import {formatFindings} from '../../src/cli/views/migrate.js'
import {plainStyle} from '../../src/cli/views/style.js'
import {displayName} from '../../src/core/state.js'
import type {ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import type {ReadOptions, SourceText} from '../../src/readers/types.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderIpvs} from '../../src/render/ipvs/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'
import {ROOT} from '../helpers/run-cli.js'
import {COMMON_NOISE, mutate, mutateJson, prng} from '../readers/robustness.js'

const NOISE = [
  ...COMMON_NOISE,
  '-A KUBE-SERVICES ',
  ' -j KUBE-SEP-',
  ' --probability 0.5',
  ' -m statistic --mode random',
  ' -p tcp',
  ' --dport 0',
  ' -d 10.0.0.1/32',
  'vmap {',
  ' goto endpoint-',
  ' dnat to ',
  ' : ',
  '/',
  '::1',
  '0x4000',
  'KUBE-',
  'TCP',
  '->',
  'Masq',
  ' rr ',
  ' sh ',
  '{',
  '}',
]

/** Everything a command does with a state once it is read; throws if any of it does. */
function useAsCommandsDo(state: ProxyState, original: ProxyState): void {
  renderServiceList(state, {wide: true, total: state.services.length, style: plainStyle})
  for (const to of ['nftables', 'iptables', 'ipvs'] as const)
    formatFindings(planMigration(state, to), {color: false})
  renderNftables(state)
  renderIptables(state)
  renderIpvs(state)
  formatDiff(diffStates(original, state), {color: false})
  for (const sp of state.services.slice(0, 3)) {
    const query = parseServiceQuery(displayName(sp))
    if ('invalid' in query) continue
    const result = explainService(state, query)
    if (result.kind === 'ExplainResult')
      renderExplain(result, {rules: true, ruleText: () => [], style: plainStyle})
  }
}

const INPUTS: Array<{files: string[]; opts?: ReadOptions}> = [
  {files: ['fixtures/iptables/upstream-overall/input.rules']},
  {files: ['fixtures/nft/upstream-overall/list.nft']},
  {files: ['fixtures/nft-json/newest-inline-dnat/input.json']},
  {
    files: [
      'fixtures/ipvs/generated/ipvsadm-Ln.txt',
      'fixtures/ipvs/generated/ipset-save.ipvs-mode.txt',
      'fixtures/ipvs/generated/iptables-save.ipvs-mode.nft-backend.txt',
    ],
  },
  {files: ['fixtures/kube/iptables-overall/cluster.yaml'], opts: {node: 'node1'}},
  {files: ['fixtures/kp-json/overall/state.json']},
]

describe('states read from mutated dumps go through every analysis and view without throwing', () => {
  for (const input of INPUTS) {
    it(input.files.join(' + '), async () => {
      const texts = input.files.map((f) => readFileSync(`${ROOT}${f}`, 'utf8'))
      const sourcesWith = (i: number, text: string): SourceText[] =>
        texts.map((t, k) => ({path: input.files[k]!, text: k === i ? text : t}))
      const original = await readState({sources: sourcesWith(-1, '')}, input.opts)
      expect(original.services.length, 'the unmutated input has services to use').toBeGreaterThan(0)
      const rnd = prng(0x6b70 + texts[0]!.length)
      const failures: string[] = []
      for (let round = 0; round < 40; round++) {
        const i = Math.floor(rnd() * texts.length)
        const text = texts[i]!
        const mutated =
          /^\s*[[{]/.test(text) && rnd() < 0.5 ? mutateJson(text, rnd) : mutate(text, rnd, NOISE)
        const state = await readState({sources: sourcesWith(i, mutated)}, input.opts)
        try {
          useAsCommandsDo(state, original)
        } catch (error) {
          failures.push(
            `round ${round} (${input.files[i]}): ${error instanceof Error ? error.stack : String(error)}`,
          )
        }
      }
      expect(failures).toEqual([])
    })
  }
})
