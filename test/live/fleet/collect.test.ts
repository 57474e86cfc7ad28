/**
 * collectFleet with stand-in node collectors (the real ones read nodes through kubectl, which
 * needs a cluster): they write files slowly, fail, or hang, so what is left on disk can be checked.
 */
import {existsSync, mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {mkdir, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {type NodeCollector, collectFleet} from '../../../src/live/fleet/collect.js'
import {readFleetIndex} from '../../../src/readers/fleet.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'kp-fleet-collect-'))
  dirs.push(d)
  return d
}

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(t)
      reject(signal.reason)
    })
  })

/** A stand-in collector: writes one file, waits `ms`, writes a second; fails when told to. */
function standIn(name: string, ms: number, fail = false): NodeCollector {
  return {
    name,
    async collect(dir, signal) {
      await mkdir(dir, {recursive: true})
      await writeFile(join(dir, 'iptables-save.txt'), '*nat\nCOMMIT\n')
      await wait(ms, signal)
      if (fail) throw new Error('kubectl exec: pod not found')
      await writeFile(join(dir, 'manifest.json'), '{}')
    },
  }
}

const opts = (outDir: string, over = {}) => ({
  outDir,
  parallel: 3,
  nodeTimeoutMs: 5000,
  createdBy: 'kp/test',
  selector: null,
  ...over,
})

describe('collectFleet', () => {
  it('writes one folder per node and a fleet.json that --fleet reads back', async () => {
    const out = join(tmp(), 'fleet')
    const r = await collectFleet(
      [standIn('node-b', 5), standIn('node-a', 5), standIn('node-c', 5, true)],
      opts(out),
    )
    expect(readdirSync(join(out, 'nodes')).sort()).toEqual(['node-a', 'node-b'])
    const index = await readFleetIndex(out)
    expect(index).toEqual(r.index)
    expect(index.nodes).toEqual([
      {name: 'node-a', dir: 'nodes/node-a', error: null, code: null},
      {name: 'node-b', dir: 'nodes/node-b', error: null, code: null},
      {name: 'node-c', dir: null, error: 'kubectl exec: pod not found', code: 'LIVE_FLEET_PARTIAL'},
    ])
  })

  it('a node over its time limit leaves no files', async () => {
    const out = join(tmp(), 'fleet')
    const r = await collectFleet([standIn('slow', 10_000), standIn('fast', 1)], {
      ...opts(out),
      nodeTimeoutMs: 100,
    })
    expect(readdirSync(join(out, 'nodes'))).toEqual(['fast'])
    expect(r.index.nodes.find((n) => n.name === 'slow')).toMatchObject({code: 'LIVE_TIMEOUT'})
  })

  it('stopped part-way (Ctrl-C): no partial folder is left, finished bundles are indexed', async () => {
    const out = join(tmp(), 'fleet')
    const controller = new AbortController()
    const collectors = Array.from({length: 12}, (_, i) =>
      standIn(`node-${String(i).padStart(2, '0')}`, i < 3 ? 1 : 10_000),
    )
    setTimeout(() => controller.abort(), 200)
    const r = await collectFleet(collectors, {...opts(out), signal: controller.signal})
    expect(r.interrupted).toBe(true)
    const left = readdirSync(join(out, 'nodes'))
    expect(left.filter((f) => f.endsWith('.partial'))).toEqual([])
    expect(left.sort()).toEqual(['node-00', 'node-01', 'node-02'])
    const index = await readFleetIndex(out)
    expect(index.interrupted).toBe(true)
    expect(index.nodes.filter((n) => n.dir !== null).map((n) => n.name)).toEqual(left.sort())
    expect(
      index.nodes.filter((n) => n.dir === null).every((n) => n.code === 'LIVE_INTERRUPTED'),
    ).toBe(true)
  })

  it('refuses a non-empty --out before collecting anything', async () => {
    const out = tmp()
    await writeFile(join(out, 'x'), '')
    let ran = false
    const c: NodeCollector = {name: 'a', collect: async () => void (ran = true)}
    await expect(collectFleet([c], opts(out))).rejects.toMatchObject({code: 'USAGE_OUT_NOT_EMPTY'})
    expect(ran).toBe(false)
    expect(existsSync(join(out, 'fleet.json'))).toBe(false)
  })
})

describe('collectFleet stopped as a bundle is being put in place', () => {
  it('lists in fleet.json every bundle that is on disk, though Ctrl-C came after its collect ended', async () => {
    const out = join(tmp(), 'fleet')
    const ctrlC = new AbortController()
    // Ctrl-C the moment the collect returns: the bundle is then moved into place while the run
    // records the node as interrupted (CI saw fleet.json list 1 node with 2 folders on disk).
    const racer: NodeCollector = {
      name: 'node-a',
      async collect(dir) {
        await mkdir(dir, {recursive: true})
        await writeFile(join(dir, 'manifest.json'), '{}')
        setImmediate(() => ctrlC.abort())
      },
    }
    const r = await collectFleet([racer], {...opts(out), signal: ctrlC.signal})
    expect(r.interrupted).toBe(true)
    const onDisk = readdirSync(join(out, 'nodes'))
    const listed = r.index.nodes.filter((n) => n.dir !== null).map((n) => n.dir)
    expect(listed).toEqual(onDisk.map((f) => `nodes/${f}`))
  })
})
