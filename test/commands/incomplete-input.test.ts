/**
 * Issue 21 §1: partial and redacted input. A truncated or damaged copy of a fixture of each
 * format shows what could be read, opens stderr with the incomplete-input line and exits 3;
 * --json carries the state with its errors and `complete: false`; migrate writes no rules from
 * it unless --allow-incomplete. A redaction placeholder is a warning: the service port is kept,
 * its address shown as redacted, exit 0.
 */
import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {bundleFile, writeBundle} from '../helpers/bundle.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const IPT = 'fixtures/iptables/upstream-overall/input.rules'
const NFT = 'fixtures/nft/upstream-overall/list.nft'
const NFT_JSON = 'fixtures/nft-json/upstream-overall/input.json'
const KUBE = 'fixtures/kube/iptables-overall/cluster.yaml'
const STATE = 'fixtures/kp-json/overall/state.json'
const IPVSADM = 'fixtures/ipvs/generated/ipvsadm-Ln.txt'
const IPSET = 'fixtures/ipvs/generated/ipset-save.ipvs-mode.txt'
const IPVS_IPT = 'fixtures/ipvs/generated/iptables-save.ipvs-mode.nft-backend.txt'

const tmp = mkdtempSync(join(tmpdir(), 'kp-partial-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const read = (path: string) => readFileSync(path, 'utf8')
function file(name: string, text: string): string {
  const path = join(tmp, name)
  writeFileSync(path, text)
  return path
}
/** The first `fraction` of the text, cut in the middle of a line. */
function cut(text: string, fraction: number): string {
  const at = Math.floor(text.length * fraction)
  const lineStart = text.lastIndexOf('\n', at) + 1
  return text.slice(0, lineStart + 12)
}
function replaced(text: string, from: string, to: string): string {
  expect(text).toContain(from)
  return text.replaceAll(from, to)
}

const FIRST_LINE = /^kp: input is incomplete: (\d+) error\(s\); what could be read is shown$/
function firstLine(stderr: string): string {
  return stderr.split('\n')[0]!
}

/** Damaged and truncated copies of a fixture of each format, with a service each still shows. */
const PARTIAL: Array<{what: string; args: () => string[]; shows: string}> = [
  {
    what: 'iptables-save, an endpoint address damaged',
    args: () => [
      '-f',
      file('ipt-damaged.rules', replaced(read(IPT), '10.180.0.1:80', '10.180.0.999:80')),
    ],
    shows: 'ns6/svc6:p80/tcp',
  },
  {
    what: 'iptables-save, cut in the middle of a line',
    args: () => ['-f', file('ipt-cut.rules', cut(read(IPT), 0.6))],
    shows: 'ns1/svc1:p80/tcp',
  },
  {
    what: 'nft list ruleset, an address damaged',
    args: () => ['-f', file('nft-damaged.nft', replaced(read(NFT), '172.30.0.42', '172.30.0.942'))],
    shows: 'ns1/svc1:p80/tcp',
  },
  {
    what: 'nft list ruleset, cut inside its table',
    args: () => ['-f', file('nft-cut.nft', cut(read(NFT), 0.75))],
    shows: 'ns2/svc2:p80/tcp',
  },
  {
    what: 'nft -j, an address damaged',
    args: () => [
      '-f',
      file('nft-damaged.json', replaced(read(NFT_JSON), '172.30.0.42', '172.30.0.942')),
    ],
    shows: 'ns1/svc1:p80/tcp',
  },
  {
    what: 'nft -j, cut in the middle of an entry',
    args: () => ['-f', file('nft-cut.json', read(NFT_JSON).slice(0, 20000))],
    shows: 'ns1/svc1:p80/tcp',
  },
  {
    what: 'Kubernetes YAML, one broken document after the good ones',
    args: () => ['-f', file('kube-damaged.yaml', `${read(KUBE)}---\nkind: Service\nspec: [\n`)],
    shows: 'ns3/svc3:p80/tcp',
  },
  {
    what: 'Kubernetes YAML List, cut in the middle of a line',
    args: () => ['-f', file('kube-cut.yaml', cut(read(KUBE), 0.6))],
    shows: 'ns1/svc1:p80/tcp',
  },
  {
    what: 'kp-json, one service port damaged',
    args: () => [
      '-f',
      file('state-damaged.json', replaced(read(STATE), '"10.180.0.1"', '"10.180.0.999"')),
    ],
    shows: 'ns2/svc2:p80/tcp',
  },
  {
    what: 'ipvsadm + ipset + iptables-save, the iptables dump cut off',
    args: () => [
      '-f',
      IPVSADM,
      '-f',
      IPSET,
      '-f',
      file('ipvs-iptables-cut.rules', cut(read(IPVS_IPT), 0.5)),
    ],
    shows: '10.96.0.10:53',
  },
  {
    what: 'ipvsadm -Ln cut in the middle of a line, with whole ipset and iptables dumps',
    args: () => [
      '-f',
      file('ipvsadm-cut.txt', cut(read(IPVSADM), 0.6)),
      '-f',
      IPSET,
      '-f',
      IPVS_IPT,
    ],
    shows: '10.96.0.10:53',
  },
  {
    what: 'ipset save cut in the middle of an add line, with whole ipvsadm and iptables dumps',
    args: () => ['-f', IPVSADM, '-f', file('ipset-cut.txt', cut(read(IPSET), 0.5)), '-f', IPVS_IPT],
    shows: '10.96.0.10:53',
  },
  {
    what: 'ipset list cut inside the members of its last set, at a line boundary',
    args: () => {
      const list = read('fixtures/ipvs/generated/ipset-list.ipvs-mode.txt')
      return [
        '-f',
        IPVSADM,
        '-f',
        file('ipset-list-cut.txt', list.slice(0, list.indexOf('10.96.0.10,tcp:9153'))),
        '-f',
        IPVS_IPT,
      ]
    },
    shows: '10.96.0.10:53',
  },
  {
    what: 'a kp collect bundle whose iptables-save is cut off',
    args: () => [
      '-f',
      writeBundle(join(tmp, 'bundle'), [[bundleFile('iptables-save.txt'), cut(read(IPT), 0.6)]]),
    ],
    shows: 'ns1/svc1:p80/tcp',
  },
]

describe('kp list on partial input', () => {
  it.each(PARTIAL)('$what: shows what was read, says so first, exit 3', async ({args, shows}) => {
    const r = await runKpInProcess(['list', ...args()])
    expect(r.exitCode).toBe(3)
    expect(firstLine(r.stderr)).toMatch(FIRST_LINE)
    expect(r.stdout).toContain(shows)
    expect(r.stdout).toContain('input incomplete')
    // Every error is listed after the first line, with its code.
    const n = Number(FIRST_LINE.exec(firstLine(r.stderr))![1])
    expect(r.stderr.split('\n').filter((l) => l.startsWith('kp: error: '))).toHaveLength(
      Math.min(n, 20),
    )
  })

  it.each(PARTIAL)(
    '$what: --json is the state with its errors and complete: false',
    async ({args, shows}) => {
      const r = await runKpInProcess(['list', '--json', ...args()])
      expect(r.exitCode).toBe(3)
      const state = JSON.parse(r.stdout)
      expect(state.kind).toBe('ProxyState')
      expect(state.complete).toBe(false)
      expect(state.diagnostics.some((d: {severity: string}) => d.severity === 'error')).toBe(true)
      expect(r.stdout).toContain(shows.split(':')[0]!.split('/').pop())
    },
  )

  it('the state it printed reads back as incomplete: exit 3 again', async () => {
    const first = await runKpInProcess(['list', '--json', ...PARTIAL[0]!.args()])
    const saved = file('saved-partial.json', first.stdout)
    const again = await runKpInProcess(['list', '--json', '-f', saved])
    expect(again.exitCode).toBe(3)
    expect(firstLine(again.stderr)).toMatch(FIRST_LINE)
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(first.stdout))
  })

  it('input of which nothing could be read still ends with its error only (nft -j cut in its first entry)', async () => {
    const r = await runKpInProcess(['list', '-f', file('cut.json', read(NFT_JSON).slice(0, 30))])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toBe('')
    expect(r.stderr).not.toContain('input is incomplete')
  })

  it('a complete input says nothing of completeness, and its state has no complete member', async () => {
    const r = await runKpInProcess(['list', '--json', '-f', IPT])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).not.toContain('incomplete')
    expect(JSON.parse(r.stdout)).not.toHaveProperty('complete')
  })
})

describe('kp explain and kp diff on partial input', () => {
  const damaged = () =>
    file('explain-damaged.rules', replaced(read(IPT), '10.180.0.1:80', '10.180.0.999:80'))

  it('explain answers from what was read, says the input is incomplete, exit 3', async () => {
    const r = await runKpInProcess(['explain', 'ns1/svc1', '-f', damaged()])
    expect(r.exitCode).toBe(3)
    expect(firstLine(r.stderr)).toMatch(FIRST_LINE)
    expect(r.stdout).toContain('ns1/svc1:p80/tcp')
    expect(r.stdout).toContain('The input is incomplete')
    const j = await runKpInProcess(['explain', 'ns1/svc1', '--json', '-f', damaged()])
    expect(j.exitCode).toBe(3)
    expect(JSON.parse(j.stdout)).toMatchObject({kind: 'ExplainResult', complete: false})
  })

  it("explain reads only the service's own lines: damage elsewhere leaves its answer complete", async () => {
    const r = await runKpInProcess(['explain', 'ns4/svc4', '--json', '-f', damaged()])
    expect(r.exitCode).toBe(0)
    expect(JSON.parse(r.stdout).complete).toBe(true)
  })

  it('explain of a complete input: complete: true', async () => {
    const j = await runKpInProcess(['explain', 'ns4/svc4', '--json', '-f', IPT])
    expect(j.exitCode).toBe(0)
    expect(JSON.parse(j.stdout).complete).toBe(true)
  })

  it('diff with differences still ends 3 (not 1) when a side is incomplete', async () => {
    const r = await runKpInProcess(['diff', damaged(), IPT, '--json'])
    expect(r.exitCode).toBe(3)
    expect(firstLine(r.stderr)).toMatch(FIRST_LINE)
    const d = JSON.parse(r.stdout)
    expect(d.equal).toBe(false)
    expect(d.a.complete).toBe(false)
    expect(d.b.complete).toBe(true)
  })

  it('diff that finds no difference in what it read ends 3 (not 0)', async () => {
    const a = damaged()
    const r = await runKpInProcess(['diff', a, a])
    expect(r.exitCode).toBe(3)
    expect(firstLine(r.stderr)).toMatch(FIRST_LINE)
  })
})

describe('kp migrate on partial input', () => {
  const damaged = () =>
    file('migrate-damaged.rules', replaced(read(IPT), '10.180.0.1:80', '10.180.0.999:80'))

  it('writes no rules, prints the findings and the errors, exit 3', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', damaged()])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toBe('')
    expect(firstLine(r.stderr)).toMatch(FIRST_LINE)
    expect(r.stderr).toContain('[INPUT_BAD_ADDRESS]')
    expect(r.stderr).toContain('finding(s)')
    expect(r.stderr).toContain('no rules written')
  })

  it('--json: no text, no files, complete: false', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'iptables', '--json', '-f', damaged()])
    expect(r.exitCode).toBe(3)
    const m = JSON.parse(r.stdout)
    expect(m).toMatchObject({kind: 'MigrateResult', text: null, files: [], complete: false})
    expect(m.findings.length).toBeGreaterThan(0)
  })

  it('--allow-incomplete writes them under a header naming the errors, still exit 3', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '--allow-incomplete',
      '-f',
      damaged(),
    ])
    expect(r.exitCode).toBe(3)
    const lines = r.stdout.split('\n')
    expect(lines[0]).toMatch(/^# kp: INCOMPLETE INPUT: 1 error\(s\)/)
    expect(lines.slice(0, 4).join('\n')).toContain('10.180.0.999')
    expect(r.stdout).toContain('add table ip kube-proxy')
  })

  it('--allow-incomplete --out-dir: a header in each file that takes comments, a warning for ipvsadm-restore', async () => {
    const dir = join(tmp, 'ipvs-out')
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'ipvs',
      '--allow-incomplete',
      '--out-dir',
      dir,
      '-f',
      damaged(),
    ])
    expect(r.exitCode).toBe(3)
    for (const name of readdirSync(dir)) {
      const head = readFileSync(join(dir, name), 'utf8').split('\n')[0]
      if (name === 'ipvsadm-restore.txt') expect(head).not.toContain('#')
      else expect(head).toMatch(/^# kp: INCOMPLETE INPUT/)
    }
    expect(r.stderr).toContain('ipvsadm-restore.txt: no comment syntax')
  })

  it('--check on incomplete input ends 3 whatever the findings', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '--check', '-f', damaged()])
    expect(r.exitCode).toBe(3)
  })
})

describe('redacted addresses', () => {
  const SPELLINGS = [
    'x.x.x.x',
    '10.x.x.x',
    '<IP>',
    '<node-ip>',
    'REDACTED',
    '[REDACTED]',
    '***',
    'XXX',
  ]

  it.each(SPELLINGS)(
    'iptables endpoint %s: a warning, the endpoint counted as redacted, exit 0',
    async (spelling) => {
      const path = file(
        `ipt-redacted-${SPELLINGS.indexOf(spelling)}.rules`,
        replaced(read(IPT), '10.180.0.1:80', `${spelling}:80`),
      )
      const r = await runKpInProcess(['list', '--json', '-f', path])
      expect(r.exitCode).toBe(0)
      expect(r.stderr).toContain('[INPUT_REDACTED]')
      expect(r.stderr).not.toContain('incomplete')
      const state = JSON.parse(r.stdout)
      expect(state).not.toHaveProperty('complete')
      const svc1 = state.services.find((s: {name: string}) => s.name === 'svc1')
      expect(svc1.endpoints).toEqual([
        {ip: null, port: 80, local: null, share: 1, weight: null, state: null, redacted: true},
      ])
      const e = await runKpInProcess(['explain', 'ns1/svc1', '-f', path])
      expect(e.exitCode).toBe(0)
      expect(e.stdout).toContain('<redacted>:80')
    },
  )

  it.each(SPELLINGS)(
    'nft ClusterIP %s: frontend ip null, redacted, the service kept, exit 0',
    async (spelling) => {
      const path = file(
        `nft-redacted-${SPELLINGS.indexOf(spelling)}.nft`,
        replaced(read(NFT), '172.30.0.41', spelling),
      )
      const r = await runKpInProcess(['list', '--json', '-f', path])
      expect(r.exitCode).toBe(0)
      expect(r.stderr).toContain('[INPUT_REDACTED]')
      const svc1 = JSON.parse(r.stdout).services.find((s: {name: string}) => s.name === 'svc1')
      expect(svc1.frontends[0]).toMatchObject({
        type: 'ClusterIP',
        ip: null,
        port: 80,
        redacted: true,
      })
      expect(svc1.endpoints).toHaveLength(1)
      const t = await runKpInProcess(['list', '-f', path])
      expect(t.stdout).toContain('ClusterIP <redacted>:80')
    },
  )

  it('ipvsadm: redacted real servers are counted apart, not taken for resolved names', async () => {
    const text = replaced(read(IPVSADM), '10.244.1.3:53 ', 'x.x.x.x:53    ').replaceAll(
      '10.244.2.4:53 ',
      'x.x.x.x:53    ',
    )
    const r = await runKpInProcess(['list', '--json', '-f', file('redacted.ipvs', text)])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).not.toContain('IPVS_NOT_NUMERIC')
    const dns = JSON.parse(r.stdout).services.find(
      (s: {frontends: Array<{ip: string}>; protocol: string; family: string}) =>
        s.protocol === 'UDP' && s.family === 'IPv4' && s.frontends[0]!.ip === '10.96.0.10',
    )
    expect(dns.endpoints.map((e: {ip: string | null}) => e.ip)).toEqual([null, null])
  })

  it('cluster objects: a redacted clusterIP and two redacted endpoint addresses', async () => {
    const text = replaced(read(KUBE), '172.30.0.41', 'x.x.x.x').replace(
      '    - 10.180.0.1\n',
      "    - '<IP>'\n",
    )
    const r = await runKpInProcess(['list', '--json', '-f', file('redacted.yaml', text)])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('[INPUT_REDACTED]')
    const svc1 = JSON.parse(r.stdout).services.find((s: {name: string}) => s.name === 'svc1')
    expect(svc1.frontends[0]).toMatchObject({ip: null, redacted: true})
    expect(svc1.endpoints).toMatchObject([{ip: null, redacted: true}])
  })

  it('a hand-redacted saved state reads with the address as null', async () => {
    const text = replaced(read(STATE), '"10.180.0.1"', '"x.x.x.x"')
    const r = await runKpInProcess(['list', '--json', '-f', file('redacted-state.json', text)])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('[INPUT_REDACTED]')
    const svc1 = JSON.parse(r.stdout).services.find((s: {name: string}) => s.name === 'svc1')
    expect(svc1.endpoints[0]).toMatchObject({ip: null, port: 80, redacted: true})
  })

  it('migrate leaves a redacted endpoint out of the rules and says so', async () => {
    const path = file('migrate-redacted.rules', replaced(read(IPT), '10.180.0.1:80', 'x.x.x.x:80'))
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '--json', '-f', path])
    expect(r.exitCode).toBe(0)
    const m = JSON.parse(r.stdout)
    expect(m.text).not.toContain('x.x.x.x')
    expect(m.findings.map((f: {title: string}) => f.title)).toContain('redacted endpoint left out')
  })
})
