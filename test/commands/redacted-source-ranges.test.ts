/**
 * A redacted loadBalancerSourceRanges element (issue 21 §1): kept as redacted
 * (`Frontend.redactedSourceRanges`), never dropped with its frontend nor read as "no ranges".
 * The range set is then partly unknown: explain says so, trace gives a source outside the known
 * ranges both outcomes, diff against the real range says unknown, migrate renders no guess.
 * The inputs are the upstream fixtures with `203.0.113.0/25` (ns5/svc5's range) replaced.
 */
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {runKpInProcess} from '../helpers/run-in-process.js'

const IPT = 'fixtures/iptables/upstream-overall/input.rules'
const KUBE = 'fixtures/kube/iptables-overall/cluster.yaml'

const tmp = mkdtempSync(join(tmpdir(), 'kp-redacted-ranges-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

function redacted(from: string, range: string, name: string): string {
  const text = readFileSync(from, 'utf8')
  expect(text).toContain(range)
  const path = join(tmp, name)
  writeFileSync(path, text.replace(range, 'x.x.x.x/25'))
  return path
}

type Fe = {type: string; sourceRanges: string[]; redactedSourceRanges?: string[]}
async function lbOf(args: string[]): Promise<Fe> {
  const r = await runKpInProcess(['list', '--json', ...args])
  expect(r.exitCode).toBe(0)
  expect(r.stderr).toContain('[INPUT_REDACTED]')
  const svc5 = JSON.parse(r.stdout).services.find((s: {name: string}) => s.name === 'svc5')
  return svc5.frontends.find((f: Fe) => f.type === 'LoadBalancer')
}

describe('a redacted loadBalancerSourceRanges element', () => {
  it('iptables-save: the LoadBalancer frontend is kept, its range as redacted, exit 0', async () => {
    const path = join(tmp, 'ipt.rules')
    writeFileSync(path, readFileSync(IPT, 'utf8').replace('-s 203.0.113.0/25', '-s x.x.x.x/25'))
    const lb = await lbOf(['-f', path])
    expect(lb).toMatchObject({sourceRanges: [], redactedSourceRanges: ['x.x.x.x/25']})
    const t = await runKpInProcess(['list', '-f', path])
    expect(t.stdout).toContain('LB 5.6.7.8:80 (from <redacted>)')
  })

  it('cluster YAML: kept as redacted, not ignored (which would admit every client)', async () => {
    const path = redacted(KUBE, '203.0.113.000/025', 'ranges.yaml')
    const lb = await lbOf(['-f', path, '--node', 'node-a'])
    expect(lb).toMatchObject({sourceRanges: [], redactedSourceRanges: ['x.x.x.x/25']})
  })

  it('explain says the range set is partly unknown; --json carries the redacted ranges', async () => {
    const path = redacted(KUBE, '203.0.113.000/025', 'explain.yaml')
    const r = await runKpInProcess(['explain', '5.6.7.8:80', '-f', path, '--node', 'node-a'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('the range set is partly unknown')
    expect(r.stdout).not.toContain('a connection from any other source is dropped')
    const j = await runKpInProcess([
      'explain',
      '5.6.7.8:80',
      '--json',
      '-f',
      path,
      '--node',
      'node-a',
    ])
    const fe = JSON.parse(j.stdout).matches[0].frontends.find((f: Fe) => f.type === 'LoadBalancer')
    expect(fe.redactedSourceRanges).toEqual(['x.x.x.x/25'])
  })

  it('trace from a source outside the known ranges: unknown (both outcomes), not "outside"', async () => {
    const path = join(tmp, 'trace.rules')
    writeFileSync(path, readFileSync(IPT, 'utf8').replace('-s 203.0.113.0/25', '-s x.x.x.x/25'))
    const args = ['trace', '5.6.7.8:80', '--from', '198.51.100.7']
    const r = await runKpInProcess([...args, '-f', path])
    expect(r.stdout).toContain('If the source is in the redacted range x.x.x.x/25')
    expect(r.stdout).toContain('forwarded to 10.180.0.3:80')
    const whole = await runKpInProcess([...args, '-f', IPT])
    expect(whole.stdout).not.toContain('forwarded to')
  })

  it('diff of the redacted range against the real one: unknown, not "changed"', async () => {
    const path = join(tmp, 'diff.rules')
    writeFileSync(path, readFileSync(IPT, 'utf8').replace('-s 203.0.113.0/25', '-s x.x.x.x/25'))
    const r = await runKpInProcess(['diff', '--json', path, IPT])
    const d = JSON.parse(r.stdout)
    expect(d.services).toEqual([])
    expect(d.unknown).toHaveLength(1)
    expect(d.unknown[0]).toMatchObject({service: 'ns5/svc5:p80/tcp', side: 'a', redacted: true})
    const t = await runKpInProcess(['diff', path, IPT])
    expect(t.stdout).toContain("a's input hid a source range (redacted)")
    // A known range the other side lacks still differs.
    const other = join(tmp, 'other.rules')
    writeFileSync(
      other,
      readFileSync(IPT, 'utf8').replace('-s 203.0.113.0/25', '-s 198.51.100.0/24'),
    )
    const known = JSON.parse((await runKpInProcess(['diff', '--json', path, other])).stdout)
    expect(known.unknown[0]?.service).toBe('ns5/svc5:p80/tcp')
    const both = JSON.parse((await runKpInProcess(['diff', '--json', other, IPT])).stdout)
    expect(both.services.map((s: {service: string}) => s.service)).toEqual(['ns5/svc5:p80/tcp'])
  })

  it('the saved state reads back with its redacted ranges', async () => {
    const path = join(tmp, 'state.rules')
    writeFileSync(path, readFileSync(IPT, 'utf8').replace('-s 203.0.113.0/25', '-s x.x.x.x/25'))
    const first = await runKpInProcess(['list', '--json', '-f', path])
    const saved = join(tmp, 'state.json')
    writeFileSync(saved, first.stdout)
    const again = await runKpInProcess(['list', '--json', '-f', saved])
    expect(again.exitCode).toBe(0)
    expect(JSON.parse(again.stdout).services).toEqual(JSON.parse(first.stdout).services)
  })

  it('migrate renders no guess for the frontend and says why', async () => {
    const path = join(tmp, 'migrate.rules')
    writeFileSync(path, readFileSync(IPT, 'utf8').replace('-s 203.0.113.0/25', '-s x.x.x.x/25'))
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '--json', '-f', path])
    const m = JSON.parse(r.stdout)
    expect(m.text).not.toContain('5.6.7.8')
    expect(m.findings.map((f: {id: string}) => f.id)).toContain('RENDER_BAD_SOURCE_RANGE')
  })
})
