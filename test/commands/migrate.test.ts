import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import type {Finding} from '../../src/analyze/findings.js'
import {runKpAsync} from '../helpers/run-cli.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const NODE_A = 'fixtures/migrate/ipvs-node-a/state.json'
const KEEPALIVED = 'fixtures/migrate/ipvs-keepalived/state.json'
const tmp = mkdtempSync(join(tmpdir(), 'kp-migrate-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const ids = (findings: Finding[]) => findings.map((f) => f.id)
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('kp migrate --check', () => {
  it('reports the IPVS-to-nftables caveats of node-a as one MigrateResult; exit status follows --fail-on error', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '-f',
      NODE_A,
      '--check',
      '--json',
    ])
    const doc = JSON.parse(r.stdout)
    expect(doc).toMatchObject({
      schemaVersion: 1,
      kind: 'MigrateResult',
      from: 'ipvs',
      to: 'nftables',
      text: null,
      files: [],
    })
    // What node-a shows (fixtures/migrate/ipvs-node-a/PROVENANCE.md): NodePorts on 10.0.0.10, an LB and an
    // externalIP bound to kube-ipvs0, ClientIP affinity on default/sticky, 10.244.2.7 draining at weight 0,
    // IPv6 kube-dns ports, healthCheckNodePort 32000, no kernel or nft version.
    expect(ids(doc.findings)).toEqual(
      expect.arrayContaining([
        'MIGRATE_NFT_KERNEL_UNKNOWN',
        'MIGRATE_NFT_TOOL_UNKNOWN',
        'MIGRATE_NODEPORT_ADDRESSES',
        'MIGRATE_HOST_FIREWALL_UNVERIFIED',
        'MIGRATE_IPVS_VIPS_NOT_LOCAL',
        'MIGRATE_SESSION_AFFINITY_SCOPE',
        'MIGRATE_IPVS_DRAINING',
        'MIGRATE_IPVS_DUAL_STACK',
        'MIGRATE_IPVS_CONFIG',
      ]),
    )
    // lb has a local endpoint on node-a, so IPVS's Local fallback is not in play; rr needs no finding.
    expect(ids(doc.findings)).not.toContain('MIGRATE_IPVS_LOCAL_FALLBACK')
    expect(ids(doc.findings)).not.toContain('MIGRATE_IPVS_SCHEDULER_STICKY')
    const draining = doc.findings.find((f: Finding) => f.id === 'MIGRATE_IPVS_DRAINING') as Finding
    expect(draining).toMatchObject({
      severity: 'info',
      services: ['default/web:http/tcp'],
      addresses: ['10.244.2.7:8080'],
    })
    expect(draining.evidence).toEqual([
      {path: 'fixtures/migrate/ipvs-node-a/ipvsadm-Sn.txt', line: 1},
    ])
    expect(
      doc.findings.find((f: Finding) => f.id === 'MIGRATE_HOST_FIREWALL_UNVERIFIED').action,
    ).toContain('32000')
    expect(r.exitCode).toBe(doc.findings.some((f: Finding) => f.severity === 'error') ? 1 : 0)
  })

  it('--fail-on warning and none move the threshold', async () => {
    expect(
      (
        await runKpInProcess([
          'migrate',
          '--to',
          'nftables',
          '-f',
          NODE_A,
          '--check',
          '--fail-on',
          'warning',
        ])
      ).exitCode,
    ).toBe(1)
    expect(
      (
        await runKpInProcess([
          'migrate',
          '--to',
          'nftables',
          '-f',
          KEEPALIVED,
          '--check',
          '--fail-on',
          'none',
          '--json',
        ])
      ).exitCode,
    ).toBe(0)
  })

  it('exits 1 on a foreign virtual server the switch would flush, with its path:line', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', KEEPALIVED, '--check'])
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toContain('ERROR MIGRATE_IPVS_FOREIGN_FLUSHED')
    expect(r.stdout).toContain('fixtures/migrate/ipvs-keepalived/ipvsadm-Sn.txt:44')
  })
})

describe('kp migrate', () => {
  it('writes the rules to stdout and the findings to stderr; --json carries rules, files and findings in one document', async () => {
    const r = await runKpInProcess(['migrate', '--to', 'nftables', '-f', NODE_A])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('table ip kube-proxy')
    expect(r.stdout).not.toContain('MIGRATE_')
    expect(r.stderr).toContain('INFO MIGRATE_IPVS_DRAINING')
    const j = await runKpInProcess(['migrate', '--to', 'nftables', '-f', NODE_A, '--json'])
    expect(j.exitCode).toBe(0)
    const doc = JSON.parse(j.stdout)
    expect(r.stdout).toBe(`${doc.text}\n`)
    expect(doc.files[0].text).toBe(doc.text)
    expect(ids(doc.findings)).toContain('MIGRATE_IPVS_DRAINING')
  })

  it('--out writes the rules to a file instead of stdout', async () => {
    const out = join(tmp, 'rules.txt')
    const w = await runKpInProcess(['migrate', '--to', 'iptables', '-f', NODE_A, '--out', out])
    expect(w.exitCode).toBe(0)
    expect(w.stdout).toBe('')
    expect(readFileSync(out, 'utf8')).toContain('*nat')
    expect(w.stderr).toContain('MIGRATE_NO_AUTOMATIC_CLEANUP')
  })

  it('--out-dir makes missing folders, and exits 4 where one cannot be made (it hung at full CPU under /proc)', async () => {
    const outDir = join(tmp, 'new', 'folder')
    // Spawned: a hang must end in a kill (timeout), not hold up the test worker.
    const ok = await runKpAsync(
      ['migrate', '--to', 'nftables', '-f', NODE_A, '--out-dir', outDir],
      {
        timeout: 30_000,
      },
    )
    expect(ok.exitCode).toBe(0)
    expect(readFileSync(join(outDir, 'kube-proxy.nft'), 'utf8')).toContain(
      'add table ip kube-proxy',
    )
    const refused = await runKpAsync(
      ['migrate', '--to', 'nftables', '-f', NODE_A, '--out-dir', '/proc/kp-test-no-such-folder'],
      {timeout: 30_000},
    )
    expect(refused.exitCode).toBe(4)
    expect(refused.stderr).toContain('cannot write /proc/kp-test-no-such-folder: ENOENT')
  })
})

describe('kp migrate target settings', () => {
  // Each is written into the rules as it is: before these checks, a newline in --local-interface
  // put `flush ruleset` on a line of its own in the nft script, one in --scheduler put `-C`
  // (clear every virtual server) into the ipvsadm-restore input, and a bad CIDR was dropped silently.
  it.each([
    ['--local-interface', 'eth0\nflush ruleset', 'nftables', 'an interface name'],
    ['--local-interface', 'eth0 accept', 'nftables', 'an interface name'],
    ['--scheduler', 'rr\n-C', 'ipvs', 'an IPVS scheduler'],
    ['--scheduler', 'foo', 'ipvs', 'an IPVS scheduler'],
    ['--masquerade-mark', '0x4000 ; flush ruleset', 'nftables', 'a mark'],
    ['--pod-cidr', 'notacidr', 'nftables', 'a CIDR'],
    ['--pod-cidr', '10.0.0.0/33', 'iptables', 'a CIDR'],
    ['--service-cidr', '10.96.0.0/12,10.96.0.0/abc', 'nftables', 'a CIDR'],
    ['--node-ip', '300.1.1.1', 'iptables', 'an IP address'],
    ['--nodeport-addresses', 'primary,eth0', 'nftables', 'a CIDR, an IP address, or primary'],
  ])(
    '%s %j is refused with exit 2 before anything is read or written',
    async (flag, value, to, expected) => {
      const r = await runKpInProcess(['migrate', '--to', to, '-f', NODE_A, flag, value])
      expect(r.exitCode).toBe(2)
      expect(r.stdout).toBe('')
      const bad = value.split(',').find((v) => v !== 'primary' && v !== '10.96.0.0/12')!
      // One line, the value in JSON quotes: a newline in it is shown as \n, never printed.
      expect(r.stderr).toMatch(
        new RegExp(
          `^kp: ${flag} ${escapeRegExp(JSON.stringify(bad))}: expected ${escapeRegExp(expected)}`,
        ),
      )
      expect(r.stderr.trim().split('\n')).toHaveLength(1)
    },
  )

  it('list flags take comma-separated values, as kube-proxy flags do (dual-stack pod CIDRs)', async () => {
    const r = await runKpInProcess([
      'migrate',
      '--to',
      'nftables',
      '-f',
      NODE_A,
      '--json',
      '--pod-cidr',
      '10.244.0.0/16,fd00:10:244::/56',
      '--nodeport-addresses',
      'primary,10.0.0.0/8',
    ])
    expect(r.exitCode).toBe(0)
    const doc = JSON.parse(r.stdout)
    expect(doc.text).toContain('ip saddr != 10.244.0.0/16')
    expect(doc.text).toContain('ip6 saddr != fd00:10:244::/56')
    expect(ids(doc.findings)).not.toContain('RENDER_MISSING_POD_CIDR')
    expect(ids(doc.findings)).not.toContain('RENDER_BAD_SETTING')
  })
})
