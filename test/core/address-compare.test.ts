/**
 * Transitional: the helpers src/core/address.ts replaces, against it, on edge cases and many
 * random strings. Each caller must accept and reject exactly what it did.
 */
import {describe, expect, it} from 'vitest'
import * as next from '../../src/core/address.js'
import {isCidrText, isIpAddress} from '../../src/core/address-text.js'
import {toCidr as oldToCidr} from '../../src/core/ipaddr.js'
import * as kube from '../../src/readers/kube/ip.js'
import * as ipvs from '../../src/readers/ipvsadm/address.js'
import * as render from '../../src/render/ip.js'
import * as analyze from '../../src/analyze/addresses.js'
import {portOf, splitHostPort as nftSplit} from '../../src/readers/nft/words.js'
import {isAddress as oldIsAddress, isCidr as oldIsCidr} from '../../src/render/setting-values.js'
import {endpointString} from '../../src/readers/iptables/hash.js'

function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const EDGE = [
  '',
  ' ',
  '0',
  '1',
  '.',
  ':',
  '::',
  ':::',
  '/',
  '%',
  '[',
  ']',
  '[]',
  '[]:80',
  '*',
  '*:80',
  ':80',
  '10.0.0.1',
  '010.0.0.1',
  '10.0.0.01',
  '0.0.0.0',
  '255.255.255.255',
  '256.0.0.1',
  '1.2.3',
  '1.2.3.4.5',
  '1..2.3',
  ' 10.0.0.1',
  '10.0.0.1 ',
  '10.0.0.1\n',
  '١.2.3.4',
  '1.2.3.4/32',
  '1.2.3.4/33',
  '1.2.3.4/0',
  '1.2.3.4/',
  '1.2.3.4/032',
  '1.2.3.4/0032',
  '1.2.3.4/x',
  '10.0.0.1:80',
  '10.0.0.1:0',
  '10.0.0.1:65535',
  '10.0.0.1:65536',
  '10.0.0.1:080',
  '10.0.0.1:',
  '10.0.0.1:80-90',
  '10.0.0.1:http',
  '[10.0.0.1]:80',
  'fd00::1',
  'FD00::A',
  'fd00:0::1',
  'fd00::1/64',
  'fd00::1/128',
  'fd00::1/129',
  '[fd00::1]',
  '[fd00::1]:80',
  '[fd00::1]80',
  '[fd00::1',
  'fd00::1:80',
  '::1',
  '::ffff:1.2.3.4',
  '::ffff:010.0.0.1',
  '::1.2.3.4',
  '1:2:3:4:5:6:1.2.3.4',
  '1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:9',
  '1::2::3',
  '1:2:3:4:5:6:7::',
  '::1:2:3:4:5:6:7',
  '12345::',
  'g::1',
  'fe80::1%eth0',
  'fe80::1%eth-0',
  'fe80::1%25',
  'fe80::1%',
  '[fe80::1%eth0]:80',
  '::ffff:0x1.2.3.4',
  '::ffff:1.2.3.4/120',
  '127.0.0.1',
  '127.255.0.1',
  '::1/128',
  '0:0:0:0:0:0:0:1',
  'fd00::/0',
  '10.0.0.0/8',
  'kube-dns:53',
  'ns/name',
  'a.b.c.d',
  '1e2.0.0.1',
  '0x1.2.3.4',
  '1.2.3.4%eth0',
  '+1.2.3.4',
  '1.2.3.-4',
  'constructor',
  '__proto__',
  '00000',
  '99999',
  '65535',
  '000080',
  '1,2',
]

const V4 = (r: () => number) =>
  Array.from({length: 4}, () => {
    const n = String(Math.floor(r() * (r() < 0.1 ? 400 : 256)))
    return r() < 0.1 ? n.padStart(3, '0') : n
  }).join('.')
const V6 = (r: () => number) => {
  const groups = Array.from({length: 8}, () =>
    r() < 0.4 ? '0' : Math.floor(r() * 0x10000).toString(16),
  )
  if (r() < 0.2) groups.splice(6, 2, V4(r))
  let text = groups.join(':')
  if (r() < 0.5) text = text.replace(/(^|:)0(:0)+(:|$)/, '::')
  if (r() < 0.1) text = text.toUpperCase()
  if (r() < 0.05) text += r() < 0.5 ? '%eth0' : '%e-1'
  return text
}
const ALPHABET = '0123456789abcdefABCDEFx.:/%[]- *'

function sample(r: () => number): string {
  const pick = r()
  let s: string
  if (pick < 0.2) {
    s = ''
    const n = Math.floor(r() * 14)
    for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)]
    return s
  }
  s = pick < 0.6 ? V4(r) : V6(r)
  const add = r()
  if (add < 0.25) s += `/${Math.floor(r() * 140)}`
  else if (add < 0.5) {
    const port = String(Math.floor(r() * 70000))
    s = s.includes(':') || r() < 0.1 ? `[${s}]:${port}` : `${s}:${port}`
  }
  // Mutations: replace, insert or delete a character.
  const m = Math.floor(r() * 3)
  for (let k = 0; k < m; k++) {
    const at = Math.floor(r() * (s.length + 1))
    const c = ALPHABET[Math.floor(r() * ALPHABET.length)]!
    const op = r()
    s =
      op < 0.33
        ? s.slice(0, at) + c + s.slice(at + 1)
        : op < 0.66
          ? s.slice(0, at) + c + s.slice(at)
          : s.slice(0, at) + s.slice(at + 1)
  }
  return s
}

const r = rng(20)
const INPUTS = [...EDGE, ...Array.from({length: 60_000}, () => sample(r))]

/** The value, or the error's message: a thrown error is an outcome to compare too. */
function outcome<T>(f: () => T): T | {threw: string} {
  try {
    return f()
  } catch (e) {
    return {threw: String(e)}
  }
}

function mismatches(
  old: (t: string) => unknown,
  neu: (t: string) => unknown,
  inputs: readonly string[] = INPUTS,
): {input: string; old: unknown; new: unknown}[] {
  const out: {input: string; old: unknown; new: unknown}[] = []
  for (const t of inputs) {
    const a = outcome(() => old(t))
    const b = outcome(() => neu(t))
    if (
      JSON.stringify(a, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) !==
      JSON.stringify(b, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))
    )
      out.push({input: t, old: a, new: b})
    if (out.length >= 10) break
  }
  return out
}

describe('core/address.ts against the helpers it replaces', () => {
  it('accepts valid cases among the inputs', () => {
    // The random inputs must reach the accepting branches too, or the comparison says little.
    expect(INPUTS.filter((t) => next.isIp(t)).length).toBeGreaterThan(10_000)
    expect(INPUTS.filter((t) => next.isIpOrCidr(t) && t.includes('/')).length).toBeGreaterThan(3000)
    expect(INPUTS.filter((t) => next.parseHostPort(t) !== null).length).toBeGreaterThan(3000)
  })

  it.each([
    ['isIp', isIpAddress, next.isIp],
    ['isCidr', (t: string) => isCidrText(t, false), next.isCidr],
    ['isIpOrCidr', (t: string) => isCidrText(t, true), next.isIpOrCidr],
    ['toCidr', oldToCidr, next.toCidr],
    ['parseIp (ipvsadm canonicalIp)', ipvs.canonicalIp, next.parseIp],
    ['parseIpSloppy', kube.parseIp, next.parseIpSloppy],
    ['parseCidrSloppy', kube.parseCidr, next.parseCidrSloppy],
    ['parseAddress', render.parseAddress, next.parseAddress],
    ['addressFamily', render.addressFamily, next.addressFamily],
    ['addressOrCidrFamily', render.familyOf, next.addressOrCidrFamily],
    ['hostAddress', render.hostAddress, next.hostAddress],
    ['isLoopback', render.isLoopback, next.isLoopback],
    ['isAddress', oldIsAddress, next.isAddress],
    ['isAddressCidr', oldIsCidr, next.isAddressCidr],
    ['parsePort (ipvsadm)', ipvs.parsePort, next.parsePort],
    ['parsePort (nft portOf)', portOf, next.parsePort],
    ['parseHostPort', ipvs.parseHostPort, next.parseHostPort],
    ['splitHostPort (nft)', nftSplit, next.splitHostPort],
  ] as const)('%s', (_name, old, neu) => {
    expect(mismatches(old as (t: string) => unknown, neu as (t: string) => unknown)).toEqual([])
  })

  it('canonicalIp: the same, except null where the old one threw', () => {
    const found = mismatches(analyze.canonicalIp, next.canonicalIp).filter(
      (m) => !(typeof m.old === 'object' && m.old !== null && 'threw' in m.old && m.new === null),
    )
    expect(found).toEqual([])
  })

  it('cidrContains', () => {
    const r2 = rng(7)
    const pairs = Array.from({length: 20_000}, () => [sample(r2), sample(r2)] as const)
    const bad = pairs.filter(([c, a]) => render.cidrContains(c, a) !== next.cidrContains(c, a))
    expect(bad.slice(0, 10)).toEqual([])
    expect(pairs.filter(([c, a]) => next.cidrContains(c, a)).length).toBeGreaterThan(0)
    for (const [c, a] of [
      ['10.0.0.0/8', '10.1.2.3'],
      ['10.0.0.0/8', '11.0.0.1'],
      ['fd00::/64', 'fd00::5'],
      ['fd00::/64', 'fd01::5'],
      ['10.0.0.1', '10.0.0.1'],
      ['0.0.0.0/0', '1.2.3.4'],
      ['::/0', '::1'],
      ['10.0.0.0/x', '10.0.0.1'],
    ] as const)
      expect(next.cidrContains(c, a)).toBe(render.cidrContains(c, a))
  })

  it('joinHostPort', () => {
    const ports = [null, 0, 80, 65535, '?', '8080']
    for (const ip of INPUTS.slice(0, 5000))
      for (const port of ports) {
        if (typeof port !== 'string') {
          expect(next.joinHostPort(ip, port)).toBe(endpointString(ip, port))
          for (const family of ['IPv4', 'IPv6'] as const)
            expect(next.joinHostPort(ip, port, family)).toBe(ipvs.formatHostPort(ip, port, family))
          expect(next.joinHostPort(ip, port ?? '?')).toBe(analyze.endpointAddress({ip, port}))
        }
      }
    expect(next.joinHostPort('*', 80)).toBe(analyze.frontendAddress({ip: null, port: 80}))
    expect(next.joinHostPort('*', '?')).toBe(analyze.frontendAddress({ip: null, port: null}))
  })
})
