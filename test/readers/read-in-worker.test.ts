/**
 * Reading an input in a worker thread (src/readers/read-in-worker.ts, used by `kp diff` for B):
 * the state that comes back (ports as codes, the rest as JSON) is the one the main thread would
 * have read but for the ports' rule references, which diff does not compare; input errors come
 * back as the same InputError, and the worker is used only for large plain paths.
 * test/commands/diff-worker.test.ts runs the whole command with the worker on and off.
 */
import {execSync} from 'node:child_process'
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {isDeepStrictEqual} from 'node:util'
import {afterAll, afterEach, describe, expect, it} from 'vitest'
import {decodePort} from '../../src/core/port-codec.js'
import {InputError} from '../../src/errors.js'
import type {ProxyState} from '../../src/model/types.js'
import {
  readInWorker,
  WORKER_MIN_BYTES_ENV,
  workerPaysOff,
} from '../../src/readers/read-in-worker.js'
import {readFiles, type FileReadRequest} from '../../src/readers/read-state.js'
import {bundleFile, NODE_A_FACTS, writeBundle} from '../helpers/bundle.js'
import {ROOT} from '../helpers/run-cli.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-read-worker-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const IPT_OVERALL = `${ROOT}fixtures/iptables/upstream-overall/input.rules`
const NFT_OVERALL = `${ROOT}fixtures/nft/upstream-overall/input.nft`

/** What readFiles gives or throws, as data; `noRules`: without the ports' rule references, as the worker sends them. */
async function mainThreadRead(req: FileReadRequest, {noRules = false} = {}): Promise<unknown> {
  try {
    const read = await readFiles(req)
    if (!noRules) return {kind: 'read', ...read}
    return {
      kind: 'read',
      ...read,
      state: {...read.state, services: read.state.services.map((sp) => ({...sp, rules: []}))},
    }
  } catch (error) {
    if (!(error instanceof InputError)) throw error
    return {
      kind: 'input-error',
      message: error.message,
      code: error.code,
      hints: error.hints,
      diagnostics: error.diagnostics,
    }
  }
}

/** The worker's outcome, its ports decoded into the state. */
async function workerRead(req: FileReadRequest): Promise<unknown> {
  const outcome = await readInWorker(req).outcome
  if (outcome.kind === 'read') {
    const {state, ports} = outcome.state
    expect(state.services).toEqual([])
    const services = ports.keys.map((_key, i) => decodePort(ports, i))
    return {kind: 'read', state: {...state, services} satisfies ProxyState, facts: outcome.facts}
  }
  if (outcome.kind !== 'input-error') return outcome
  const e = outcome.error
  expect(e).toBeInstanceOf(InputError)
  return {
    kind: 'input-error',
    message: e.message,
    code: e.code,
    hints: e.hints,
    diagnostics: e.diagnostics,
  }
}

describe('readInWorker', () => {
  it.each([
    ['an iptables-save dump', {files: [IPT_OVERALL]}],
    ['nft text', {files: [NFT_OVERALL]}],
    [
      'nft text read with --mode iptables and --format nft',
      {
        files: [`${ROOT}fixtures/nft/iptables-nft-multipleservices-older/input.nft`],
        mode: 'iptables',
        format: 'nft',
      },
    ],
    ['a folder of IPVS dumps', {files: [`${ROOT}fixtures/ipvs/generated`]}],
    [
      'ipvsadm with cluster objects from one node',
      {
        files: [`${ROOT}fixtures/ipvs/generated/ipvsadm-Ln.txt`],
        cluster: [
          `${ROOT}fixtures/kube/ipvs-generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml`,
        ],
        node: 'test-node',
      },
    ],
    ['a saved state', {files: [`${ROOT}fixtures/diff/upstream-overall/iptables.state.json`]}],
    ['a dump with an error diagnostic', {files: [`${ROOT}fixtures/nft/bad/unrelated.nft`]}],
  ] as Array<[string, FileReadRequest]>)(
    'reads %s into the state the main thread reads',
    async (_name, req) => {
      const here = await mainThreadRead(req, {noRules: true})
      expect(here).toMatchObject({kind: 'read'})
      // Strict: no member lost or turned into null on the way through the codes and JSON.
      expect(await workerRead(req)).toStrictEqual(here)
    },
  )

  it('brings back the facts of a bundle folder', async () => {
    const facts = {...NODE_A_FACTS, nftVersion: null}
    const dir = writeBundle(
      join(tmp, 'bundle'),
      [[bundleFile('iptables-save.txt', {command: ['iptables-save']}), readFileSync(IPT_OVERALL)]],
      facts,
    )
    const outcome = await workerRead({files: [dir]})
    expect(outcome).toMatchObject({
      kind: 'read',
      facts,
      state: {node: {name: 'node-a', kernel: '6.1.0'}},
    })
    expect(outcome).toStrictEqual(await mainThreadRead({files: [dir]}, {noRules: true}))
  })

  it.each([
    ['a missing file', () => join(tmp, 'missing.rules')],
    ['an empty folder', () => mkdtempSync(join(tmp, 'empty-'))],
    [
      'a folder with a broken manifest',
      () => {
        const dir = mkdtempSync(join(tmp, 'broken-'))
        writeFileSync(join(dir, 'manifest.json'), '{"kind": "KpBundle", ')
        return dir
      },
    ],
    ['unreadable cluster objects', () => IPT_OVERALL, [join(tmp, 'no-cluster.yaml')]],
  ] as Array<[string, () => string, string[]?]>)(
    'reports %s with the InputError the main thread throws',
    async (_name, path, cluster) => {
      const req: FileReadRequest = {files: [path()], cluster}
      const here = await mainThreadRead(req)
      expect(here).toMatchObject({kind: 'input-error', code: expect.stringMatching(/^INPUT_/)})
      expect(await workerRead(req)).toStrictEqual(here)
    },
  )

  it('says `failed` instead of throwing when the worker cannot read its request', async () => {
    // Not a path list: loadInputs throws a TypeError inside the worker, which is a bug, not an input error.
    const outcome = await readInWorker({files: 42} as unknown as FileReadRequest).outcome
    expect(outcome.kind).toBe('failed')
  })

  it('lets go of a cancelled worker: its outcome still settles', async () => {
    const job = readInWorker({files: [IPT_OVERALL]})
    job.cancel()
    expect((await job.outcome).kind).toMatch(/^(failed|read)$/)
  })
})

/** States of every fixture input survive JSON: what the worker relies on (a ProxyState is JSON-safe by contract). */
describe('fixture states are JSON-safe', () => {
  const inputs = readdirSync(`${ROOT}fixtures`, {recursive: true, encoding: 'utf8'})
    .map((p) => `fixtures/${p}`)
    .filter((p) => statSync(`${ROOT}${p}`).isFile() && !/\.md$|\.py$|expect/.test(p))
  it('finds the fixtures', () => {
    expect(inputs.length).toBeGreaterThan(100)
  })
  it('every fixture input reads into a state that JSON.parse(JSON.stringify()) gives back unchanged', async () => {
    const bad: string[] = []
    for (const p of inputs) {
      const read = await mainThreadRead({files: [`${ROOT}${p}`]})
      if (!isDeepStrictEqual(JSON.parse(JSON.stringify(read)), read)) bad.push(p)
    }
    expect(bad).toEqual([])
  })
})

describe('workerPaysOff', () => {
  const saved = process.env[WORKER_MIN_BYTES_ENV]
  afterEach(() => {
    if (saved === undefined) delete process.env[WORKER_MIN_BYTES_ENV]
    else process.env[WORKER_MIN_BYTES_ENV] = saved
  })

  it('is off for the small fixtures by default, so they keep the sequential read', async () => {
    delete process.env[WORKER_MIN_BYTES_ENV]
    expect(await workerPaysOff(IPT_OVERALL, NFT_OVERALL)).toBe(false)
  })

  it('counts the smaller input against the threshold, folders by the files in them', async () => {
    const dir = mkdtempSync(join(tmp, 'sizes-'))
    writeFileSync(join(dir, 'big'), Buffer.alloc(3000))
    writeFileSync(join(dir, 'small'), Buffer.alloc(1000))
    mkdirSync(join(dir, 'folder'))
    mkdirSync(join(dir, 'folder', 'sub'))
    writeFileSync(join(dir, 'folder', 'a'), Buffer.alloc(1500))
    writeFileSync(join(dir, 'folder', 'sub', 'b'), Buffer.alloc(1500))
    process.env[WORKER_MIN_BYTES_ENV] = '2000'
    expect(await workerPaysOff(join(dir, 'big'), join(dir, 'big'))).toBe(true)
    expect(await workerPaysOff(join(dir, 'big'), join(dir, 'small'))).toBe(false)
    expect(await workerPaysOff(join(dir, 'small'), join(dir, 'big'))).toBe(false)
    expect(await workerPaysOff(join(dir, 'big'), join(dir, 'folder'))).toBe(true)
    process.env[WORKER_MIN_BYTES_ENV] = '3001'
    expect(await workerPaysOff(join(dir, 'big'), join(dir, 'folder'))).toBe(false)
  })

  it('is off for stdin, live, missing paths and stdin cluster objects, whatever the threshold', async () => {
    process.env[WORKER_MIN_BYTES_ENV] = '0'
    expect(await workerPaysOff(IPT_OVERALL, NFT_OVERALL)).toBe(true)
    expect(await workerPaysOff('-', NFT_OVERALL)).toBe(false)
    expect(await workerPaysOff(IPT_OVERALL, '-')).toBe(false)
    expect(await workerPaysOff('live', NFT_OVERALL)).toBe(false)
    expect(await workerPaysOff(IPT_OVERALL, 'live')).toBe(false)
    expect(await workerPaysOff(IPT_OVERALL, join(tmp, 'missing'))).toBe(false)
    expect(await workerPaysOff(IPT_OVERALL, NFT_OVERALL, ['-'])).toBe(false)
    expect(await workerPaysOff(IPT_OVERALL, NFT_OVERALL, ['cluster.yaml'])).toBe(true)
  })

  it('is off for a pipe (`<(iptables-save)`), which only one reader can read', async () => {
    process.env[WORKER_MIN_BYTES_ENV] = '0'
    const fifo = join(tmp, 'fifo')
    execSync(`mkfifo ${fifo}`)
    expect(await workerPaysOff(IPT_OVERALL, fifo)).toBe(false)
  })
})
