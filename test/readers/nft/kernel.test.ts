/**
 * Real kernel: loads each upstream corpus ruleset into a network namespace this test creates, lists it
 * with the installed nft, and checks that what kp reads from the live listing equals the
 * stored fixture's model (so the fixtures are what nft really prints). Skips when not root
 * or without nft / ip netns.
 */
import {spawnSync} from 'node:child_process'
import {readdirSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {readState} from '../../../src/readers/read-state.js'
import {readFixture, readFixtureState, withoutPositions} from './corpus-shape.js'
import {ROOT} from '../../helpers/run-cli.js'
import {kernelUnavailable, skipEachWhen} from '../../live/netns.js'

const ns = `kpnfttest${process.pid}`
const run = (args: string[], input?: string) =>
  spawnSync(args[0]!, args.slice(1), {input, encoding: 'utf8'})
const skipReason = kernelUnavailable('test/readers/nft/kernel.test.ts')

/** The dump's lines grouped by object type, as fixtures/nft/PROVENANCE.md describes. */
function regroup(dump: string): string {
  const order = ['table', 'set', 'map', 'chain', 'rule', 'element']
  const groups = new Map<string, string[]>(order.map((k) => [k, []]))
  for (const line of dump.split('\n')) {
    const [verb, kind] = line.split(' ')
    if (verb === 'add' && kind !== undefined) groups.get(kind)?.push(line)
  }
  return order.flatMap((k) => groups.get(k)!).join('\n') + '\n'
}

const CASES = readdirSync(`${ROOT}fixtures/nft`)
  .filter((d) => d.startsWith('upstream-'))
  .sort()

describe('nft list from the kernel', () => {
  skipEachWhen(skipReason)
  it('covers every upstream nftables case', () => {
    expect(CASES.length).toBe(8)
  })

  it.each(CASES)(
    '%s: the live listing (text and -j) reads like the stored fixture and the transaction form',
    async (name) => {
      expect(run(['ip', 'netns', 'add', ns]).status).toBe(0)
      try {
        const load = run(
          ['ip', 'netns', 'exec', ns, 'nft', '-f', '-'],
          regroup(readFixture('nft', name, 'input.nft')),
        )
        expect(load.stderr).toBe('')
        const listed = run(['ip', 'netns', 'exec', ns, 'nft', 'list', 'table', 'ip', 'kube-proxy'])
        const json = run([
          'ip',
          'netns',
          'exec',
          ns,
          'nft',
          '-j',
          'list',
          'table',
          'ip',
          'kube-proxy',
        ])
        const live = await readState({sources: [{path: 'live.nft', text: listed.stdout}]})
        const liveJson = await readState({sources: [{path: 'live.json', text: json.stdout}]})
        const stored = withoutPositions(await readFixtureState(['nft', name, 'list.nft']))
        expect(withoutPositions(live)).toEqual(stored)
        expect(withoutPositions(liveJson)).toEqual(stored)
        // The transaction form kube-proxy's tests expect describes the same service ports (its
        // mark is spelled 0x4000 where nft prints 0x00004000, so only services are compared).
        const transaction = await readFixtureState(['nft', name, 'input.nft'])
        const services = (st: typeof live) => st.services.map((sp) => ({...sp, rules: []}))
        expect(services(live)).toEqual(services(transaction))
      } finally {
        run(['ip', 'netns', 'del', ns])
      }
    },
  )
})
