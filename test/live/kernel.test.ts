/**
 * Live reading against the real kernel: kube-proxy's rules from the corpus are loaded into a
 * network namespace made for the test, and kp run inside it must read the same model as from
 * the file. Skips (and says why) where namespaces cannot be made.
 */
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {chainHash, generateIptablesSave} from '../../scripts/bench/gen-iptables.mjs'
import type {BundleManifest} from '../../src/readers/bundle.js'
import type {ProxyState} from '../../src/model/types.js'
import {ROOT} from '../helpers/run-cli.js'
import {runKpInProcess} from '../helpers/run-in-process.js'
import {
  AS_NOBODY,
  Netns,
  addKubeProxyNfacctCounters,
  kernelUnavailable,
  nobodyUnavailable,
  objectsBeforeRules,
  runKpAsync,
  skipEachWhen,
} from './netns.js'

const skipReason = kernelUnavailable('test/live/kernel.test.ts')
const nobodyReason = nobodyUnavailable()

const IPTABLES_OVERALL = join(ROOT, 'fixtures/iptables/upstream-overall/input.rules')
const NFTABLES_OVERALL = `${ROOT}fixtures/nft/upstream-overall/input.nft`

// kube-proxy's IPv6 restore input for one ClusterIP service with two endpoints, written by hand
// from docs/kube-proxy-layouts.md §2.3 (fixed rules; IPv6 nodeports rule with
// `! -d ::1/128`) and §2.4 (per-service rules, kube-proxy's match order); chain names are the §2.6
// hashes, computed by the benchmark generator whose hashes test/live/bench-generator.test.ts checks.
const SPN6 = 'ns7/svc7:p80'
const EPS6 = ['[fd00:10:180::1]:80', '[fd00:10:180::2]:80']
const SVC6 = `KUBE-SVC-${chainHash(SPN6 + 'tcp')}`
const SEPS6 = EPS6.map((ep) => `KUBE-SEP-${chainHash(SPN6 + 'tcp' + ep)}`)
const IPV6_RESTORE_INPUT = [
  '*filter',
  ':KUBE-NODEPORTS - [0:0]',
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-EXTERNAL-SERVICES - [0:0]',
  ':KUBE-FORWARD - [0:0]',
  ':KUBE-PROXY-FIREWALL - [0:0]',
  '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP',
  '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
  '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
  'COMMIT',
  '*nat',
  ':KUBE-NODEPORTS - [0:0]',
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-MARK-MASQ - [0:0]',
  ':KUBE-POSTROUTING - [0:0]',
  `:${SVC6} - [0:0]`,
  ...SEPS6.map((sep) => `:${sep} - [0:0]`),
  '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
  '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
  '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
  '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
  `-A KUBE-SERVICES -m comment --comment "${SPN6} cluster IP" -m tcp -p tcp -d fd00:10:96::7 --dport 80 -j ${SVC6}`,
  '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS',
  `-A ${SVC6} -m comment --comment "${SPN6} cluster IP" -m tcp -p tcp -d fd00:10:96::7 --dport 80 ! -s fd00:10::/64 -j KUBE-MARK-MASQ`,
  `-A ${SVC6} -m comment --comment "${SPN6} -> ${EPS6[0]}" -m statistic --mode random --probability 0.5000000000 -j ${SEPS6[0]}`,
  `-A ${SVC6} -m comment --comment "${SPN6} -> ${EPS6[1]}" -j ${SEPS6[1]}`,
  ...EPS6.flatMap((ep, i) => [
    `-A ${SEPS6[i]} -m comment --comment ${SPN6} -s ${ep.slice(1, ep.indexOf(']'))} -j KUBE-MARK-MASQ`,
    `-A ${SEPS6[i]} -m comment --comment ${SPN6} -m tcp -p tcp -j DNAT --to-destination ${ep}`,
  ]),
  'COMMIT',
  '',
].join('\n')

/**
 * What must be equal between a live read and a file read: everything except where it came from
 * (sources, `live:` paths and line numbers, which differ because iptables-save reorders the
 * restore input) and the node facts only a live read can know.
 */
function comparable(state: ProxyState): unknown {
  return {
    ...state,
    sources: undefined,
    // The mark as each source writes it: the corpus transaction says 0x4000, `nft list` and
    // `nft -j` (a number) show 0x00004000. The same value either way.
    node: {
      ...state.node,
      name: null,
      kernel: null,
      nftVersion: null,
      iptablesBackends: null,
      masqueradeMark: state.node.masqueradeMark === null ? null : Number(state.node.masqueradeMark),
    },
    services: state.services.map((sp) => ({...sp, rules: undefined})),
    foreign: state.foreign.map((f) => ({...f, source: null})),
    diagnostics: state.diagnostics.map((d) => ({...d, source: null})),
  }
}

async function listJson(args: string[], prefix?: string[]): Promise<ProxyState> {
  // A read of files needs no namespace: it runs in this process.
  const r = prefix
    ? await runKpAsync(['list', '--json', ...args], {prefix})
    : await runKpInProcess(['list', '--json', ...args])
  if (r.exitCode !== 0)
    throw new Error(`kp list ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`)
  return JSON.parse(r.stdout) as ProxyState
}

describe('live reading in a network namespace', () => {
  skipEachWhen(skipReason)
  const tmp = mkdtempSync(join(tmpdir(), 'kp-kernel-'))
  afterAll(() => rmSync(tmp, {recursive: true, force: true}))

  it('says no kube-proxy rules were found in a fresh namespace, naming what it ran (exit 3)', async () => {
    const ns = new Netns()
    try {
      const r = await runKpAsync(['list'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(3)
      expect(r.stderr).toContain('no kube-proxy rules found on this node: ')
      expect(r.stderr).toContain('nft has no table ip kube-proxy or ip6 kube-proxy')
      expect(r.stderr).toContain('iptables-nft-save has no KUBE-* chains')
      expect(r.stderr).toContain('ip6tables-nft-save has no KUBE-* chains')
    } finally {
      ns.delete()
    }
  })

  it('stops a live command after --timeout seconds and says how to give it more time (exit 4)', async () => {
    // 3,000 services × 10 endpoints (33,000 chains): iptables-nft-save 1.8.9 took 11.7 s here.
    const ns = new Netns()
    try {
      const dump = join(tmp, 'ipt-3000.txt')
      await generateIptablesSave(dump, {services: 3000, endpointsPerService: 10})
      ns.run(['iptables-restore'], readFileSync(dump, 'utf8'))
      const r = await runKpAsync(['list', '--timeout', '1'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(4)
      expect(r.stderr).toMatch(/^kp: iptables-nft-save did not finish within 1 s and was stopped$/m)
      expect(r.stderr).toContain('give each command more time with --timeout SECONDS')
    } finally {
      ns.delete()
    }
  }, 60_000)

  describe('iptables mode (upstream-overall loaded with iptables-restore)', () => {
    let ns: Netns
    let fromFile: ProxyState
    beforeAll(async () => {
      if (skipReason !== null) return
      ns = new Netns()
      addKubeProxyNfacctCounters(ns)
      ns.run(['iptables-restore'], readFileSync(IPTABLES_OVERALL, 'utf8'))
      fromFile = await listJson(['-f', IPTABLES_OVERALL])
    })
    afterAll(() => ns?.delete())

    it('reads the same model live as from the file, and says which commands it ran', async () => {
      const r = await runKpAsync(['list', '--json', '--verbose'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(0)
      const live = JSON.parse(r.stdout) as ProxyState
      for (const ran of [
        'nft -j list table ip kube-proxy',
        'nft -j list table ip6 kube-proxy',
        'iptables-nft-save',
        'ip6tables-nft-save',
      ])
        expect(r.stderr).toContain(`kp: ran ${ran}\n`)
      expect(fromFile.services.length).toBeGreaterThan(0)
      expect(comparable(live)).toEqual(comparable(fromFile))
      // Where it came from: the nf_tables backend's iptables-save, with its version.
      const version = /v\d+\.\d+\.\d+/.exec(ns.run(['iptables', '--version']))![0]
      expect(live.sources).toEqual([
        {
          path: 'live:iptables-nft-save',
          format: 'iptables-save',
          tool: `iptables ${version} (nf_tables)`,
        },
      ])
      expect(live.node.iptablesBackends).toEqual(['nf_tables'])
      expect(live.node.kernel).toBe(readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim())
    })

    it('kp collect saves a bundle that reads the same model anywhere with -f', async () => {
      const out = join(tmp, 'iptables-bundle')
      const r = await runKpAsync(['collect', '--out', out, '--json'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(0)
      const manifest = JSON.parse(r.stdout) as BundleManifest
      expect(manifest.mode).toBe('iptables')
      expect(manifest.files.filter((f) => f.read).map((f) => f.path)).toEqual([
        'iptables-nft-save.txt',
      ])
      expect(manifest.facts.sysctls['net.ipv4.conf.all.route_localnet']).toMatch(/^[01]$/)
      expect(comparable(await listJson(['-f', out]))).toEqual(comparable(fromFile))
    })

    it('explain --rules quotes the rule lines read live, which the user has no file of', async () => {
      const r = await runKpAsync(['explain', 'ns1/svc1', '--rules'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(0)
      const quoted = [...r.stdout.matchAll(/^ +live:iptables-nft-save:\d+ +(.+)$/gm)].map(
        (m) => m[1],
      )
      // The rules the dump holds for it, as iptables-save prints them (it reorders the options).
      expect(quoted).toHaveLength(5)
      expect(quoted).toContainEqual(
        expect.stringMatching(
          /^-A KUBE-SERVICES -d 172\.30\.0\.41\/32 -p tcp .*ns1\/svc1:p80 cluster IP.* -j KUBE-SVC-/,
        ),
      )
      expect(quoted).toContainEqual(
        expect.stringMatching(
          /^-A KUBE-SEP-\w+ -p tcp .* -j DNAT --to-destination 10\.180\.0\.1:80$/,
        ),
      )
    })

    it('--mode nftables finds no nftables rules here (exit 3)', async () => {
      const r = await runKpAsync(['list', '--mode', 'nftables'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(3)
      expect(r.stderr).toContain('no nftables-mode kube-proxy rules found on this node')
    })

    it('warns when kube-proxy chains are in the legacy backend too, and reads the one with more rules', async () => {
      // A leftover legacy-backend copy of kube-proxy's fixed chains (§2.3), as an image upgrade can leave.
      const legacy = [
        '*nat',
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-MARK-MASQ - [0:0]',
        '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
        'COMMIT',
        '',
      ].join('\n')
      const both = new Netns()
      try {
        addKubeProxyNfacctCounters(both)
        both.run(['iptables-restore'], readFileSync(IPTABLES_OVERALL, 'utf8'))
        both.run(['iptables-legacy-restore'], legacy)
        const r = await runKpAsync(['list', '--json'], {prefix: both.prefix})
        expect(r.exitCode).toBe(0)
        expect(r.stderr).toMatch(
          /kp: warning: kube-proxy chains exist in both iptables backends \(nf_tables: \d+ KUBE-\* rules, legacy: 1\); reading nf_tables/,
        )
        const live = JSON.parse(r.stdout) as ProxyState
        expect(live.node.iptablesBackends).toEqual(['legacy', 'nf_tables'])
        expect(comparable(live)).toEqual(comparable(fromFile))
      } finally {
        both.delete()
      }
    })
  })

  it('reads IPv4 and IPv6 rules together (dual-stack), as from -f of both files', async () => {
    const v6Path = join(tmp, 'v6.rules')
    writeFileSync(v6Path, IPV6_RESTORE_INPUT)
    const ns = new Netns()
    try {
      addKubeProxyNfacctCounters(ns)
      ns.run(['iptables-restore'], readFileSync(IPTABLES_OVERALL, 'utf8'))
      ns.run(['ip6tables-restore'], IPV6_RESTORE_INPUT)
      const live = await listJson([], ns.prefix)
      // Live reads IPv4 first, then IPv6: give the files in the same order.
      const fromFiles = await listJson(['-f', IPTABLES_OVERALL, '-f', v6Path])
      expect(comparable(live)).toEqual(comparable(fromFiles))
      expect(live.sources.map((s) => s.path)).toEqual([
        'live:iptables-nft-save',
        'live:ip6tables-nft-save',
      ])
      const v6 = live.services.filter((sp) => sp.family === 'IPv6')
      expect(v6.map((sp) => [sp.namespace, sp.name, sp.portName])).toEqual([['ns7', 'svc7', 'p80']])
      // Two endpoints behind "--probability 0.5" and an unconditional rule: half each (§2.4).
      expect(v6[0]!.endpoints.map((e) => [e.ip, e.port, e.share])).toEqual([
        ['fd00:10:180::1', 80, 0.5],
        ['fd00:10:180::2', 80, 0.5],
      ])
    } finally {
      ns.delete()
    }
  })

  describe('nftables mode (upstream nftables-overall loaded with nft -f)', () => {
    let ns: Netns
    beforeAll(async () => {
      if (skipReason !== null) return
      ns = new Netns()
      ns.run(['nft', '-f', '-'], objectsBeforeRules(readFileSync(NFTABLES_OVERALL, 'utf8')))
    })
    afterAll(() => ns?.delete())

    it('reads the same model live (nft -j list table ip kube-proxy) as from the transaction file', async () => {
      const live = await listJson([], ns.prefix)
      const fromFile = await listJson(['-f', NFTABLES_OVERALL])
      expect(fromFile.services.length).toBeGreaterThan(0)
      expect(comparable(live)).toEqual(comparable(fromFile))
      expect(live.sources.map((s) => s.path)).toEqual(['live:nft -j list table ip kube-proxy'])
      expect(live.sources[0]!.tool).toBe(ns.run(['nft', '--version']).trim())
    })

    it('explain --rules quotes nft -j rules as chain NAME handle N: RULE, not entry numbers', async () => {
      const r = await runKpAsync(['explain', 'ns1/svc1', '--rules'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(0)
      const at = /^ +live:nft -j list table ip kube-proxy:\d+ +/
      const chain = 'chain service-ULMVA6XW-ns1/svc1/tcp/p80 handle \\d+: '
      expect(r.stdout).toMatch(
        new RegExp(
          `${at.source}${chain}ip daddr 172\\.30\\.0\\.41 ip saddr != 10\\.0\\.0\\.0/8 jump mark-for-masquerade$`,
          'm',
        ),
      )
      expect(r.stdout).toMatch(
        new RegExp(
          `${at.source}map service-ips: 172\\.30\\.0\\.41 \\. tcp \\. 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80$`,
          'm',
        ),
      )
    })

    it('calls iptables-mode chains next to the kube-proxy table leftovers', async () => {
      addKubeProxyNfacctCounters(ns)
      ns.run(['iptables-restore'], readFileSync(IPTABLES_OVERALL, 'utf8'))
      const out = join(tmp, 'nft-bundle')
      const r = await runKpAsync(['collect', '--out', out, '--json'], {prefix: ns.prefix})
      expect(r.exitCode).toBe(0)
      const manifest = JSON.parse(r.stdout) as BundleManifest
      expect(manifest.mode).toBe('nftables')
      expect(manifest.warnings).toEqual([
        expect.stringMatching(/^leftover iptables-mode rules \(iptables-nft-save: 16 per-service/),
      ])
      // The leftovers are saved for people but not read.
      const byPath = Object.fromEntries(manifest.files.map((f) => [f.path, f.read]))
      expect(byPath).toMatchObject({'nft-ip-kube-proxy.json': true, 'iptables-nft-save.txt': false})
      expect(r.stderr).toContain('kp: warning: leftover iptables-mode rules')
      // Read anywhere later, the bundle says it again, at the manifest's line, and keeps it in the state.
      const read = await runKpInProcess(['list', '--json', '-f', out])
      expect(read.exitCode).toBe(0)
      expect(read.stderr).toMatch(
        /kp: warning: .*manifest\.json:\d+: kp collect on .* warned: leftover iptables-mode rules \(iptables-nft-save: 16 per-service.*\[INPUT_BUNDLE_WARNING\]/,
      )
      const state = JSON.parse(read.stdout) as ProxyState
      expect(state.diagnostics.filter((d) => d.code === 'INPUT_BUNDLE_WARNING')).toEqual([
        expect.objectContaining({
          severity: 'warning',
          message: expect.stringContaining(manifest.warnings[0]!),
        }),
      ])
    })
  })

  it('exits 4 with a hint when not root', async ({skip}) => {
    if (nobodyReason !== null) skip(nobodyReason)
    const r = await runKpAsync(['list', '--json'], {prefix: AS_NOBODY})
    expect(r.exitCode).toBe(4)
    const {error} = JSON.parse(r.stdout) as {
      error: {code: string; message: string; hints: string[]}
    }
    expect(error.code).toBe('LIVE_NEEDS_ROOT')
    expect(error.message).toMatch(/needs root/)
    expect(error.hints[0]).toMatch(/run kp as root/)
  })
})
