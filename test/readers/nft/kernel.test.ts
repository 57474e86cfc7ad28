/**
 * Real kernel: loads a corpus ruleset into a network namespace this test creates, lists it
 * with the installed nft, and checks that what kp reads from the live listing equals the
 * stored fixture's model (so the fixtures are what nft really prints). Skips when not root
 * or without nft / ip netns.
 */
import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {readState} from '../../../src/readers/read-state.js'
import {readFixture, readFixtureState, withoutPositions} from './corpus-shape.js'

const ns = `kpnfttest${process.pid}`
const run = (args: string[], input?: string) => spawnSync(args[0]!, args.slice(1), {input, encoding: 'utf8'})
const canRun = process.getuid?.() === 0 && run(['nft', '--version']).status === 0 && run(['ip', 'netns', 'list']).status === 0

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

describe.skipIf(!canRun)('nft list from the kernel', () => {
  it('upstream-overall: the live listing reads like the stored fixture', async () => {
    expect(run(['ip', 'netns', 'add', ns]).status).toBe(0)
    try {
      const load = run(['ip', 'netns', 'exec', ns, 'nft', '-f', '-'], regroup(readFixture('nft', 'upstream-overall', 'input.nft')))
      expect(load.stderr).toBe('')
      const listed = run(['ip', 'netns', 'exec', ns, 'nft', 'list', 'table', 'ip', 'kube-proxy'])
      const json = run(['ip', 'netns', 'exec', ns, 'nft', '-j', 'list', 'table', 'ip', 'kube-proxy'])
      const live = await readState({sources: [{path: 'live.nft', text: listed.stdout}]})
      const liveJson = await readState({sources: [{path: 'live.json', text: json.stdout}]})
      const stored = withoutPositions(await readFixtureState(['nft', 'upstream-overall', 'list.nft']))
      expect(withoutPositions(live)).toEqual(stored)
      expect(withoutPositions(liveJson)).toEqual(stored)
    } finally {
      run(['ip', 'netns', 'del', ns])
    }
  })
})
if (!canRun) process.stderr.write('test/readers/nft/kernel.test.ts: skipped (needs root, nft and ip netns)\n')
