/**
 * `iptables -L` listings from the kernel (issue 21 §3): kube-proxy layouts of the iptables
 * fixtures are loaded into a network namespace (nf_tables and legacy backends), listed with each
 * flag combination, and read: the listing must give the service ports (frontends, endpoints,
 * shares, policies) and node settings of the namespace's own iptables-save, and each listed rule
 * must translate back to the line iptables-save prints for it.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../src/model/types.js'
import {parse} from '../../src/readers/iptables-list/parse.js'
import type {IptablesRuleset} from '../../src/readers/iptables/ruleset.js'
import {readState} from '../../src/readers/read-state.js'
import {ROOT} from '../helpers/run-cli.js'
import {addKubeProxyNfacctCounters, kernelUnavailable, Netns, skipEachWhen} from './netns.js'

const skipReason = kernelUnavailable('test/live/iptables-list.test.ts', [
  'ip',
  'iptables',
  'iptables-save',
  'iptables-restore',
  'iptables-legacy',
  'iptables-legacy-save',
  'iptables-legacy-restore',
  'ip6tables',
  'ip6tables-save',
  'ip6tables-restore',
  'nfacct',
])

const CASES = [
  {dump: 'realsave-overall', tool: 'iptables'},
  {dump: 'realsave-overall', tool: 'iptables-legacy'},
  {dump: 'legacy-k8s-1.1', tool: 'iptables'},
  {dump: 'handmade-node-with-cni', tool: 'iptables'},
  {dump: 'realsave-handmade-ipv6', tool: 'ip6tables'},
] as const

/** The flag combinations of the issue, each listing nat and then filter into one text. */
const FLAGS = [
  ['-n', '-v'],
  ['-n', '-v', '-x'],
  ['-n', '-v', '--line-numbers'],
  ['-n', '-v', '-x', '--line-numbers'],
]

const read = (path: string, text: string) => readState({sources: [{path, text}]})
const withoutRules = (s: ProxyState) => s.services.map(({rules: _rules, ...rest}) => rest)

/** A save's rule lines as the translation writes them: no counters, one blank between words, no /32 or /128. */
function saveRules(save: string): string[] {
  return save
    .split('\n')
    .filter((l) => l.startsWith('-A '))
    .map((l) => l.replace(/\/(32|128)\b/g, '').replace(/ +/g, ' '))
}

describe('iptables -L listings of kube-proxy layouts loaded into the kernel', () => {
  skipEachWhen(skipReason)
  for (const {dump, tool} of CASES) {
    it(`${dump} with ${tool}: each listing reads as the save`, async () => {
      const text = readFileSync(join(ROOT, 'fixtures/iptables', dump, 'input.rules'), 'utf8')
      const ns = new Netns()
      try {
        addKubeProxyNfacctCounters(ns)
        ns.run([`${tool}-restore`], text)
        const save = ns.run([`${tool}-save`])
        const saved = await read('save.rules', save)
        for (const flags of FLAGS) {
          const listing = ['nat', 'filter']
            .map((table) => ns.run([tool, '-t', table, '-L', ...flags]))
            .join('\n')
          const label = `${tool} -L ${flags.join(' ')}`
          const state = await read('list.txt', listing)
          expect(state.sources[0]!.format, label).toBe('iptables-list')
          expect(withoutRules(state), label).toEqual(withoutRules(saved))
          expect(state.node, label).toEqual(saved.node)
          expect(
            state.diagnostics.filter((d) => d.severity !== 'info'),
            label,
          ).toEqual(saved.diagnostics.filter((d) => d.severity !== 'info'))
          const ruleset = parse({path: 'list.txt', text: listing}).data as IptablesRuleset
          expect(
            ruleset.rules.map((r) => r.text.replace(/\/(32|128)\b/g, '')).sort(),
            label,
          ).toEqual(saveRules(save).sort())
        }
      } finally {
        ns.delete()
      }
    })
  }
})
