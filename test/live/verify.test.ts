/**
 * `kp verify` against the real kernel: the sandbox's namespaces are made and deleted by kp itself
 * (kp-v-<pid>-…). The corpus and the generated node must agree with `kp explain`; a generated
 * ruleset broken on purpose in seven ways must be caught, each fault in the service it breaks.
 * Stand-ins: none but the sink namespace, which plays every endpoint (no pods exist here).
 */
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {ROOT, kpCommand, runKpAsync} from '../helpers/run-cli.js'
import {kernelUnavailable, skipEachWhen} from './netns.js'
import {differing, verifyJson} from './verify-run.js'
import type {VerifyResult} from '../../src/analyze/verify/types.js'

const TOOLS = ['ip', 'iptables-restore', 'nft', 'conntrack', 'nfacct', 'sysctl']
const skipReason = kernelUnavailable('test/live/verify.test.ts', TOOLS)
skipEachWhen(skipReason)

const tmp = mkdtempSync(join(tmpdir(), 'kp-verify-test-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/**
 * Sandbox namespaces whose kp is gone: leaked. A kp still running (another test file, another
 * run) removes its own, so those are not counted.
 */
function leftovers(): string[] {
  const r = spawnSync('ip', ['netns', 'list'], {encoding: 'utf8'})
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  return (r.stdout ?? '')
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((l) => /^kp-v-\d+-/.test(l) && !alive(Number(l.split('-')[2])))
}

const verify = (file: string, ...more: string[]) => verifyJson('-f', file, ...more)

describe('kp verify on the kernel', () => {
  it('finds the corpus and the generated node in agreement with kp explain', async () => {
    const files = [
      'fixtures/iptables/upstream-overall/input.rules',
      'fixtures/iptables/realsave-multipleservices-older/input.rules',
      'fixtures/nft/upstream-overall/input.nft',
      'fixtures/nft/kube-proxy-1.37/input.nft',
    ]
    for (const file of files) {
      const {result, exitCode, stderr} = await verify(join(ROOT, file))
      expect({file, differing: differing(result), stderr: exitCode === 0 ? '' : stderr}).toEqual({
        file,
        differing: {},
        stderr: '',
      })
      expect(result.summary.agrees).toBeGreaterThan(0)
      // Nothing is left unprobed (localhost NodePorts of externalTrafficPolicy=Local services
      // included: the rules show where the node's own connection goes).
      expect(
        result.services
          .filter((s) => s.verdict === 'not verified')
          .map((s) => `${s.service}: ${s.reason}`),
      ).toEqual([])
    }
    expect(leftovers()).toEqual([])
  }, 120_000)

  it('an old-layout LB source range: an outside source only marked for drop passes un-NATed, as explain now says', async () => {
    // handmade-legacy-xlb: nat KUBE-FW ends in KUBE-MARK-DROP and KUBE-FIREWALL sits in INPUT/OUTPUT only.
    const {result, exitCode, stderr} = await verify(
      join(ROOT, 'fixtures/iptables/handmade-legacy-xlb/input.rules'),
    )
    expect({differing: differing(result), stderr: exitCode === 0 ? '' : stderr}).toEqual({
      differing: {},
      stderr: '',
    })
    const lb = result.services.find((s) => s.service === 'default/lb:https/tcp')!
    const outside = lb.checks.find(
      (c) => c.client === 'external' && c.frontend === '198.51.100.5:443',
    )
    expect(outside).toMatchObject({expected: 'passed', agrees: true, observed: {passed: 3}})
    // KUBE-XLB without "route LOCAL traffic": 127.0.0.1:NodePort from the node goes to the local
    // endpoint only, or is dropped (KUBE-MARK-DROP, then the kubelet's KUBE-FIREWALL in OUTPUT).
    const localhost = (service: string) =>
      result.services
        .find((s) => s.service === service)!
        .checks.find((c) => c.client === 'localhost')
    expect(localhost('default/lb:https/tcp')).toMatchObject({
      frontend: '127.0.0.1:30443',
      agrees: true,
      observed: {'forwarded 10.244.1.7:8443': 3},
    })
    expect(localhost('default/nolocal:p/tcp')).toMatchObject({
      frontend: '127.0.0.1:30090',
      agrees: true,
      observed: {dropped: 3},
    })
    expect(result.summary.notVerified).toBe(0)
    expect(leftovers()).toEqual([])
  }, 60_000)

  it("KUBE-XLB before ≈1.15 against kp's newer iptables rules: the node's own connection to an ETP=Local NodePort reaches every endpoint, under MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS", async () => {
    const file = join(ROOT, 'fixtures/iptables/handmade-legacy-xlb/input.rules')
    const rendered = await runKpAsync(['migrate', '--to', 'iptables', '-f', file], {
      timeout: 60_000,
    })
    expect(rendered.exitCode).toBe(0)
    const newer = join(tmp, 'legacy-xlb-newer.iptables')
    writeFileSync(newer, rendered.stdout)
    const {result} = await verify(file, '--against', newer)
    expect(differing(result)).toEqual({})
    // default/nolocal has no local endpoint: dropped today, forwarded to the remote one by the
    // newer rules. (default/lb's local-only spread is caught only when a probe leaves the node.)
    const filed = result.attributed?.announced.find(
      (f) => f.id === 'MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS',
    )
    expect(filed?.differences).toContainEqual(
      expect.objectContaining({
        service: 'default/nolocal:p/tcp',
        client: 'localhost',
        frontend: '127.0.0.1:30090',
      }),
    )
    expect(
      result.attributed?.unexpected.filter((d) => d.client === 'localhost' || d.client === 'node'),
    ).toEqual([])
    // default/lb from outside its source range: only marked for drop today (leaves un-NATed),
    // dropped in filter by the newer rules: announced by MIGRATE_MARKED_DROPS_ENFORCED.
    const marked = result.attributed?.announced.find(
      (f) => f.id === 'MIGRATE_MARKED_DROPS_ENFORCED',
    )
    expect(marked?.differences).toContainEqual(
      expect.objectContaining({
        service: 'default/lb:https/tcp',
        client: 'external',
        frontend: '198.51.100.5:443',
      }),
    )
    expect(result.attributed?.unexpected).toEqual([])
    expect(leftovers()).toEqual([])
  }, 120_000)

  it('an old-layout "no local endpoints" LB IP is only marked for drop: it passes un-NATed, dropped when the node holds it', async () => {
    // fixtures/verify/legacy-xlb-lb-nolocal: KUBE-FW -> KUBE-XLB -> KUBE-MARK-DROP for an
    // ETP=Local LB IP without local endpoints; the kubelet's KUBE-FIREWALL drops marks in INPUT
    // and OUTPUT only, so forwarded (the LB IP is not the node's) the connection leaves un-NATed.
    const file = join(ROOT, 'fixtures/verify/legacy-xlb-lb-nolocal/input.rules')
    const check = (r: VerifyResult, client: string, frontend: string) =>
      r.services
        .find((s) => s.service === 'default/nolocal:p/tcp')!
        .checks.find((c) => c.client === client && c.frontend === frontend)
    const {result, exitCode, stderr} = await verify(file)
    expect({differing: differing(result), stderr: exitCode === 0 ? '' : stderr}).toEqual({
      differing: {},
      stderr: '',
    })
    expect(check(result, 'external', '198.51.100.6:80')).toMatchObject({
      expected: 'passed',
      agrees: true,
      observed: {passed: 3},
    })
    // The NodePort and 127.0.0.1:NodePort reach the node itself: dropped in INPUT / OUTPUT.
    expect(check(result, 'external', '*:30090')).toMatchObject({
      agrees: true,
      observed: {dropped: 3},
    })
    expect(check(result, 'localhost', '127.0.0.1:30090')).toMatchObject({
      agrees: true,
      observed: {dropped: 3},
    })
    // A node that holds the LB IP itself (a cloud's local route): delivered here, so dropped.
    const own = await verify(file, '--node-ip', '198.51.100.6')
    expect(own.result.addresses.nodeIps).toContain('198.51.100.6')
    expect(differing(own.result)).toEqual({})
    expect(check(own.result, 'external', '198.51.100.6:80')).toMatchObject({
      expected: 'dropped',
      agrees: true,
      observed: {dropped: 3},
    })
    expect(leftovers()).toEqual([])
  }, 120_000)

  it('nftables: 127.0.0.1:NodePort passes un-NATed, rejected where the kube-proxy 1.37 map names it; iptables rules for it differ under MIGRATE_LOCALHOST_NODEPORTS_ENABLED', async () => {
    // fixtures/verify/nft-localhost-reject: tcp 30443 and udp 30053 in localhost-nodeport-reject-ports,
    // tcp 31080 not (a 1.37 userspace proxy would serve it; the sandbox's listener stands in for it).
    const dir = join(ROOT, 'fixtures/verify/nft-localhost-reject')
    const rendered = await runKpAsync(
      [
        'migrate',
        '--to',
        'iptables',
        '-f',
        join(dir, 'cluster.yaml'),
        '--node',
        'this-node',
        '--pod-cidr',
        '10.244.0.0/16',
        '--local-detector',
        'cidr',
        '--from',
        'nftables',
      ],
      {timeout: 60_000},
    )
    expect(rendered.exitCode).toBe(0)
    const ipt = join(tmp, 'localhost-reject.iptables')
    writeFileSync(ipt, rendered.stdout)
    const {result} = await verify(join(dir, 'ruleset.nft'), '--against', ipt)
    expect(differing(result)).toEqual({})
    const localhost = (r: VerifyResult) =>
      Object.fromEntries(
        r.services
          .flatMap((s) => s.checks)
          .filter((c) => c.client === 'localhost')
          .map((c) => [c.frontend, c.observed]),
      )
    expect(localhost(result)).toEqual({
      '127.0.0.1:30443': {rejected: 3},
      '127.0.0.1:30053': {blocked: 3},
      '127.0.0.1:31080': {passed: 3},
    })
    // iptables mode DNATs all three: announced by the finding of migrating these rules to iptables.
    const announced = result.attributed?.announced ?? []
    const enabled = announced.find((f) => f.id === 'MIGRATE_LOCALHOST_NODEPORTS_ENABLED')
    expect(enabled?.differences.map((d) => d.frontend).sort()).toEqual([
      '127.0.0.1:30053',
      '127.0.0.1:30443',
      '127.0.0.1:31080',
    ])
    expect(result.attributed?.unexpected.filter((d) => d.client === 'localhost')).toEqual([])
    // A pod to a ClusterIP on an unused port: rejected by these nftables rules, passed un-NATed
    // by iptables mode, which MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN announces.
    const open = announced.find((f) => f.id === 'MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN')
    expect([...new Set(open?.differences.map((d) => d.client))]).toEqual(['unused-port'])
    expect(result.attributed?.unexpected).toEqual([])
    expect(leftovers()).toEqual([])
  }, 120_000)

  it('iptables with localhost NodePorts off: 127.0.0.1:NodePort passes un-NATed, rejected for a service without endpoints', async () => {
    // The refusal comes from filter INPUT over loopback, after conntrack confirmed the entry.
    const {result} = await verify(
      join(ROOT, 'fixtures/verify/iptables-localhost-off/iptables-save.txt'),
    )
    expect(differing(result)).toEqual({})
    const localhost = Object.fromEntries(
      result.services
        .flatMap((s) => s.checks)
        .filter((c) => c.client === 'localhost')
        .map((c) => [c.frontend, c.observed]),
    )
    // UDP 30053 reaches the node's bound socket un-NATed; a UDP NodePort without endpoints
    // (gen/emptyudp, added here) is refused by the same filter rule: the client sees the ICMP error.
    expect(localhost).toEqual({
      '127.0.0.1:30053': {passed: 3},
      '127.0.0.1:30099': {rejected: 3},
      '127.0.0.1:30443': {passed: 3},
      '127.0.0.1:31080': {passed: 3},
    })
    const text = readFileSync(
      join(ROOT, 'fixtures/verify/iptables-localhost-off/iptables-save.txt'),
      'utf8',
    ).replace(
      /^(-A KUBE-EXTERNAL-SERVICES .*gen\/empty:p80.*)$/m,
      '$1\n' +
        '-A KUBE-SERVICES -m comment --comment "gen/emptyudp:p53 has no endpoints" -m udp -p udp -d 172.20.0.17 --dport 53 -j REJECT\n' +
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "gen/emptyudp:p53 has no endpoints" -m addrtype --dst-type LOCAL -m udp -p udp --dport 30097 -j REJECT',
    )
    const file = join(tmp, 'localhost-off-udp.txt')
    writeFileSync(file, text)
    const udp = await verify(file)
    expect(differing(udp.result)).toEqual({})
    expect(
      udp.result.services
        .flatMap((s) => s.checks)
        .filter((c) => c.client === 'localhost' && c.frontend === '127.0.0.1:30097')
        .map((c) => c.observed),
    ).toEqual([{blocked: 3}])
    expect(leftovers()).toEqual([])
  }, 90_000)

  it('iptables with localhost NodePorts on: a UDP 127.0.0.1:NodePort is DNATed to the endpoints', async () => {
    // The datagram's conntrack reply tuple names the endpoint it was DNATed to.
    const {result} = await verify(
      join(ROOT, 'fixtures/verify/iptables-localhost-on/iptables-save.txt'),
    )
    expect(differing(result)).toEqual({})
    const udp = result.services
      .flatMap((s) => s.checks)
      .find((c) => c.client === 'localhost' && c.frontend === '127.0.0.1:30053')!
    expect(udp.agrees).toBe(true)
    expect(Object.keys(udp.observed).sort()).toEqual([
      'forwarded 10.244.1.11:53 masqueraded',
      'forwarded 10.244.2.11:53 masqueraded',
    ])
    expect(leftovers()).toEqual([])
  }, 60_000)

  it('catches each fault of a broken migrated ruleset in the service it breaks (exit 1)', async () => {
    let text = readFileSync(join(ROOT, 'fixtures/verify/generated-node/ruleset.nft'), 'utf8')
    const breaks: Array<[string, RegExp, string]> = [
      // wrong DNAT target
      ['gen/web', /1 : 10\.244\.2\.10 \. 8080/, '1 : 10.244.2.99 . 8080'],
      // 2:1 weighting of two endpoints
      [
        'gen/dns',
        /numgen random mod 2 map \{ 0 : 10\.244\.1\.11 \. 53 , 1 : 10\.244\.2\.11 \. 53 \}/,
        'numgen random mod 3 map { 0 : 10.244.1.11 . 53 , 1 : 10.244.1.11 . 53 , 2 : 10.244.2.11 . 53 }',
      ],
      // missing source-range element
      ['gen/shop', /ip saddr != \{ 100\.64\.10\.0\/24 \}/, 'ip saddr != { 100.64.11.0/24 }'],
      // externalTrafficPolicy=Local sent to all endpoints
      ['gen/shop', /(external-ZMSLOFH5-gen\/shop\/tcp\/p80) goto local-/, '$1 goto service-'],
      // session affinity not recorded
      ['gen/sticky', /^add rule .* update @affinity-.*$/gm, ''],
      // lost masquerade of external traffic
      ['gen/ext', /^add rule ip kube-proxy external-65GKXSLY.* comment "masquerade"$/m, ''],
      // missing hairpin masquerade
      ['gen/api', /^add element ip kube-proxy hairpin-connections \{ 10\.244\.0\.12 .*$/m, ''],
    ]
    for (const [, pattern, replacement] of breaks) {
      const before = text
      text = text.replace(pattern, replacement)
      expect(text).not.toBe(before)
    }
    const broken = join(tmp, 'broken.nft')
    writeFileSync(broken, text)
    const generated = join(ROOT, 'fixtures/verify/generated-node/ruleset.nft')
    // 400 probes: a 2:1 spread over two endpoints is then far past the test's p < 1e-4 (about
    // 1e-11); at the default 100 it fails it about one run in five, before the re-probe.
    const {result: both, exitCode} = await verify(generated, '--against', broken, '--probes', '400')
    expect(exitCode).toBe(1)
    // The rules as generated agree; the broken ones differ where broken, and only there.
    expect(differing(both)).toEqual({})
    const result = both.against!.result
    const found = differing(result)
    const all = (prefix: string) =>
      Object.entries(found)
        .filter(([k]) => k.startsWith(`${prefix}:`))
        .flatMap(([, v]) => v)
        .join('\n')
    expect(
      Object.keys(found)
        .map((k) => k.split(':')[0])
        .sort(),
    ).toEqual(['gen/api', 'gen/dns', 'gen/ext', 'gen/shop', 'gen/sticky', 'gen/web'])
    expect(all('gen/web')).toMatch(/reached 10\.244\.2\.99:8080 .*which explain does not name/)
    expect(all('gen/dns')).toMatch(/does not fit the shares/)
    expect(all('gen/shop')).toMatch(
      /inside-source-range: \d+ of \d+ were dropped, expected forwarded/,
    )
    expect(all('gen/shop')).toMatch(/external: reached 10\.244\.3\.20:8080/)
    expect(all('gen/sticky')).toMatch(/session affinity/)
    expect(all('gen/ext')).toMatch(/external: .*not as expected: masqueraded/)
    expect(all('gen/api')).toMatch(/hairpin: .*masquerade exactly when sent back to itself/)
    expect(result.services.find((s) => s.service.startsWith('gen/empty'))?.verdict).toBe('agrees')
    // nftables to nftables: no migration finding announces any of these faults.
    expect(both.attributed?.announced).toEqual([])
    expect(
      [...new Set(both.attributed?.unexpected.map((d) => d.service.split(':')[0]))].sort(),
    ).toEqual(['gen/api', 'gen/dns', 'gen/ext', 'gen/shop', 'gen/sticky', 'gen/web'])
    expect(leftovers()).toEqual([])
  }, 120_000)

  it('files differences a migration finding announces under it, and exits 0 when all are', async () => {
    // nftables rules serving NodePorts on the sandbox's first node address only: from the second
    // one they pass un-NATed, which MIGRATE_NODEPORT_ADDRESSES announces for iptables -> nftables.
    const dump = join(ROOT, 'fixtures/iptables/upstream-overall/input.rules')
    const rendered = await runKpAsync(
      ['migrate', '--to', 'nftables', '-f', dump, '--nodeport-addresses', '198.18.0.10/32'],
      {timeout: 60_000},
    )
    expect(rendered.exitCode).toBe(0)
    const nft = join(tmp, 'primary-only.nft')
    // kube-proxy 1.37's localhost reject map (alpha gate) for 3003: rejected instead of passed,
    // still the difference MIGRATE_LOCALHOST_NODEPORTS announces.
    const table = 'add table ip kube-proxy { comment "rules for kube-proxy" ; }\n'
    expect(rendered.stdout).toContain(table)
    const k = 'ip kube-proxy localhost-nodeport-reject'
    writeFileSync(
      nft,
      rendered.stdout.replace(
        table,
        `${table}add chain ${k}-tcp\nadd map ${k}-ports { type inet_proto . inet_service : verdict ; }\n`,
      ) +
        `add rule ${k}-tcp reject\n` +
        `add rule ip kube-proxy nodeport-endpoints-check ip daddr 127.0.0.0/8 meta l4proto . th dport vmap @localhost-nodeport-reject-ports\n` +
        `add element ${k}-ports { tcp . 3003 : goto localhost-nodeport-reject-tcp }\n`,
    )
    const {result, exitCode, stderr} = await verify(dump, '--against', nft)
    expect(result.addresses.nodeIps[0]).toBe('198.18.0.10')
    expect(differing(result)).toEqual({})
    expect(result.attributed?.unexpected).toEqual([])
    // Differences by design, probed too: 127.0.0.1:NodePort is DNATed by iptables only, and a
    // ClusterIP on a port no service uses passes un-NATed in iptables, is rejected in nftables.
    const announced = result.attributed?.announced ?? []
    const clients = (id: string) => [
      ...new Set(announced.find((f) => f.id === id)?.differences.map((d) => d.client)),
    ]
    expect(announced.map((f) => f.id).sort()).toEqual([
      'MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED',
      'MIGRATE_LOCALHOST_NODEPORTS',
      'MIGRATE_NODEPORT_ADDRESSES',
    ])
    expect(clients('MIGRATE_NODEPORT_ADDRESSES')).toEqual(['second-node-address'])
    expect(clients('MIGRATE_LOCALHOST_NODEPORTS')).toEqual(['localhost'])
    expect(clients('MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED')).toEqual(['unused-port'])
    const against = result.against!.result.services.flatMap((s) => s.checks)
    const localhost = against.filter((c) => c.client === 'localhost')
    expect(localhost.map((c) => c.frontend).sort()).toEqual([
      '127.0.0.1:3001',
      '127.0.0.1:3002',
      '127.0.0.1:3003',
    ])
    expect(Object.fromEntries(localhost.map((c) => [c.frontend, c.observed]))).toEqual({
      '127.0.0.1:3001': {passed: 3},
      '127.0.0.1:3002': {passed: 10},
      '127.0.0.1:3003': {rejected: 3},
    })
    const unused = against.filter((c) => c.client === 'unused-port')
    expect(unused).toHaveLength(6)
    expect(unused.every((c) => Object.keys(c.observed).join() === 'rejected')).toBe(true)
    // Through the iptables rules themselves both agree with explain's answer.
    const own = result.services.flatMap((s) => s.checks)
    expect(own.filter((c) => c.client === 'localhost' || c.client === 'unused-port')).toHaveLength(
      9,
    )
    expect({exitCode, stderr: exitCode === 0 ? '' : stderr}).toEqual({exitCode: 0, stderr: ''})
    expect(leftovers()).toEqual([])
  }, 120_000)

  it('refuses to run inside a network namespace it did not create (exit 4), and leaves nothing', async () => {
    const ns = `kp-test-verify-${process.pid}`
    spawnSync('ip', ['netns', 'add', ns])
    try {
      const r = await runKpAsync(
        ['verify', '-f', join(ROOT, 'fixtures/nft/upstream-overall/input.nft')],
        {prefix: ['ip', 'netns', 'exec', ns]},
      )
      expect(r.exitCode).toBe(4)
      expect(r.stderr).toMatch(
        /inside the network namespace kp-test-verify-\d+, which it did not create/,
      )
    } finally {
      spawnSync('ip', ['netns', 'del', ns])
    }
    expect(leftovers()).toEqual([])
  })

  it('removes its namespaces when interrupted (SIGINT)', async () => {
    const [cmd, ...args] = kpCommand()
    const child = spawn(
      cmd!,
      [
        ...args,
        'verify',
        '--probes',
        '20000',
        '-f',
        join(ROOT, 'fixtures/nft/upstream-overall/input.nft'),
      ],
      {cwd: ROOT, stdio: 'ignore'},
    )
    const mine = () =>
      spawnSync('ip', ['netns', 'list'], {encoding: 'utf8'})
        .stdout.split('\n')
        .filter((l) => l.startsWith(`kp-v-${child.pid}-`))
    const deadline = Date.now() + 60_000
    while (mine().length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect(mine().length).toBe(4)
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    )
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(mine()).toEqual([])
  }, 90_000)
})
