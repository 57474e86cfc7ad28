/**
 * kp trace reads only the rules a connection can reach (src/analyze/trace/focus.ts): on every
 * iptables fixture, the trace of each frontend from each kind of client is the same from the
 * focused read as from the full read. A rule the focus leaves out that the walk needed shows here.
 */
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {traceFocus} from '../../../src/analyze/trace/focus.js'
import {traceConnection} from '../../../src/analyze/trace/index.js'
import type {ClientKind, TracePacket} from '../../../src/analyze/trace/types.js'
import type {IptablesRuleset} from '../../../src/readers/iptables/ruleset.js'
import {readFiles} from '../../../src/readers/read-state.js'
import type {ReadFocus} from '../../../src/readers/types.js'
import {ROOT} from '../../helpers/run-cli.js'

const FIXTURES = readdirSync(join(ROOT, 'fixtures/iptables'))
  .map((d) => join(ROOT, 'fixtures/iptables', d, 'input.rules'))
  .filter((p) => existsSync(p))

async function trace(path: string, focus: ReadFocus | null, packet: TracePacket) {
  const rulesets: Array<{path: string; ruleset: IptablesRuleset}> = []
  const {state} = await readFiles({
    files: [path],
    ...(focus ? {focus} : {}),
    onParsed: (p) => {
      if (p.format === 'iptables-save')
        rulesets.push({path: p.source.path, ruleset: p.data as IptablesRuleset})
    },
  })
  return traceConnection({state, rulesets, nftDocuments: [], nodeIps: [], packet})
}

describe('kp trace: the focused read walks as the full read does', () => {
  it('finds the fixtures', () => expect(FIXTURES.length).toBeGreaterThan(10))

  for (const path of FIXTURES) {
    it(path.slice(ROOT.length), async () => {
      const {state} = await readFiles({files: [path]})
      if (state.mode !== 'iptables') return
      const destinations = new Set<string>()
      for (const sp of state.services)
        for (const f of sp.frontends)
          if (f.port !== null) destinations.add(JSON.stringify([f.ip, f.port, sp.protocol]))
      let compared = 0
      for (const d of destinations) {
        const [ip, port, protocol] = JSON.parse(d) as [
          string | null,
          number,
          TracePacket['protocol'],
        ]
        const focus = traceFocus({by: 'address', text: '', ip, port, protocol})
        expect(focus).not.toBeNull()
        for (const from of ['pod', 'node', 'external'] as ClientKind[]) {
          const packet = {from, source: null, destination: ip, port, protocol}
          const full = await trace(path, null, packet)
          const focused = await trace(path, focus, packet)
          expect(focused.outcomes, `${ip}:${port}/${protocol} from ${from}`).toEqual(full.outcomes)
          compared++
        }
      }
      expect(compared).toBeGreaterThan(0)
    })
  }
})
