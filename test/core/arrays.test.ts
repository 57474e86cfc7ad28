/**
 * pushAll appends any number of items. `push(...items)` passes each as an argument, and past
 * about 120,000 the call throws RangeError (Maximum call stack size exceeded): an ipvsadm
 * listing with 200,000 lines of one real server stopped kp with an internal error (exit 70).
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {generateNftTransaction} from '../../scripts/bench/gen-nft.mjs'
import {pushAll} from '../../src/core/arrays.js'
import {readFiles, readState} from '../../src/readers/read-state.js'
import {ROOT} from '../helpers/run-cli.js'

const MANY = 300_000

describe('pushAll', () => {
  it(`appends ${MANY.toLocaleString('en')} items in order, where push(...items) throws`, () => {
    const items = Array.from({length: MANY}, (_, i) => i)
    expect(() => [0].push(...items)).toThrow(RangeError)
    const target = [-1]
    pushAll(target, items)
    expect(target.length).toBe(MANY + 1)
    expect(target[0]).toBe(-1)
    expect(target[MANY]).toBe(MANY - 1)
  })
})

describe('inputs with that many items of one kind', () => {
  it('an ipvsadm listing with 200,000 lines of one real server reads as one endpoint', async () => {
    const listing = readFileSync(join(ROOT, 'fixtures/ipvs/generated/ipvsadm-Ln.txt'), 'utf8')
    const lines = listing.split('\n')
    const at = lines.findIndex((l) => l.startsWith('  -> ') && !l.includes('RemoteAddress'))
    const realServer = lines[at]!
    const text = [
      ...lines.slice(0, at),
      ...Array<string>(200_000).fill(realServer),
      ...lines.slice(at + 1),
    ].join('\n')
    const state = await readState({sources: [{path: 'copies.txt', text}]})
    const plain = await readState({sources: [{path: 'copies.txt', text: listing}]})
    expect(state.services.map((sp) => sp.endpoints)).toEqual(
      plain.services.map((sp) => sp.endpoints),
    )
  })

  it("an nftables table with one service of 200,000 endpoints (one rule's vmap) reads them all", async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'kp-arrays-'))
    try {
      const file = join(tmp, 'one-service.nft')
      await generateNftTransaction(file, {services: 1, endpointsPerService: 200_000})
      const {state} = await readFiles({files: [file]})
      expect(state.services).toHaveLength(1)
      expect(state.services[0]!.endpoints).toHaveLength(200_000)
    } finally {
      rmSync(tmp, {recursive: true, force: true})
    }
  }, 90_000)
})
