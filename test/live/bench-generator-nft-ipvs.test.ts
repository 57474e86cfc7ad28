/**
 * The nftables and IPVS benchmark generators (scripts/bench/gen-nft.mjs, gen-ipvsadm.mjs) must
 * write what kube-proxy and ipvsadm write: hashes are checked against docs/kube-proxy-layouts.md §3.6, the
 * fixed part of the nft transaction against kube-proxy's own expectation
 * (fixtures/nft/upstream-overall/input.nft), ipvsadm lines against a real listing
 * (fixtures/ipvs/generated/ipvsadm-Ln.txt), and the transaction is loaded into a network
 * namespace where nft must accept it and list the objects it adds.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {generateNftTransaction, nftChainBase} from '../../scripts/bench/gen-nft.mjs'
import {generateIpvsadmList, realServerLine} from '../../scripts/bench/gen-ipvsadm.mjs'
import {ROOT} from '../helpers/run-cli.js'
import {Netns, kernelUnavailable} from './netns.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-gen-nft-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

const skipReason = kernelUnavailable('test/live/bench-generator-nft-ipvs.test.ts')

const fixture = (path: string) => readFileSync(join(ROOT, 'fixtures', path), 'utf8')
type Written = {lines: number; bytes: number}

describe('nft benchmark generator', () => {
  it('names chains as kube-proxy does (§3.6 examples)', () => {
    expect(nftChainBase('ns1/svc1/tcp/p80')).toBe('ULMVA6XW-ns1/svc1/tcp/p80')
    expect(nftChainBase('ns1/svc1/tcp/p80__10.180.0.1/80')).toBe(
      '5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
    )
  })

  it('writes the fixed objects and rules exactly as kube-proxy does, and per-service lines of its shapes', async () => {
    const path = join(tmp, 'small.nft')
    const written = (await generateNftTransaction(path, {
      services: 4,
      endpointsPerService: 3,
    })) as Written
    const text = readFileSync(path, 'utf8')
    expect(text.split('\n').length - 1).toBe(written.lines)
    const expected = new Set(fixture('nft/upstream-overall/input.nft').split('\n'))
    const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))
    const perService = (l: string) =>
      /^add (chain|rule|element) ip kube-proxy (service|endpoint)-[A-Z2-7]{8}-|^add element ip kube-proxy (cluster-ips|service-ips) /.test(
        l,
      )
    // The service CIDR differs on purpose: the generated ClusterIPs are in 172.20.0.0/14.
    const fixed = lines.filter(
      (l) => !perService(l) && !l.includes('Drop traffic to unallocated ClusterIPs'),
    )
    expect(fixed.filter((l) => !expected.has(l))).toEqual([])
    // The fixture's top part: table + 2 sets + 5 maps, 16 chains, 23 rules less the CIDR one.
    expect(fixed.length).toBe(1 + 2 + 5 + 16 + 22)
    // 4 services × (1 + 3 chains, 2 + 3×2 rules, 2 elements).
    expect(lines.filter(perService).length).toBe(4 * (4 + 8 + 2))
    // Shapes of svc4 in the fixture (two endpoints): numgen with ' , ' between entries.
    expect(lines).toContain(
      `add rule ip kube-proxy service-${nftChainBase('ns1/svc-1/tcp/http')} numgen random mod 3 vmap { ` +
        [3, 4, 5]
          .map(
            (j, k) =>
              `${k} : goto endpoint-${nftChainBase(`ns1/svc-1/tcp/http__10.128.0.${j}/8080`)}`,
          )
          .join(' , ') +
        ' }',
    )
    expect(lines).toContain(
      `add rule ip kube-proxy endpoint-${nftChainBase('ns1/svc-1/tcp/http__10.128.0.4/8080')} meta l4proto tcp dnat to 10.128.0.4:8080`,
    )
  })

  it('writes a transaction that nft loads, listing one chain per service and endpoint', async ({
    skip,
  }) => {
    if (skipReason !== null) skip(skipReason)
    const path = join(tmp, 'load.nft')
    await generateNftTransaction(path, {services: 20, endpointsPerService: 3})
    const ns = new Netns()
    try {
      ns.run(['nft', '-f', path])
      const listed = ns.run(['nft', 'list', 'table', 'ip', 'kube-proxy'])
      expect(listed.match(/^\tchain service-[A-Z2-7]{8}-/gm)?.length).toBe(20)
      expect(listed.match(/^\tchain endpoint-/gm)?.length).toBe(60)
      expect(listed).toContain(
        'ip daddr 172.20.0.19 ip saddr != 10.0.0.0/8 jump mark-for-masquerade',
      )
    } finally {
      ns.delete()
    }
  })
})

describe('ipvsadm benchmark generator', () => {
  const real = fixture('ipvs/generated/ipvsadm-Ln.txt').split('\n')

  it('pads real-server lines as ipvsadm does, trailing spaces included', () => {
    const dests = real.filter((l) => l.startsWith('  -> ') && !l.includes('RemoteAddress'))
    expect(dests.length).toBeGreaterThan(5)
    for (const line of dests) {
      const [, addr, fwd, weight, active, inactive] = line.trim().split(/\s+/)
      expect(realServerLine(addr!, fwd!, Number(weight), Number(active), Number(inactive))).toBe(
        line,
      )
    }
  })

  it('writes the header of a full listing and one rr virtual server per ClusterIP, in address order', async () => {
    const path = join(tmp, 'ipvsadm.txt')
    const written = (await generateIpvsadmList(path, {
      services: 300,
      endpointsPerService: 2,
    })) as Written
    const lines = readFileSync(path, 'utf8').split('\n')
    expect(lines.slice(0, 3)).toEqual(real.slice(0, 3))
    expect(written.lines).toBe(3 + 300 * 3)
    const services = lines.filter((l) => l.startsWith('TCP  '))
    expect(services[0]).toBe('TCP  172.20.0.0:80 rr')
    // 256 → 172.20.1.0: the third octet carries, and the listing stays sorted by address.
    expect(services[256]).toBe('TCP  172.20.1.0:80 rr')
    expect(lines[lines.indexOf('TCP  172.20.1.0:80 rr') + 1]).toBe(
      realServerLine('10.128.2.0:8080', 'Masq', 1, 0, 0),
    )
  })
})
