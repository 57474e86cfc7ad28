import {describe, expect, it} from 'vitest'
import {runFleet} from '../../../src/live/fleet/runner.js'
import {InputError} from '../../../src/errors.js'

const nodes = (n: number) => Array.from({length: n}, (_, i) => ({name: `node-${i}`}))
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(t)
      reject(new Error('aborted'))
    })
  })

describe('runFleet', () => {
  it('runs at most `parallel` nodes at once and keeps the nodes in order', async () => {
    let running = 0
    let most = 0
    const run = await runFleet(
      nodes(10),
      async (n) => {
        running++
        most = Math.max(most, running)
        await sleep(10)
        running--
        return n.name.toUpperCase()
      },
      {parallel: 3, timeoutMs: 5000},
    )
    expect(most).toBe(3)
    expect(run.interrupted).toBe(false)
    expect(run.outcomes.map((o) => (o.ok ? o.value : null))).toEqual(
      nodes(10).map((n) => n.name.toUpperCase()),
    )
  })

  it("one node's failure or timeout is its outcome; the others are answered", async () => {
    const events: string[] = []
    const run = await runFleet(
      nodes(4),
      async (n, signal) => {
        if (n.name === 'node-1') throw new InputError('bad bundle', 'INPUT_UNREADABLE')
        if (n.name === 'node-2') await sleep(10_000, signal)
        return 1
      },
      {parallel: 4, timeoutMs: 100, onEvent: (e) => events.push(`${e.kind} ${e.node}`)},
    )
    expect(run.outcomes.map((o) => (o.ok ? 'ok' : o.code))).toEqual([
      'ok',
      'INPUT_UNREADABLE',
      'LIVE_TIMEOUT',
      'ok',
    ])
    const timedOut = run.outcomes[2]!
    expect(!timedOut.ok && timedOut.error).toMatch(/timed out/)
    expect(events).toContain('failed node-2')
    expect(events.filter((e) => e.startsWith('start'))).toHaveLength(4)
  })

  it('stops on abort: no node starts after, running ones are told to stop and may clean up', async () => {
    const controller = new AbortController()
    const started: string[] = []
    const cleaned: string[] = []
    const run = await runFleet(
      nodes(10),
      async (n, signal) => {
        started.push(n.name)
        if (started.length === 2) setTimeout(() => controller.abort(), 20)
        try {
          await sleep(10_000, signal)
        } finally {
          await sleep(20)
          cleaned.push(n.name)
        }
      },
      {parallel: 2, timeoutMs: 60_000, signal: controller.signal},
    )
    expect(run.interrupted).toBe(true)
    expect(started.length).toBeLessThan(10)
    // The runner waited for the stopped nodes to clean up before returning.
    expect(cleaned.sort()).toEqual([...started].sort())
    expect(run.outcomes.filter((o) => !o.ok && o.code === 'LIVE_INTERRUPTED').length).toBe(2)
  })
})
