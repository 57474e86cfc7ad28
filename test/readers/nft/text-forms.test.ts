/**
 * Text forms and transaction commands beyond the corpus: spaces for tabs, an `ip6` table
 * (hand-written from docs/kube-proxy-layouts.md §3.1/§3.4/§3.6: ip6 matches, `dnat to [IP]:PORT`, `:` -> `.` in
 * endpoint names), the lifecycle commands kube-proxy sends (`flush chain`, `delete element`,
 * `delete chain`), other tables (`foreign`), and format sniffing.
 */
import {describe, expect, it} from 'vitest'
import {
  endpointBaseName,
  hashAndTruncate,
  servicePortBaseName,
} from '../../../src/kube-proxy/nftables-names.js'
import {sniffFormat} from '../../../src/readers/registry.js'
import {readState} from '../../../src/readers/read-state.js'
import {readFixture, withoutPositions} from './corpus-shape.js'

const read = (text: string) => readState({sources: [{path: 'in.nft', text}]})

describe('nft text forms', () => {
  it('indentation with spaces reads like tabs', async () => {
    const text = readFixture('nft', 'upstream-overall', 'list-a.nft')
    expect(withoutPositions(await read(text.replaceAll('\t', '    ')))).toEqual(
      withoutPositions(await read(text)),
    )
  })

  it('an ip6 kube-proxy table: IPv6 service with bracketed dnat and dotted endpoint chain names', async () => {
    const base = servicePortBaseName('ns1', 'svc1', 'TCP', 'p80')
    const svc = `service-${hashAndTruncate(base)}`
    const ep = `endpoint-${hashAndTruncate(endpointBaseName(base, 'fd00:10:180::1', 80))}`
    expect(ep).toContain('__fd00.10.180..1/80')
    const text = [
      'add table ip6 kube-proxy { comment "rules for kube-proxy" ; }',
      'add set ip6 kube-proxy cluster-ips { type ipv6_addr ; comment "Active ClusterIPs" ; }',
      'add map ip6 kube-proxy service-ips { type ipv6_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }',
      'add chain ip6 kube-proxy mark-for-masquerade',
      'add rule ip6 kube-proxy mark-for-masquerade mark set mark or 0x4000',
      `add chain ip6 kube-proxy ${svc}`,
      `add rule ip6 kube-proxy ${svc} ip6 daddr fd00:172:30::41 ip6 saddr != fd00:10::/64 jump mark-for-masquerade`,
      `add rule ip6 kube-proxy ${svc} numgen random mod 1 vmap { 0 : goto ${ep} }`,
      `add chain ip6 kube-proxy ${ep}`,
      `add rule ip6 kube-proxy ${ep} ip6 saddr fd00:10:180::1 jump mark-for-masquerade`,
      `add rule ip6 kube-proxy ${ep} meta l4proto tcp dnat to [fd00:10:180::1]:80`,
      'add element ip6 kube-proxy cluster-ips { fd00:172:30::41 }',
      `add element ip6 kube-proxy service-ips { fd00:172:30::41 . tcp . 80 : goto ${svc} }`,
    ].join('\n')
    const state = await read(text)
    expect(state.diagnostics.filter((d) => d.severity !== 'info')).toEqual([])
    expect(state.services).toHaveLength(1)
    expect(state.services[0]).toMatchObject({
      namespace: 'ns1',
      name: 'svc1',
      portName: 'p80',
      family: 'IPv6',
      frontends: [
        {type: 'ClusterIP', ip: 'fd00:172:30::41', port: 80, sourceRanges: [], action: 'forward'},
      ],
      endpoints: [{ip: 'fd00:10:180::1', port: 80, share: 1}],
    })
    expect(state.node.podCIDRs).toEqual(['fd00:10::/64'])
  })

  it('older revision (docs/kube-proxy-layouts.md §3.2, §3.4): `P dport PORT` in the masquerade rule, base chains at dstnat-10', async () => {
    const text = readFixture('nft', 'upstream-overall', 'input.nft')
    const older = text
      .replace(/ip daddr (172\.30\.0\.4\d) ip saddr/g, 'ip daddr $1 tcp dport 80 ip saddr')
      .replaceAll('filter-prerouting-pre-dnat', 'filter-prerouting')
      .replace(
        'add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }',
        'add chain ip kube-proxy filter-output-post-dnat { type filter hook output priority -90 ; }',
      )
      .replaceAll(
        'add rule ip kube-proxy filter-output-pre-dnat',
        'add rule ip kube-proxy filter-output-post-dnat',
      )
    expect(older).toContain(
      'ip daddr 172.30.0.45 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade',
    )
    expect(withoutPositions(await read(older))).toEqual(withoutPositions(await read(text)))
  })

  it('masquerade-all: the ClusterIP masquerade rule without a detector part', async () => {
    const text = readFixture('nft', 'upstream-overall', 'input.nft').replace(
      /ip saddr != 10\.0\.0\.0\/8 jump/g,
      'jump',
    )
    const state = await read(text)
    expect(state.node.masqueradeAll).toBe(true)
    // svc2's ETP=Local short-circuit still shows the pod CIDR detector
    expect(state.node).toMatchObject({podCIDRs: ['10.0.0.0/8'], localDetector: 'cidr'})
  })

  it('follows kube-proxy lifecycle commands: delete element, flush chain, delete chain', async () => {
    const text = `${readFixture('nft', 'upstream-overall', 'input.nft')}
delete element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 }
delete element ip kube-proxy cluster-ips { 172.30.0.41 }
flush chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80
flush chain ip kube-proxy endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80
delete chain ip kube-proxy external-LAUZTJTB-ns4/svc4/tcp/p80
`
    const state = await read(text)
    expect(state.services.some((s) => s.name === 'svc1')).toBe(false)
    expect(
      state.diagnostics
        .filter((d) => d.code === 'NFT_STALE_CHAIN')
        .map((d) => d.message.split(':')[0]),
    ).toEqual([
      'empty chain service-ULMVA6XW-ns1/svc1/tcp/p80',
      'empty chain endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
    ])
    // svc4's external IP still points at the deleted chain: reported, the frontend kept
    expect(state.diagnostics.find((d) => d.code === 'NFT_MISSING_CHAIN')?.message).toContain(
      'external-LAUZTJTB-ns4/svc4/tcp/p80',
    )
    expect(state.services.find((s) => s.name === 'svc4')!.frontends.map((f) => f.ip)).toEqual([
      '172.30.0.44',
      '192.168.99.33',
    ])
  })

  it('other tables: mark users and iptables-mode leftovers are foreign, the rest counted', async () => {
    const text = `${readFixture('nft', 'upstream-overall', 'list.nft')}
table ip mangle {
\tchain prerouting {
\t\ttype filter hook prerouting priority mangle; policy accept;
\t\tmeta mark & 0x00004000 == 0x00004000 accept
\t}
}
table inet firewalld {
\tchain input {
\t\ttype filter hook input priority filter + 10; policy accept;
\t\tct state established,related accept
\t}
}
${readFixture('nft', 'iptables-nft-multipleservices-older', 'input.nft')}`
    const state = await read(text)
    expect(state.mode).toBe('nftables')
    expect(state.services).toHaveLength(6)
    expect(state.foreign.map((f) => [f.kind, f.name])).toEqual([
      ['leftover', 'table ip filter'],
      ['leftover', 'table ip nat'],
      ['nft-table', 'table ip mangle'],
    ])
    expect(state.diagnostics.find((d) => d.code === 'NFT_OTHER_TABLES')?.message).toMatch(
      /^1 other tables/,
    )
  })

  it('sniffs every nft text form as nft and nft -j as nft-json', () => {
    expect(sniffFormat(readFixture('nft', 'upstream-overall', 'input.nft'))).toBe('nft')
    expect(sniffFormat(readFixture('nft', 'upstream-overall', 'list.nft'))).toBe('nft')
    expect(
      sniffFormat(readFixture('nft', 'iptables-nft-multipleservices-older', 'input.nft')),
    ).toBe('nft')
    expect(sniffFormat('table bridge filter {\n}\n')).toBe('nft')
    expect(sniffFormat('# svc1\ninsert rule ip kube-proxy services jump x\n')).toBe('nft')
    expect(sniffFormat(readFixture('nft-json', 'upstream-overall', 'input.json'))).toBe('nft-json')
    expect(sniffFormat(readFixture('nft-json', 'pretty', 'input.json'))).toBe('nft-json')
  })
})
