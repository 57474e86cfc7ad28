/**
 * writeCompactJson writes a --json document in pieces; joined, the pieces must be exactly
 * JSON.stringify's text, whatever the document holds.
 */
import {readFileSync} from 'node:fs'
import {spawn} from 'node:child_process'
import {Writable} from 'node:stream'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {bufferedStreamOut, writeCompactJson} from '../../src/cli/json-out.js'
import {readState} from '../../src/readers/read-state.js'
import {ROOT} from '../helpers/run-cli.js'

/** What writeCompactJson writes through bufferedStreamOut, and in how many writes. */
function written(value: unknown): {text: string; pieces: number} {
  const chunks: Buffer[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk)) // a copy: the writer reuses its buffer
      done()
    },
  })
  writeCompactJson(value, bufferedStreamOut(sink))
  return {text: Buffer.concat(chunks).toString('utf8'), pieces: chunks.length}
}

describe('writeCompactJson', () => {
  it.each([
    ['a number', 42],
    ['a string with quotes and control characters', 'a "b"\n\u0001 ☕'],
    ['null', null],
    ['an empty object and array', {a: {}, b: []}],
    ['properties with no JSON form', {a: undefined, b: () => 1, c: Symbol('x'), d: 1}],
    [
      'long arrays with elements with no JSON form',
      {
        list: Array.from({length: 100}, (_, i) =>
          i % 3 === 0 ? undefined : i % 3 === 1 ? () => i : {i},
        ),
      },
    ],
    [
      'nested long arrays',
      {
        rows: Array.from({length: 70}, (_, i) =>
          Array.from({length: 80}, (_, j) => ({i, j, s: `${i}.${j}`})),
        ),
      },
    ],
    [
      'objects with toJSON',
      {when: new Date(0), list: Array.from({length: 65}, () => ({toJSON: () => 'x'}))},
    ],
    ['a top-level long array', Array.from({length: 200}, (_, i) => ({n: i}))],
  ])('%s: the same text as JSON.stringify', (_name, value) => {
    expect(written(value).text).toBe(JSON.stringify(value))
  })

  it('a large state: the same text, in pieces of about 1 MiB', async () => {
    const text = readFileSync(join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'), 'utf8')
    const state = await readState({sources: [{path: 'x', text}]})
    // 8,000 copies of its services: a document of several MB.
    const big = {
      ...state,
      services: Array.from({length: 8000}, (_, i) => state.services[i % state.services.length]),
    }
    const {text: out, pieces} = written(big)
    expect(out).toBe(JSON.stringify(big))
    expect(out.length).toBeGreaterThan(3 << 20)
    expect(pieces).toBeGreaterThanOrEqual(3)
    expect(pieces).toBeLessThanOrEqual(Math.ceil(out.length / (1 << 20)) + 1)
  })
})

describe('bufferedStreamOut', () => {
  const doc = {
    services: Array.from({length: 8000}, (_, i) => ({
      name: `svc-${i}`,
      comment: `café ☕ ${'x'.repeat(i % 700)}`,
      n: i,
    })),
  }

  it('into a stream that takes each write at once, reuses one buffer and writes the same bytes', () => {
    const chunks: Buffer[] = []
    const seen = new Set<ArrayBufferLike>()
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        seen.add(chunk.buffer)
        chunks.push(Buffer.from(chunk)) // a copy: the writer reuses its buffer
        done()
      },
    })
    writeCompactJson(doc, bufferedStreamOut(sink))
    expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify(doc))
    expect(chunks.length).toBeGreaterThan(1)
    expect(seen.size).toBe(1)
  })

  it('a text longer than the buffer, between short ones, comes out whole and in order', () => {
    // One service port with 200,000 endpoints is a single 10 MB text (stringified whole).
    const huge = {
      services: (
        [
          {a: 1},
          {endpoints: Array.from({length: 200_000}, (_, i) => `10.0.${i}:80 ☕`)},
          {b: 'é'},
        ] as unknown[]
      ).concat(doc.services),
    }
    const chunks: Buffer[] = []
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(Buffer.from(chunk))
        done()
      },
    })
    writeCompactJson(huge, bufferedStreamOut(sink))
    expect(Buffer.concat(chunks).toString('utf8')).toBe(JSON.stringify(huge))
    // Short texts wait for about 1 MiB: no more writes than that, plus the one before the long text.
    const bytes = Buffer.concat(chunks).length
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(bytes / (1 << 20)) + 2)
  })

  it('into a stream that has not finished a write, never reuses the buffer it holds', async () => {
    // Each write is done only later (as stdout into a full pipe that is not blocking): until then
    // the stream holds the bytes, and they must not change under it.
    const held: Buffer[] = []
    const slow = new Writable({
      highWaterMark: 1 << 30,
      write(chunk: Buffer, _encoding, done) {
        held.push(chunk)
        setImmediate(done)
      },
    })
    writeCompactJson(doc, bufferedStreamOut(slow))
    await new Promise((resolve) => slow.end(resolve))
    expect(held.length).toBeGreaterThan(1)
    expect(new Set(held.map((b) => b.buffer)).size).toBe(held.length)
    expect(Buffer.concat(held).toString('utf8')).toBe(JSON.stringify(doc))
  })
})

describe('blockWhenPipe', () => {
  /**
   * A child process writes 4 MiB to its stdout, a pipe this test reads only after a while, and
   * says on stderr how much of it was still queued in the child when write() returned.
   */
  const queuedAfterWrite = (block: boolean): Promise<{queued: number; received: number}> =>
    new Promise((resolve, reject) => {
      const script = [
        `import {blockWhenPipe} from ${JSON.stringify(join(ROOT, 'src/cli/json-out.ts'))}`,
        block ? 'blockWhenPipe(process.stdout)' : '',
        'process.stdout.write(Buffer.alloc(4 << 20, 120))',
        'process.stderr.write(String(process.stdout.writableLength))',
      ].join('\n')
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        {cwd: ROOT},
      )
      let received = 0
      let stderr = ''
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      child.stdout.pause()
      setTimeout(() => child.stdout.on('data', (d: Buffer) => (received += d.length)).resume(), 300)
      child.on('error', reject)
      child.on('close', () => resolve({queued: Number(stderr), received}))
    })

  it('makes a write into a pipe return only once the pipe has taken it (nothing left queued in the process)', async () => {
    const blocking = await queuedAfterWrite(true)
    expect(blocking).toEqual({queued: 0, received: 4 << 20})
    // Without it, libuv's non-blocking pipe keeps what the reader has not taken yet: what the fix is for.
    const plain = await queuedAfterWrite(false)
    expect(plain.received).toBe(4 << 20)
    expect(plain.queued).toBeGreaterThan(0)
  }, 30_000)
})
