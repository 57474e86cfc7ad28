/**
 * The IPVS builder on the corpus scenario (fixtures/ipvs/generated; fixtures/PROVENANCE.md (IPVS corpus, generated/))
 * through readState, the way `-f` files of one node reach it: every file alone, then combined.
 * The expected service ports are written by hand from that README and the cluster YAML:
 * default/web has an externalIP and NodePort 30080 and a terminating endpoint on node-b
 * (weight 0); default/lb is a LoadBalancer with externalTrafficPolicy Local, sourceRanges and
 * NodePort 31443; default/sctp has NodePort 30999; sticky has ClientIP affinity 10800 s.
 *
 * Fixtures, not the kernel: the test machines' kernel has no IPVS, so no virtual server can be
 * created and listed here (docs/architecture.md, "Tests"); the listings are ipvsadm 1.31's formats (see PROVENANCE.md).
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {displayName} from '../../../src/core/state.js'
import type {ProxyState, ServicePort} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import type {SourceText} from '../../../src/readers/types.js'
import {ROOT} from '../../helpers/run-cli.js'

const G = 'fixtures/ipvs/generated/'
const src = (rel: string): SourceText => ({path: rel, text: readFileSync(`${ROOT}${rel}`, 'utf8')})
const read = (files: string[], opts: Parameters<typeof readState>[1] = {}) =>
  readState({sources: files.map(src)}, opts)
const codes = (s: ProxyState, severity?: string) =>
  s.diagnostics.filter((d) => !severity || d.severity === severity).map((d) => d.code)

const LN = `${G}ipvsadm-Ln.txt`
const SN = `${G}ipvsadm-Sn.txt`
const IPSET_SAVE = `${G}ipset-save.ipvs-mode.txt`
const IPSET_LIST = `${G}ipset-list.ipvs-mode.txt`
const IPTABLES = `${G}iptables-save.ipvs-mode.nft-backend.txt`
const IP_ADDR = 'fixtures/ip-addr/real-netns/ip-addr.txt'
const CLUSTER = `${G}cluster.kubectl-get-svc-endpointslices-A-o-yaml.yaml`

/** One line per service port: frontends, policy, affinity, endpoints; stable and readable in a diff. */
function summary(sp: ServicePort): string {
  const fe = sp.frontends
    .map(
      (f) =>
        `${f.type} ${f.ip ?? '*'}:${f.port}${f.sourceRanges.length ? ` from ${f.sourceRanges.join(',')}` : ''} ${f.action}`,
    )
    .join(' + ')
  const eps = sp.endpoints
    .map(
      (e) =>
        `${e.ip}:${e.port} w${e.weight} ${e.state}${e.local === null ? '' : e.local ? ' local' : ' remote'}`,
    )
    .join(', ')
  const aff = sp.sessionAffinity ? ` ClientIP ${sp.sessionAffinity.timeoutSeconds}s` : ''
  return `${sp.protocol} ${sp.family} | ${fe} | etp ${sp.externalTrafficPolicy}${aff} | ${sp.scheduler} | ${eps}`
}

// Written by hand from fixtures/PROVENANCE.md (IPVS corpus, generated/) and the cluster YAML; local = on node-a (10.244.1.x, fd00:10:244:1::x).
const SCENARIO = [
  'SCTP IPv4 | ClusterIP 10.96.50.5:9999 forward + NodePort *:30999 forward | etp Cluster | rr | 10.244.1.9:9999 w1 ready local',
  'TCP IPv4 | ClusterIP 10.96.0.10:53 forward | etp null | rr | 10.244.1.3:53 w1 ready local, 10.244.2.4:53 w1 ready remote',
  'TCP IPv4 | ClusterIP 10.96.0.10:9153 forward | etp null | rr | 10.244.1.3:9153 w1 ready local, 10.244.2.4:9153 w1 ready remote',
  'TCP IPv4 | ClusterIP 10.96.0.1:443 forward | etp null | rr | 10.0.0.10:6443 w1 ready remote',
  'TCP IPv4 | ClusterIP 10.96.100.20:80 forward + ExternalIP 10.0.200.5:80 forward + NodePort *:30080 forward | etp Cluster | rr | 10.244.1.5:8080 w1 ready local, 10.244.2.7:8080 w0 draining remote',
  'TCP IPv4 | ClusterIP 10.96.200.30:443 forward + LoadBalancer 10.0.100.10:443 from 10.0.0.0/24,192.0.2.0/24 forward + NodePort *:31443 forward | etp Local | rr | 10.244.1.6:8443 w1 ready local, 10.244.2.8:8443 w1 ready remote',
  'TCP IPv4 | ClusterIP 10.96.30.7:6379 forward | etp null ClientIP 10800s | rr | 10.244.1.8:6379 w1 ready local, 10.244.2.9:6379 w1 ready remote',
  'TCP IPv6 | ClusterIP fd00:10:96::a:53 forward | etp null | rr | fd00:10:244:1::3:53 w1 ready local, fd00:10:244:2::4:53 w1 ready remote',
  'TCP IPv6 | ClusterIP fd00:10:96::a:9153 forward | etp null | rr | fd00:10:244:1::3:9153 w1 ready local, fd00:10:244:2::4:9153 w1 ready remote',
  'UDP IPv4 | ClusterIP 10.96.0.10:53 forward | etp null | rr | 10.244.1.3:53 w1 ready local, 10.244.2.4:53 w1 ready remote',
  'UDP IPv6 | ClusterIP fd00:10:96::a:53 forward | etp null | rr | fd00:10:244:1::3:53 w1 ready local, fd00:10:244:2::4:53 w1 ready remote',
]

describe('IPVS builder: each corpus file alone', () => {
  for (const file of [
    'ipvsadm-Ln.txt',
    'ipvsadm-Sn.txt',
    'ipvsadm-Ln--stats.txt',
    'ipvsadm-Ln--rate.txt',
    'ipvsadm-Ln--persistent-conn.txt',
  ]) {
    it(`${file}: 16 virtual servers become service ports, the guess is said`, async () => {
      const s = await read([`${G}${file}`])
      expect(s.mode).toBe('ipvs')
      expect(codes(s, 'error')).toEqual([])
      expect(codes(s)).toContain('IPVS_UNCLASSIFIED')
      expect(s.foreign).toEqual([])
      // Every virtual server is in exactly one service port: 16 = frontends, NodePorts counted per address.
      expect(s.services.flatMap((sp) => sp.frontends)).toHaveLength(16)
      // 10.0.0.10 serves only ports 30080, 31443, 30999: NodePorts by the guess, the node address.
      expect(s.node.nodePortAddresses).toEqual(['10.0.0.10'])
    })
  }

  for (const file of [
    'ipset-save.ipvs-mode.txt',
    'ipset-list.ipvs-mode.txt',
    'iptables-save.ipvs-mode.nft-backend.txt',
  ]) {
    it(`${file}: IPVS mode, no services without a listing, and says so`, async () => {
      const s = await read([`${G}${file}`])
      expect(s.mode).toBe('ipvs')
      expect(s.services).toEqual([])
      expect(codes(s)).toEqual(
        file.startsWith('ipset')
          ? ['IPVS_NO_LISTING', 'IPVS_HEALTH_CHECK_PORTS']
          : ['IPVS_NO_LISTING'],
      )
    })
  }

  it('iptables-save alone gives the node settings of IPVS mode (a.5)', async () => {
    const s = await read([IPTABLES])
    expect(s.node).toMatchObject({
      masqueradeMark: '0x4000',
      randomFully: true,
      masqueradeAll: false,
      localDetector: 'cidr',
      podCIDRs: ['10.244.0.0/16'],
    })
  })

  it('a rule written more than once in the IPVS-mode iptables dump is one IPT_REPEATED_RULE warning (it was read as one rule, silently)', async () => {
    const text = readFileSync(`${ROOT}${IPTABLES}`, 'utf8')
    const rule = '-A KUBE-IPVS-FILTER -m set --match-set KUBE-CLUSTER-IP dst,dst -j RETURN'
    expect(text).toContain(rule)
    const tripled = text.replace(rule, `${rule}\n${rule}\n${rule}`)
    const s = await readState({sources: [{path: 'ipvs.rules', text: tripled}]})
    const first = text.slice(0, text.indexOf(rule)).split('\n').length
    expect(s.diagnostics.filter((d) => d.code === 'IPT_REPEATED_RULE')).toEqual([
      expect.objectContaining({
        severity: 'warning',
        source: {path: 'ipvs.rules', line: first + 1},
        message: expect.stringContaining(
          `the rule on line ${first} of filter KUBE-IPVS-FILTER is there 3 times (again on line ${first + 1})`,
        ),
      }),
    ])
    // The unchanged dump has none, and the copies change no node setting.
    expect(codes(await read([IPTABLES]))).not.toContain('IPT_REPEATED_RULE')
    expect(s.node).toEqual((await read([IPTABLES])).node)
  })

  it("kube-proxy's own restore input reads the same node settings (mark written 0x004000)", async () => {
    const s = await read([`${G}iptables-restore-input.as-written-by-kube-proxy.txt`], {
      mode: 'ipvs',
    })
    expect(s.node).toMatchObject({
      masqueradeMark: '0x4000',
      localDetector: 'cidr',
      podCIDRs: ['10.244.0.0/16'],
    })
  })
})

describe('IPVS builder: the files of node-a combined', () => {
  it('ipvsadm -Ln + ipset save + iptables-save + ip addr: the scenario, classified, no warnings', async () => {
    const s = await read([LN, IPSET_SAVE, IPTABLES, IP_ADDR])
    // Only the info that default/lb's healthCheckNodePort 32000 (ipset-save line 43) has no owner in the dumps.
    expect(s.diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      ['info', 'IPVS_HEALTH_CHECK_PORTS', 43],
    ])
    expect(s.diagnostics[0]!.message).toContain('32000')
    expect(s.services.map(summary)).toEqual(SCENARIO)
    expect(s.foreign).toEqual([])
    expect(s.node).toMatchObject({
      nodePortAddresses: ['10.0.0.10'],
      masqueradeMark: '0x4000',
      randomFully: true,
    })
    // Without names a service port is known by its ClusterIP (docs/model.md).
    expect(s.services.map(displayName)).toContain('10.96.100.20:80/TCP')
  })

  for (const listing of [
    'ipvsadm-Sn.txt',
    'ipvsadm-Ln--persistent-conn.txt',
    'ipvsadm-Ln--stats.txt',
    'ipvsadm-Ln--rate.txt',
  ]) {
    it(`${listing} + ipset save: the same frontends and endpoints as -Ln`, async () => {
      const ref = await read([LN, IPSET_SAVE])
      const s = await read([`${G}${listing}`, IPSET_SAVE])
      const skeleton = (st: ProxyState) =>
        st.services.map((sp) => [
          sp.protocol,
          sp.family,
          sp.frontends,
          sp.endpoints.map((e) => [e.ip, e.port, e.local]),
        ])
      expect(skeleton(s)).toEqual(skeleton(ref))
      if (listing.includes('stats') || listing.includes('rate')) {
        // These layouts show no scheduler, persistence or weights: null, never guessed.
        expect(s.services.every((sp) => sp.scheduler === null && sp.sessionAffinity === null)).toBe(
          true,
        )
        expect(
          s.services
            .flatMap((sp) => sp.endpoints)
            .every((e) => e.weight === null && e.state === null),
        ).toBe(true)
      } else {
        expect(s.services.map(summary)).toEqual(SCENARIO)
      }
    })
  }

  it('ipset list classifies exactly like ipset save', async () => {
    const a = await read([LN, IPSET_SAVE])
    const b = await read([LN, IPSET_LIST])
    expect(b.services.map(summary)).toEqual(a.services.map(summary))
  })

  it('-Ln and -Sn of the same node together merge without disagreement', async () => {
    const s = await read([LN, SN, IPSET_SAVE])
    expect(codes(s)).toEqual(['IPVS_HEALTH_CHECK_PORTS'])
    expect(s.services.map(summary)).toEqual(SCENARIO)
    // Both listings are cited as where each service port was seen.
    expect(new Set(s.services[0]!.rules.map((r) => r.path))).toEqual(new Set([LN, SN, IPSET_SAVE]))
  })

  it('ipvsadm + ip addr only: kube-ipvs0 addresses cannot be told apart, and the NodePort fold is ambiguous', async () => {
    const s = await read([LN, IP_ADDR])
    expect(codes(s)).toEqual(['IPVS_BOUND_ADDRESS_TYPE', 'IPVS_UNFOLDED'])
    // 10.0.200.5:80 (really the externalIP) and 10.96.100.20:80 have the same real servers.
    expect(s.diagnostics.find((d) => d.code === 'IPVS_UNFOLDED')?.message).toContain(
      'NodePort 30080/TCP',
    )
    expect(
      s.services.filter((sp) =>
        sp.frontends.some((f) => f.type === 'NodePort' && f.port === 30080),
      ),
    ).toHaveLength(1)
  })

  it('cluster objects given as a source (-f), not with --cluster, are reported, not silently dropped', async () => {
    const s = await read([LN, IPSET_SAVE, CLUSTER], {mode: 'ipvs'})
    const wrong = s.diagnostics.filter((d) => d.code === 'IPVS_WRONG_SOURCE')
    expect(wrong).toHaveLength(1)
    expect(wrong[0]).toMatchObject({
      severity: 'warning',
      source: {path: CLUSTER, line: 1},
      message: expect.stringContaining('--cluster'),
    })
  })

  it('with --cluster the service ports get the names of the cluster objects', async () => {
    const s = await read([LN, IPSET_SAVE, IPTABLES], {cluster: [src(CLUSTER)], node: 'node-a'})
    expect(codes(s, 'error')).toEqual([])
    expect(codes(s, 'warning')).toEqual([])
    // 32000 now has its owner, default/lb.
    expect(codes(s)).not.toContain('IPVS_HEALTH_CHECK_PORTS')
    expect(s.services.map((sp) => `${displayName(sp)} ${sp.family}`)).toEqual([
      'default/kubernetes:https/tcp IPv4',
      'default/lb:https/tcp IPv4',
      'default/sctp:s/sctp IPv4',
      'default/sticky:redis/tcp IPv4',
      'default/web:http/tcp IPv4',
      'kube-system/kube-dns:dns/udp IPv4',
      'kube-system/kube-dns:dns/udp IPv6',
      'kube-system/kube-dns:dns-tcp/tcp IPv4',
      'kube-system/kube-dns:dns-tcp/tcp IPv6',
      'kube-system/kube-dns:metrics/tcp IPv4',
      'kube-system/kube-dns:metrics/tcp IPv6',
    ])
    const lb = s.services.find((sp) => sp.name === 'lb')!
    // Not observable on the node, taken from the Service: healthCheckNodePort 32000, internalTrafficPolicy Cluster.
    expect(lb).toMatchObject({
      healthCheckNodePort: 32000,
      internalTrafficPolicy: 'Cluster',
      externalTrafficPolicy: 'Local',
    })
  })

  it('a virtual server that no Service of the cluster objects has is named nowhere and flagged', async () => {
    const extra =
      'TCP  10.96.99.99:8080 rr\n  -> 10.244.1.77:8080             Masq    1      0          0         \n'
    const listing = {path: 'ln+stale', text: readFileSync(`${ROOT}${LN}`, 'utf8') + extra}
    const s = await readState(
      {sources: [listing, src(IPSET_SAVE)]},
      {cluster: [src(CLUSTER)], node: 'node-a'},
    )
    // Not in the ipsets either: foreign, and the cluster check never sees it.
    expect(s.foreign.map((f) => f.name)).toEqual(['TCP 10.96.99.99:8080'])
    const noSets = await readState({sources: [listing]}, {cluster: [src(CLUSTER)], node: 'node-a'})
    expect(
      noSets.diagnostics.filter((d) => d.code === 'IPVS_NOT_IN_CLUSTER').map((d) => d.source),
    ).toEqual([{path: 'ln+stale', line: 47}])
    expect(
      noSets.services.filter((sp) => sp.name === null).map((sp) => sp.frontends[0]?.ip),
    ).toEqual(['10.96.99.99'])
  })

  it('--cluster alone classifies what ipvsadm cannot, without ipsets', async () => {
    const s = await read([LN], {cluster: [src(CLUSTER)], node: 'node-a'})
    expect(codes(s, 'warning')).toEqual([])
    const web = s.services.find((sp) => sp.name === 'web')!
    expect(web.frontends.map((f) => `${f.type} ${f.ip}:${f.port}`)).toEqual([
      'ClusterIP 10.96.100.20:80',
      'ExternalIP 10.0.200.5:80',
      'NodePort null:30080',
    ])
    // Endpoint locality from the cluster state, as KUBE-LOOP-BACK is missing. The terminating
    // 10.244.2.7 is not among the endpoints kube-proxy would use (ready ones exist), so the
    // cluster state does not list it and its locality stays unknown.
    expect(web.endpoints.map((e) => [e.ip, e.local, e.state])).toEqual([
      ['10.244.1.5', true, 'ready'],
      ['10.244.2.7', null, 'draining'],
    ])
  })
})

describe('IPVS builder: dumps that do not agree', () => {
  it('a single-service listing with the full ipsets: every set entry without a virtual server is reported', async () => {
    const s = await read([
      'fixtures/ipvsadm/single-service/ipvsadm-Ln-t-10.96.100.20-80.txt',
      IPSET_SAVE,
    ])
    const missing = s.diagnostics
      .filter((d) => d.code === 'IPVS_SET_WITHOUT_VIRTUAL_SERVER')
      .map((d) => d.message.split(' have')[0]!.split(' has')[0])
    // From ipset-save.ipvs-mode.txt: 8 ClusterIP entries less 10.96.100.20,tcp:80; the externalIP; the LB IP;
    // the SCTP NodePort; NodePorts 30080 and 31443; the 3 IPv6 ClusterIP entries.
    expect(missing).toEqual([
      '7 entries of KUBE-CLUSTER-IP',
      '1 entry of KUBE-EXTERNAL-IP',
      '1 entry of KUBE-LOAD-BALANCER',
      '1 entry of KUBE-NODE-PORT-SCTP-HASH',
      '2 entries of KUBE-NODE-PORT-TCP',
      '3 entries of KUBE-6-CLUSTER-IP',
    ])
    // Only the ClusterIP is listed: no external frontend shows the external traffic policy.
    expect(s.services.map(summary)).toEqual([
      SCENARIO[4]!
        .replace(' + ExternalIP 10.0.200.5:80 forward + NodePort *:30080 forward', '')
        .replace('etp Cluster', 'etp null'),
    ])
  })

  it('real servers that differ between two listings of one node: the union, and a warning', async () => {
    const ln = readFileSync(`${ROOT}${LN}`, 'utf8')
    const later = {
      path: 'later',
      text: ln.replace(
        '  -> 10.244.2.9:6379              Masq    1      0          0         \n',
        '',
      ),
    }
    const s = await readState({sources: [src(LN), later]})
    expect(
      s.diagnostics.filter((d) => d.code === 'IPVS_SOURCES_DISAGREE').map((d) => d.source),
    ).toEqual([{path: 'later', line: 22}])
    expect(
      s.services.find((sp) => sp.sessionAffinity !== null)?.endpoints.map((e) => e.ip),
    ).toEqual(['10.244.1.8', '10.244.2.9'])
  })
})

describe('IPVS builder: foreign virtual servers', () => {
  it('a node with only keepalived virtual servers: everything foreign, nothing guessed', async () => {
    const s = await read(['fixtures/ipvsadm/foreign-only/ipvsadm-Ln.txt'])
    expect(s.foreign.map((f) => [f.name, f.reason.split(':')[0]])).toEqual([
      ['FWM 10 IPv4', 'firewall-mark virtual server'],
      ['TCP 192.168.10.100:443', 'real servers forwarded by Route'],
      ['TCP 192.168.10.100:80', 'real servers forwarded by Route'],
    ])
    expect(s.services).toEqual([])
    expect(codes(s)).toEqual([])
  })

  it('the variants: fwmarks, the scheduler probe and sh-port are foreign; mh (mh-port) is kube-proxy', async () => {
    const s = await read(['fixtures/ipvsadm/variants/ipvsadm-Ln.txt'])
    expect(s.foreign.map((f) => f.name)).toEqual([
      'FWM 100 IPv4',
      'FWM 200 IPv6',
      'TCP 198.51.100.0:20000',
      'UDP 10.96.0.10:53',
    ])
    const dns = s.services.find(
      (sp) => sp.protocol === 'TCP' && sp.frontends[0]?.ip === '10.96.0.10',
    )!
    expect(dns).toMatchObject({
      scheduler: 'mh',
      sessionAffinity: {type: 'ClientIP', timeoutSeconds: 10800},
    })
    const v6 = s.services.find(
      (sp) => sp.frontends[0]?.ip === '2001:db8:aaaa:bbbb:cccc:dddd:eeee:1',
    )!
    expect(v6.endpoints.map((e) => [e.weight, e.share, e.state])).toEqual([
      [1, null, 'ready'],
      [0, 0, 'draining'],
    ])
  })

  it("with the node's ip addr, an address neither on kube-ipvs0 nor the node's is foreign", async () => {
    const s = await read(['fixtures/ipvsadm/variants/ipvsadm-Ln.txt', IP_ADDR])
    const byAddress = s.foreign.find(
      (f) => f.name === 'TCP [2001:db8:aaaa:bbbb:cccc:dddd:eeee:1]:443',
    )
    expect(byAddress?.reason).toBe(
      "address 2001:db8:aaaa:bbbb:cccc:dddd:eeee:1 is neither bound to kube-ipvs0 nor one of the node's addresses",
    )
    // 10.96.0.10, 10.96.100.20, 10.96.50.5 and fd00:10:96::a are on kube-ipvs0 (fixtures/ip-addr/real-netns/ip-addr.txt).
    expect(
      s.services.map(
        (sp) => `${sp.protocol} ${sp.frontends.map((f) => `${f.type} ${f.ip}:${f.port}`).join()}`,
      ),
    ).toEqual([
      'SCTP ClusterIP 10.96.50.5:9999',
      'TCP ClusterIP 10.96.0.10:53',
      'TCP ClusterIP 10.96.100.20:80',
      'TCP ClusterIP fd00:10:96::a:53',
    ])
  })

  it("with the node's ip addr, a kube-vip-like virtual server on the node address and port 6443 is foreign", async () => {
    const extra =
      'TCP  10.0.0.10:6443 rr\n  -> 10.0.0.11:6443               Masq    1      0          0         \n'
    const listing = {path: 'ln+kube-vip', text: readFileSync(`${ROOT}${LN}`, 'utf8') + extra}
    const s = await readState({sources: [listing, src(IP_ADDR)]})
    expect(s.foreign.map((f) => [f.name, f.source?.line])).toEqual([['TCP 10.0.0.10:6443', 47]])
    expect(s.node.nodePortAddresses).toEqual(['10.0.0.10'])
  })

  it('a Masq virtual server in none of kube-proxy ipsets is foreign when the ipsets are known', async () => {
    const extra =
      'TCP  192.168.10.100:80 rr\n  -> 192.168.10.11:80              Masq    1      0          0         \n'
    const listing = {path: 'ln+keepalived', text: readFileSync(`${ROOT}${LN}`, 'utf8') + extra}
    const s = await readState({sources: [listing, src(IPSET_SAVE)]})
    expect(s.foreign.map((f) => [f.name, f.source])).toEqual([
      ['TCP 192.168.10.100:80', {path: 'ln+keepalived', line: 47}],
    ])
    expect(s.services.map(summary)).toEqual(SCENARIO)
  })

  it('a service port with no real servers rejects new connections (d.15)', async () => {
    const s = await read(['fixtures/ipvsadm/variants/ipvsadm-Sn.txt'])
    expect(s.services.flatMap((sp) => sp.frontends).every((f) => f.action === 'forward')).toBe(true)
    const empty = await readState({sources: [{path: 'e', text: '-A -t 10.96.7.7:80 -s rr\n'}]})
    expect(empty.services[0]!.frontends[0]!.action).toBe('reject')
  })
})

describe('IPVS builder: older and odd ipsets (fixtures/ipset/real-odd)', () => {
  it("the pre-#81477 KUBE-NODE-PORT-SCTP bitmap still makes an SCTP NodePort; Calico's sets are not kube-proxy's", async () => {
    const sn =
      '-A --sctp-service 10.96.50.5:9999 -s rr\n-a --sctp-service 10.96.50.5:9999 -r 10.244.1.9:9999 -m -w 1\n-A --sctp-service 10.0.0.10:30999 -s rr\n-a --sctp-service 10.0.0.10:30999 -r 10.244.1.9:9999 -m -w 1\n'
    const s = await readState({
      sources: [{path: 'sn', text: sn}, src('fixtures/ipset/real-odd/ipset-save.txt')],
    })
    // The listing has no virtual server for the other two ClusterIP entries of that dump (lines 3 and 7).
    expect(s.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['IPVS_SET_WITHOUT_VIRTUAL_SERVER', 3],
      ['IPVS_SET_WITHOUT_VIRTUAL_SERVER', 7],
    ])
    expect(s.services.map(summary)).toEqual([
      'SCTP IPv4 | ClusterIP 10.96.50.5:9999 forward + NodePort *:30999 forward | etp Cluster | rr | 10.244.1.9:9999 w1 ready',
    ])
  })
})

describe('IPVS builder: bad input through readState', () => {
  it('ipvsadm -L without -n is an input error', async () => {
    const s = await read(['fixtures/ipvsadm/non-numeric/ipvsadm-L.txt'])
    expect(codes(s, 'error')).toEqual(['IPVS_NOT_NUMERIC'])
  })

  it('empty and garbage inputs do not throw', async () => {
    const s = await readState({
      sources: [
        {path: 'empty', text: ''},
        {path: 'g', text: 'Prot LocalAddress:Port Scheduler Flags\n%%%\n'},
      ],
    })
    expect(codes(s)).toEqual(['IPVS_UNKNOWN_LINE', 'IPVS_NO_VIRTUAL_SERVERS', 'INPUT_EMPTY'])
  })
})
