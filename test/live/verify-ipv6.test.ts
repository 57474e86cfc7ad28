/**
 * `kp verify` of IPv6 service ports against the real kernel: ip6tables-restore (alone and with an
 * IPv4 dump of the same node), `table ip6 kube-proxy` through nft, conntrack's IPv6 entries. The
 * IPv6 fixtures must agree with `kp explain`; an IPv6 ruleset broken on purpose must be caught
 * where it is broken. kp makes and deletes its own kp-v-<pid>-… namespaces.
 * Stand-ins: none but the sink namespace, which plays every endpoint (no pods exist here).
 */
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {sctpReason} from '../../src/analyze/verify/plan.js'
import type {VerifyResult} from '../../src/analyze/verify/types.js'
import {ROOT, runKpAsync} from '../helpers/run-cli.js'
import {kernelUnavailable, skipEachWhen} from './netns.js'
import {differing, verifyJson} from './verify-run.js'

const TOOLS = ['ip', 'iptables-restore', 'ip6tables-restore', 'nft', 'conntrack', 'sysctl']
const skipReason = kernelUnavailable('test/live/verify-ipv6.test.ts', TOOLS)
skipEachWhen(skipReason)

const tmp = mkdtempSync(join(tmpdir(), 'kp-verify-ipv6-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const V6 = join(ROOT, 'fixtures/iptables/handmade-ipv6/input.rules')

const verify = verifyJson

/** The checks whose probes went to an IPv6 address, by client kind. */
const ipv6Clients = (r: VerifyResult) =>
  [
    ...new Set(
      r.services.flatMap((s) =>
        s.checks.filter((c) => c.source.includes(':') && c.probes > 0).map((c) => c.client),
      ),
    ),
  ].sort()

describe('kp verify of IPv6 service ports on the kernel', () => {
  it('finds the IPv6 fixtures (ip6tables, a dual-stack pair, nft ip6) in agreement with kp explain', async () => {
    const rendered = await runKpAsync(['migrate', '--to', 'nftables', '-f', V6], {
      timeout: 60_000,
    })
    expect(rendered.exitCode).toBe(0)
    const nft = join(tmp, 'ipv6.nft')
    writeFileSync(nft, rendered.stdout)
    expect(rendered.stdout).toMatch(/^add table ip6 kube-proxy$/m)
    const v4 = join(ROOT, 'fixtures/iptables/upstream-overall/input.rules')
    const dual = await runKpAsync(['migrate', '--to', 'nftables', '-f', v4, '-f', V6], {
      timeout: 60_000,
    })
    expect(dual.exitCode).toBe(0)
    const dualNft = join(tmp, 'dual.nft')
    writeFileSync(dualNft, dual.stdout)
    expect(dual.stdout).toMatch(/^add table ip kube-proxy$[^]*^add table ip6 kube-proxy$/m)
    const inputs: Array<{files: string[]; loadedWith: string}> = [
      {files: [V6], loadedWith: 'ip6tables-restore'},
      {
        files: [join(ROOT, 'fixtures/iptables/realsave-handmade-ipv6/input.rules')],
        loadedWith: 'ip6tables-restore',
      },
      {
        files: [v4, V6],
        loadedWith: 'iptables-restore + ip6tables-restore',
      },
      {files: [nft], loadedWith: 'nft -f'},
      {files: [dualNft], loadedWith: 'nft -f'},
    ]
    for (const {files, loadedWith} of inputs) {
      const {result, exitCode, stderr} = await verify(...files.flatMap((f) => ['-f', f]))
      expect({files, differing: differing(result), stderr: exitCode === 0 ? '' : stderr}).toEqual({
        files,
        differing: {},
        stderr: '',
      })
      expect(result.loadedWith).toBe(loadedWith)
      // Every kind of client probed an IPv6 frontend, and the kernel answered as explain says:
      // iptables passes a ClusterIP's unused port un-NATed, nftables rejects it in
      // cluster-ips-check (its ICMPv6 error seen on the SYN's resend: ProbeGroup.patient).
      const iptables = loadedWith !== 'nft -f'
      expect(ipv6Clients(result)).toEqual([
        'external',
        'hairpin',
        'inside-source-range',
        'node',
        'pod',
        'second-node-address',
        'unused-port',
      ])
      const unused = result.services
        .flatMap((s) => s.checks)
        .filter((c) => c.client === 'unused-port' && c.source.includes(':'))
      expect(unused.length).toBeGreaterThan(0)
      for (const c of unused)
        expect(c).toMatchObject({agrees: true, observed: iptables ? {passed: 3} : {rejected: 3}})
      if (iptables) expect(unused).toHaveLength(4)
      const svc7 = result.services.find((s) => s.service === 'ns7/svc7:p80/tcp')!
      expect(svc7.verdict).toBe('agrees')
      const pod = svc7.checks.find((c) => c.client === 'pod')!
      expect(Object.keys(pod.observed).sort()).toEqual([
        'forwarded [fd00:10:244:1::2]:8080',
        'forwarded [fd00:10:244:2::3]:8080',
        'forwarded [fd00:10:244::1]:8080',
      ])
      expect(
        result.services
          .filter((s) => s.verdict === 'not verified')
          .map((s) => `${s.service}: ${s.reason}`)
          .filter((line) => !/ 127\.0\.0\.1:\d+: externalTrafficPolicy=Local/.test(line)),
      ).toEqual([])
    }
  }, 180_000)

  it('catches each fault of a broken IPv6 ruleset in the service it breaks (exit 1)', async () => {
    let text = readFileSync(V6, 'utf8')
    const breaks: Array<[RegExp, string]> = [
      // wrong DNAT target
      [/--to-destination \[fd00:10:244:2::3\]:8080/, '--to-destination [fd00:10:244:2::99]:8080'],
      // lost masquerade of traffic from outside the pod network
      [/^-A KUBE-SVL-IRZIC2T5JBEVTWMR .* ! -s fd00:10:244::\/48 -j KUBE-MARK-MASQ\n/m, ''],
      // a source range that no longer holds the clients
      [/-s 2001:db8:1::\/48 -j KUBE-EXT-/, '-s 2001:db8:2::/48 -j KUBE-EXT-'],
    ]
    for (const [pattern, replacement] of breaks) {
      const before = text
      text = text.replace(pattern, replacement)
      expect(text).not.toBe(before)
    }
    const broken = join(tmp, 'broken-ipv6.rules')
    writeFileSync(broken, text)
    const {result: both, exitCode} = await verify('-f', V6, '--against', broken)
    expect(exitCode).toBe(1)
    expect(differing(both)).toEqual({})
    const found = differing(both.against!.result)
    expect(Object.keys(found).sort()).toEqual(['ns7/svc7:p80/tcp', 'ns9/svc9/tcp'])
    const svc7 = found['ns7/svc7:p80/tcp']!.join('\n')
    expect(svc7).toMatch(/reached \[fd00:10:244:2::99\]:8080 .*which explain does not name/)
    expect(svc7).toMatch(/inside-source-range: \d+ of \d+ were dropped, expected forwarded/)
    expect(found['ns9/svc9/tcp']!.join('\n')).toMatch(/external: .*not as expected: masqueraded/)
  }, 120_000)

  it('skips an SCTP port with the reason that holds on this kernel', async () => {
    // svc9 made SCTP (its chains renamed to the hashes kube-proxy gives an SCTP port).
    const text = readFileSync(V6, 'utf8')
      .replace(/-m tcp -p tcp -d fd00:10:96::9/g, '-m sctp -p sctp -d fd00:10:96::9')
      .replace(
        /(KUBE-SEP-(D22WKSEXYBJUX6IY|DZYPENPFZ4ZQ5MPK) .*)-m tcp -p tcp/g,
        '$1-m sctp -p sctp',
      )
      .replaceAll('KUBE-SVL-IRZIC2T5JBEVTWMR', 'KUBE-SVL-3MF56X4TM7QMSPDM')
      .replaceAll('KUBE-SEP-D22WKSEXYBJUX6IY', 'KUBE-SEP-SLVN5BAVYLOM54U6')
      .replaceAll('KUBE-SEP-DZYPENPFZ4ZQ5MPK', 'KUBE-SEP-TDUF7SLS4A5LB4QD')
    const file = join(tmp, 'sctp-ipv6.rules')
    writeFileSync(file, text)
    const {result, exitCode, stderr} = await verify('-f', file)
    expect({exitCode, stderr: exitCode === 0 ? '' : stderr}).toEqual({exitCode: 0, stderr: ''})
    expect(stderr).not.toMatch(/IPT_HASH_MISMATCH/)
    const kernelSctp = existsSync('/proc/sys/net/sctp') || existsSync('/proc/net/sctp')
    expect(result.services.find((s) => s.service === 'ns9/svc9/sctp')).toMatchObject({
      verdict: 'not verified',
      reason: sctpReason(kernelSctp),
    })
  }, 60_000)

  it('kp migrate --to iptables --verify loads the rendered IPv6 file with ip6tables-restore', async () => {
    const nft = join(tmp, 'for-migrate.nft')
    const rendered = await runKpAsync(['migrate', '--to', 'nftables', '-f', V6], {
      timeout: 60_000,
    })
    writeFileSync(nft, rendered.stdout)
    const r = await runKpAsync(['migrate', '--to', 'iptables', '--verify', '-f', nft], {
      timeout: 120_000,
    })
    // Each port differs only on its unused ClusterIP port (nftables rejects it, iptables passes
    // it), which MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN announces: exit 0.
    expect(r.stderr).toMatch(
      /rules loaded with ip6tables-restore\): 0 service port\(s\) agree, 4 differ, 0 not verified/,
    )
    expect(r.stderr).toMatch(/All 4 difference\(s\) are announced by migration findings/)
    expect(r.stderr).toMatch(/^ {2}MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN /m)
    expect(r.exitCode).toBe(0)
  }, 120_000)

  it('verifies a dual-stack service port in both families (one nft file from a cluster YAML)', async () => {
    // kube-dns has a ClusterIP in each family (the same service port name); default/sctp is SCTP.
    const yaml = join(
      ROOT,
      'fixtures/kube/ipvs-generated/cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml',
    )
    const rendered = await runKpAsync(['migrate', '--to', 'nftables', '-f', yaml], {
      timeout: 60_000,
    })
    expect(rendered.exitCode).toBe(0)
    const nft = join(tmp, 'cluster-dual.nft')
    writeFileSync(nft, rendered.stdout)
    const {result, exitCode, stderr} = await verify('-f', nft)
    expect({differing: differing(result), stderr: exitCode === 0 ? '' : stderr}).toEqual({
      differing: {},
      stderr: '',
    })
    const dns = result.services.find((s) => s.service === 'kube-system/kube-dns:dns/udp')!
    expect(dns.verdict).toBe('agrees')
    expect([...new Set(dns.checks.map((c) => c.frontend))].sort()).toEqual([
      '10.96.0.10:53',
      '[fd00:10:96::a]:53',
    ])
    const v6 = dns.checks.filter((c) => c.frontend === '[fd00:10:96::a]:53')
    expect(v6.every((c) => c.source.includes(':') && c.agrees)).toBe(true)
    // Both IPv6 endpoints reached by every client (masquerade as explain says, checked above).
    for (const c of v6)
      expect(Object.keys(c.observed).map((o) => o.split(' ')[1])).toEqual(
        expect.arrayContaining(['[fd00:10:244:1::3]:53', '[fd00:10:244:2::4]:53']),
      )
    const kernelSctp = existsSync('/proc/sys/net/sctp') || existsSync('/proc/net/sctp')
    expect(result.services.find((s) => s.service === 'default/sctp:s/sctp')?.reason).toBe(
      sctpReason(kernelSctp),
    )
  }, 60_000)
})
