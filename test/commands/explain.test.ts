/**
 * `kp explain` as a real process, on kube-proxy's own overall dump (iptables-overall.dump,
 * copied to fixtures/iptables/upstream-overall) and on the hand-made state. What each service
 * should show is read off the dump by hand: line numbers below are the dump's.
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {bundleFile, writeBundle} from '../helpers/bundle.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const RULES = 'fixtures/iptables/upstream-overall/input.rules'
const STATE = 'fixtures/kp-json/overall/state.json'

async function explainJson(args: string[]): Promise<any> {
  const r = await runKpInProcess(['explain', ...args, '--json'])
  expect(r.exitCode, r.stderr).toBe(0)
  return JSON.parse(r.stdout)
}

const names = (result: any) => result.matches.map((m: any) => m.service.displayName)

describe('kp explain', () => {
  it('by name: ns5/svc5 from the dump, every frontend, affinity and rules', async () => {
    const r = await explainJson(['ns5/svc5', '-f', RULES])
    expect(r).toMatchObject({
      schemaVersion: 1,
      kind: 'ExplainResult',
      mode: 'iptables',
      query: {by: 'name', namespace: 'ns5', name: 'svc5'},
    })
    const [m] = r.matches
    expect(m.frontends.map((f: any) => [f.type, f.address, f.action, f.masquerade.when])).toEqual([
      ['ClusterIP', '172.30.0.45:80', 'forward', 'conditional'], // line 88: ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
      ['LoadBalancer', '5.6.7.8:80', 'forward', 'always'], // line 61: ETP=Cluster masquerades external traffic
      ['NodePort', '*:3002', 'forward', 'always'],
    ])
    expect(m.frontends[1].sourceRanges).toEqual(['203.0.113.0/25']) // line 65
    expect(m.affinity).toMatchObject({type: 'ClientIP', timeoutSeconds: 10800}) // line 89
    expect(m.endpoints).toEqual([
      {
        ip: '10.180.0.3',
        port: 80,
        address: '10.180.0.3:80',
        share: 1,
        local: null,
        weight: null,
        state: null,
      },
    ])
    expect(m.rules.map((x: any) => x.line)).toEqual([
      17, 44, 45, 53, 54, 61, 62, 65, 66, 73, 74, 88, 89, 90,
    ])
  })

  it('by ns/name:port and by name -n ns give the same answer', async () => {
    const byPort = await explainJson(['ns4/svc4:p80', '-f', STATE])
    expect(names(byPort)).toEqual(['ns4/svc4:p80/tcp'])
    expect((await explainJson(['svc4', '-n', 'ns4', '-f', STATE])).matches).toEqual(byPort.matches)
  })

  it('by VIP, VIP:port/proto and NodePort', async () => {
    expect(names(await explainJson(['192.168.99.22', '-f', RULES]))).toEqual(['ns2/svc2:p80/tcp'])
    const lb = (await explainJson(['1.2.3.4:80/tcp', '-f', RULES])).matches[0]
    // lines 11 and 58-60: ETP=Local without local endpoints drops outside clients
    expect(lb.frontends).toMatchObject([
      {type: 'LoadBalancer', action: 'drop', trafficPolicy: 'Local'},
    ])
    const np = (await explainJson([':3003', '-f', RULES])).matches[0]
    expect([np.service.displayName, np.frontends.map((f: any) => f.address)]).toEqual([
      'ns3/svc3:p80/tcp',
      ['*:3003'],
    ])
  })

  it('an unknown service exits 3 and names the closest matches', async () => {
    const r = await runKpInProcess(['explain', 'ns5/svcc5', '-f', RULES])
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('no service port matches "ns5/svcc5"')
    expect(r.stderr).toMatch(/hint: closest: ns5\/svc5:p80\/tcp, /)
    const j = await runKpInProcess(['explain', 'nope/x', '--json', '-f', RULES])
    expect(j.exitCode).toBe(3)
    expect(JSON.parse(j.stdout).error).toMatchObject({code: 'INPUT_SERVICE_NOT_FOUND', exitCode: 3})
  })

  it('an unreadable SERVICE is a usage error (exit 2)', async () => {
    expect((await runKpInProcess(['explain', 'a/b/c/d', '-f', RULES])).exitCode).toBe(2)
  })

  it('--rules shows path:line with the rule text, and shares as percentages', async () => {
    const r = await runKpInProcess(['explain', 'ns4/svc4', '--rules', '-f', RULES])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/10\.180\.0\.4:80 +50 %/)
    // the rules print kube-proxy's conditional probability; the explanation above them never does
    expect(r.stdout.slice(0, r.stdout.indexOf('Rules ('))).not.toMatch(/(?<![\d.])0\.5/)
    expect(r.stdout).toContain(
      `${RULES}:84  -A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 -> 10.180.0.4:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-UKSFD7AGPMPPLUHC`,
    )
    const lines = [...r.stdout.matchAll(new RegExp(`${RULES}:(\\d+)`, 'g'))].map((m) =>
      Number(m[1]),
    )
    expect(lines).toEqual([51, 52, 56, 57, 71, 72, 81, 82, 83, 84, 85])
  })

  it('--rules quotes nft -j rules in nft words, from a file, stdin or a bundle, not line numbers alone', async () => {
    const json = 'fixtures/nft-json/upstream-overall/input.json'
    const chain = 'chain service-ULMVA6XW-ns1/svc1/tcp/p80 handle \\d+: '
    const expectQuoted = (out: string, path: string) => {
      const at = path.replaceAll('.', '\\.')
      expect(out).toMatch(
        new RegExp(
          `${at}:27 +${chain}ip daddr 172\\.30\\.0\\.41 ip saddr != 10\\.0\\.0\\.0/8 jump mark-for-masquerade\\n +${chain}numgen random`,
        ),
      )
      expect(out).toContain(
        `${path}:9   map service-ips: 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80`,
      )
    }
    const fromFile = await runKpInProcess(['explain', 'ns1/svc1', '--rules', '-f', json])
    expect(fromFile.exitCode).toBe(0)
    expectQuoted(fromFile.stdout, json)
    const fromStdin = await runKpInProcess(['explain', 'ns1/svc1', '--rules', '-f', '-'], {
      input: readFileSync(json, 'utf8'),
    })
    expect(fromStdin.exitCode).toBe(0)
    expectQuoted(fromStdin.stdout, '-')
    const dir = writeBundle(join(mkdtempSync(join(tmpdir(), 'kp-rules-')), 'b'), [
      [bundleFile('nft-ip-kube-proxy.json', {format: 'nft-json'}), readFileSync(json, 'utf8')],
    ])
    const fromBundle = await runKpInProcess(['explain', 'ns1/svc1', '--rules', '-f', dir])
    expect(fromBundle.exitCode).toBe(0)
    expectQuoted(fromBundle.stdout, join(dir, 'nft-ip-kube-proxy.json'))
  })

  it('escapes control characters from the input in human output', async () => {
    const r = await runKpInProcess([
      'explain',
      '172.30.0.41',
      '--rules',
      '-f',
      'fixtures/kp-json/control-chars/state.json',
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('ns1/evil\\x1b]0;pwned\\x07\\x1b[31m:p80/tcp')
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
  })

  it('a dump that starts with a byte order mark explains as without it (the focused read)', async () => {
    const text = readFileSync('fixtures/iptables/upstream-overall/input.rules', 'utf8')
    const file = join(mkdtempSync(join(tmpdir(), 'kp-bom-')), 'input.rules')
    writeFileSync(file, `\ufeff${text}`)
    const marked = await runKpInProcess(['explain', 'ns5/svc5', '--json', '-f', file])
    const plain = await runKpInProcess([
      'explain',
      'ns5/svc5',
      '--json',
      '-f',
      'fixtures/iptables/upstream-overall/input.rules',
    ])
    expect(marked.exitCode).toBe(0)
    const same = (text: string, path: string) => text.replaceAll(path, 'F')
    expect(same(marked.stderr, file)).toBe(
      same(plain.stderr, 'fixtures/iptables/upstream-overall/input.rules'),
    )
    expect(same(marked.stdout, file)).toBe(
      same(plain.stdout, 'fixtures/iptables/upstream-overall/input.rules'),
    )
  })

  it('a newline in a name from the input does not split a warning line on stderr', async () => {
    // JSON strings may hold "\n"; a warning quoting one must stay one `kp: ...` line.
    const state = JSON.parse(
      readFileSync('fixtures/kp-json/control-chars/state.json', 'utf8'),
    ) as Record<string, unknown>
    state['odd\nkey\r'] = 1
    const file = join(mkdtempSync(join(tmpdir(), 'kp-nl-')), 'state.json')
    writeFileSync(file, JSON.stringify(state))
    const r = await runKpInProcess(['explain', '172.30.0.41', '-f', file])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('\\x0a')
    for (const line of r.stderr.trimEnd().split('\n')) expect(line).toMatch(/^kp: /)
  })
})
