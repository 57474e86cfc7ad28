/**
 * `kp list` as a real process: --json is the ProxyState and reads back unchanged, human output
 * is a table, exit codes follow src/errors.ts EXIT.
 */
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {emptyState} from '../../src/core/state.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const STATE = 'fixtures/kp-json/overall/state.json'
const RULES = 'fixtures/iptables/upstream-overall/input.rules'
const tmp = mkdtempSync(join(tmpdir(), 'kp-list-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/** Exactly one JSON document on stdout (JSON.parse refuses trailing text). */
function json(stdout: string): any {
  return JSON.parse(stdout)
}

describe('kp list', () => {
  it('--json prints the saved state as read, one document, nothing on stderr', async () => {
    const r = await runKpInProcess(['list', '--json', '-f', STATE])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toBe('')
    expect(json(r.stdout)).toEqual(JSON.parse(readFileSync(STATE, 'utf8')))
  })

  it('--json into a pipe is one compact line (a terminal gets it indented)', async () => {
    const r = await runKpInProcess(['list', '--json', '-f', STATE])
    expect(r.exitCode).toBe(0)
    expect(r.stdout.endsWith('\n')).toBe(true)
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stdout.trimEnd()).toBe(JSON.stringify(json(r.stdout)))
  })

  it('round-trips the iptables dump: list --json -f X > a.json; list --json -f a.json gives a.json again', async () => {
    const first = await runKpInProcess(['list', '--json', '-f', RULES])
    expect(first.exitCode).toBe(0)
    const saved = join(tmp, 'a.json')
    writeFileSync(saved, first.stdout)
    const second = await runKpInProcess(['list', '--json', '-f', saved])
    expect(second.exitCode).toBe(0)
    expect(json(second.stdout)).toEqual(json(first.stdout))
    // and the dump agrees with the hand-made state on ns1..ns6 (both written from iptables-overall.dump)
    const hand = JSON.parse(readFileSync(STATE, 'utf8'))
    expect(json(first.stdout).services).toEqual(
      hand.services.filter((s: {namespace: string}) => Number(s.namespace.slice(2)) <= 6),
    )
  })

  it('prints a table of service ports, sorted as the state is', async () => {
    const r = await runKpInProcess(['list', '-f', RULES])
    expect(r.exitCode).toBe(0)
    const names = r.stdout
      .split('\n')
      .filter((l) => /^ns\d/.test(l))
      .map((l) => l.split(/\s+/)[0])
    expect(names).toEqual([
      'ns1/svc1:p80/tcp',
      'ns2/svc2:p80/tcp',
      'ns3/svc3:p80/tcp',
      'ns4/svc4:p80/tcp',
      'ns5/svc5:p80/tcp',
      'ns6/svc6:p80/tcp',
    ])
    expect(r.stdout).toMatch(/ns6\/svc6:p80\/tcp +ClusterIP 172\.30\.0\.46:80 REJECT/)
    expect(r.stdout).not.toContain('\u001b[')
  })

  it('-n keeps one namespace, in the table and in --json', async () => {
    const r = await runKpInProcess(['list', '-n', 'ns4', '-o', 'wide', '-f', STATE])
    expect(r.stdout).toMatch(
      /ns4\/svc4:p80\/tcp +ClusterIP 172\.30\.0\.44:80 +10\.180\.0\.4:80 50 %/,
    )
    expect(r.stdout).not.toContain('ns5/')
    const j = await runKpInProcess(['list', '-n', 'ns4', '--json', '-f', STATE])
    expect(json(j.stdout).services.map((s: {name: string}) => s.name)).toEqual(['svc4'])
  })

  it('an empty state (from stdin) is a clear line and exit 0', async () => {
    const r = await runKpInProcess(['list', '-f', '-'], {
      input: JSON.stringify(emptyState('nftables')),
    })
    expect(r).toMatchObject({
      exitCode: 0,
      stdout: 'No service ports found (nftables mode, 0 sources read).\n',
    })
  })

  it('a malformed saved state exits 3 with path:line, and --json still prints one document', async () => {
    const bad = join(tmp, 'bad.json')
    const text = JSON.stringify({...emptyState('iptables'), node: {}}, null, 2)
    writeFileSync(bad, text)
    const nodeLine = text.split('\n').findIndex((l) => l.includes('"node"')) + 1
    const r = await runKpInProcess(['list', '--json', '-f', bad])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain(`${bad}:${nodeLine}: node.name: missing`)
    expect(json(r.stdout).error).toMatchObject({code: 'KPJSON_MISSING_FIELD', exitCode: 3})
  })

  it('a bad -o value is a usage error (exit 2)', async () => {
    expect((await runKpInProcess(['list', '-o', 'xml', '-f', STATE])).exitCode).toBe(2)
  })

  it('the same warning 30 times shows 20 and counts the rest; --verbose shows all, --json lists all', async () => {
    // A dump broken the same way thousands of times must not bury the terminal (30,000 stray `}` once made 30,000 lines).
    const file = join(tmp, 'braces.nft')
    writeFileSync(
      file,
      readFileSync('fixtures/nft/upstream-overall/list.nft', 'utf8') + '}\n'.repeat(30),
    )
    const brace = (stderr: string) =>
      stderr.split('\n').filter((l) => l.endsWith('[NFT_UNBALANCED_BRACE]')).length
    const plain = await runKpInProcess(['list', '-f', file])
    expect(plain.exitCode).toBe(0)
    expect(brace(plain.stderr)).toBe(20)
    expect(plain.stderr).toContain(
      'kp: 10 more NFT_UNBALANCED_BRACE warning(s) hidden; --verbose shows them, --json lists them\n',
    )
    expect(brace((await runKpInProcess(['list', '--verbose', '-f', file])).stderr)).toBe(30)
    const json = await runKpInProcess(['list', '--json', '-f', file])
    expect(
      (JSON.parse(json.stdout) as {diagnostics: Array<{code: string}>}).diagnostics.filter(
        (d) => d.code === 'NFT_UNBALANCED_BRACE',
      ),
    ).toHaveLength(30)
  })
})
