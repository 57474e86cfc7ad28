/**
 * ReadOptions.servicesOnly (kp diff reads both of its states so): the iptables reader leaves
 * out the rule references and the foreign objects, which nothing compares, and gives the same
 * service ports, node settings and diagnostics otherwise; a diff of such states is the diff of
 * full ones.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import type {ProxyState} from '../../src/model/types.js'
import {readFiles} from '../../src/readers/read-state.js'
import {ROOT} from '../helpers/run-cli.js'

const IPT_FIXTURES = readdirSync(join(ROOT, 'fixtures/iptables'), {withFileTypes: true})
  .filter((d) => d.isDirectory())
  .map((d) => join(ROOT, 'fixtures/iptables', d.name, 'input.rules'))

const read = async (file: string, servicesOnly: boolean): Promise<ProxyState> =>
  (await readFiles({files: [file], servicesOnly})).state

/** The state without what servicesOnly leaves out. */
const withoutRulesAndForeign = (s: ProxyState): ProxyState => ({
  ...s,
  foreign: [],
  services: s.services.map((sp) => ({...sp, rules: []})),
})

describe('servicesOnly reads (kp diff)', () => {
  it('give every iptables fixture the same state but for rule references and foreign objects', async () => {
    let refs = 0
    let foreign = 0
    for (const file of IPT_FIXTURES) {
      const [full, lean] = await Promise.all([read(file, false), read(file, true)])
      expect(lean, file).toEqual(withoutRulesAndForeign(full))
      expect(lean.services.every((sp) => sp.rules.length === 0)).toBe(true)
      refs += full.services.reduce((n, sp) => n + sp.rules.length, 0)
      foreign += full.foreign.length
    }
    // The full reads have what the lean ones leave out, so the comparison above can fail.
    expect(refs).toBeGreaterThan(100)
    expect(foreign).toBeGreaterThan(0)
  })

  it('give the same diff as full reads, for every pair of iptables fixtures', async () => {
    const files = IPT_FIXTURES.slice(0, 8)
    const full = await Promise.all(files.map((f) => read(f, false)))
    const lean = await Promise.all(files.map((f) => read(f, true)))
    let differing = 0
    for (let i = 0; i < files.length; i++) {
      for (let j = 0; j < files.length; j++) {
        const expected = diffStates(full[i]!, full[j]!)
        expect(diffStates(lean[i]!, lean[j]!), `${files[i]} vs ${files[j]}`).toEqual(expected)
        if (!expected.equal) differing++
      }
    }
    expect(differing).toBeGreaterThan(10)
  })
})
