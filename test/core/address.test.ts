/**
 * src/core/address.ts: each reading accepts and rejects what its header says. The edge cases
 * are the ones the helpers it replaced were compared on (git history of this file's commit);
 * the random strings are checked against an independent reading of the same rule (node:net,
 * ipaddr.js, a regular expression).
 */
import {readdirSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {isIP, isIPv6} from 'node:net'
import {join} from 'node:path'
import type IpAddr from 'ipaddr.js'
import {describe, expect, it} from 'vitest'
import {
  addressFamily,
  addressOrCidrFamily,
  canonicalIp,
  iptablesIpv6,
  cidrContains,
  hostAddress,
  isAddress,
  isAddressCidr,
  isCidr,
  isIp,
  isIpOrCidr,
  isLoopback,
  joinHostPort,
  parseAddress,
  parseCidrSloppy,
  parseHostPort,
  parseIp,
  parseIpSloppy,
  parsePort,
  splitHostPort,
  toCidr,
} from '../../src/core/address.js'

const ipaddr = createRequire(import.meta.url)('ipaddr.js') as typeof IpAddr

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

/** Addresses, CIDRs and host:port, valid and mutated by a character or two. */
function sample(r: () => number): string {
  const pick = r()
  let s = ''
  if (pick < 0.2) {
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

const random = rng(20)
const INPUTS = Array.from({length: 20_000}, () => sample(random))

/** The strings each check of `valid` gets wrong, at most ten. */
function disagreements<T>(f: (t: string) => T, oracle: (t: string) => T): string[] {
  const out: string[] = []
  for (const t of INPUTS) {
    if (JSON.stringify(f(t)) !== JSON.stringify(oracle(t))) out.push(t)
    if (out.length >= 10) break
  }
  return out
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory()
      ? sourcesUnder(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  )
}

describe('ipaddr.js is loaded with require', () => {
  it('by core/address.ts', () => {
    expect(canonicalIp('fd00:0::1')).toBe('fd00::1')
    expect(iptablesIpv6('::FFFF:1.2.3.4')).toBe('::ffff:1.2.3.4')
    expect(iptablesIpv6('fd00:0:0::1')).toBe('fd00::1')
    expect(iptablesIpv6('10.0.0.1')).toBeNull()
  })

  it('nowhere by an ESM import: that costs every kp process ~60 ms at exit', () => {
    const offenders = sourcesUnder('src').filter((f) =>
      /^import (?!type )[^\n]* from 'ipaddr\.js'/m.test(readFileSync(f, 'utf8')),
    )
    expect(offenders).toEqual([])
  })
})

describe("the model's reading (node:net)", () => {
  it('isIp is node:net isIP', () => {
    expect(disagreements(isIp, (t) => isIP(t) !== 0)).toEqual([])
    for (const ok of ['10.0.0.1', 'fd00::1', 'fe80::1%eth0', 'fe80::1%eth-0', '::ffff:1.2.3.4'])
      expect(isIp(ok), ok).toBe(true)
    for (const bad of ['010.0.0.1', '10.0.0.1/32', ' 10.0.0.1', '[fd00::1]', '1.2.3', ''])
      expect(isIp(bad), bad).toBe(false)
  })

  it('isCidr and isIpOrCidr: a node:net address and a prefix length of 1-3 digits its family allows', () => {
    const oracle = (bare: boolean) => (t: string) => {
      const m = /^([^/]*)(?:\/(\d{1,3}))?$/.exec(t)
      if (!m || isIP(m[1]!) === 0) return false
      if (m[2] === undefined) return bare && !t.includes('/')
      return Number(m[2]) <= (isIP(m[1]!) === 4 ? 32 : 128)
    }
    expect(disagreements(isCidr, oracle(false))).toEqual([])
    expect(disagreements(isIpOrCidr, oracle(true))).toEqual([])
    for (const ok of ['10.0.0.0/8', '0.0.0.0/0', '1.2.3.4/032', 'fd00::/64', 'fe80::%eth0/64'])
      expect([isCidr(ok), isIpOrCidr(ok)], ok).toEqual([true, true])
    for (const bare of ['10.0.0.1', 'fd00::1', 'fe80::1%eth0'])
      expect([isCidr(bare), isIpOrCidr(bare)], bare).toEqual([false, true])
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/', '1.2.3.4/0032', '010.0.0.0/8'])
      expect([isCidr(bad), isIpOrCidr(bad)], bad).toEqual([false, false])
  })

  it('toCidr adds /32 or /128 to a bare address, by a colon', () => {
    expect(toCidr('10.0.0.1')).toBe('10.0.0.1/32')
    expect(toCidr('fd00::1')).toBe('fd00::1/128')
    expect(toCidr('10.0.0.0/8')).toBe('10.0.0.0/8')
    expect(toCidr('x')).toBe('x/32')
  })
})

describe('the canonical reading', () => {
  it('parseIp: node:net, then RFC 5952 for IPv6; null for a zone ID ipaddr.js cannot read', () => {
    const oracle = (t: string) => {
      const v = isIP(t)
      if (v === 4) return {ip: t, family: 'IPv4'}
      if (v !== 6) return null
      return ipaddr.IPv6.isValid(t)
        ? {ip: ipaddr.IPv6.parse(t).toRFC5952String(), family: 'IPv6'}
        : null
    }
    expect(disagreements(parseIp, oracle)).toEqual([])
    expect(disagreements(canonicalIp, (t) => oracle(t)?.ip ?? null)).toEqual([])
    expect(parseIp('FD00:0::A')).toEqual({ip: 'fd00::a', family: 'IPv6'})
    expect(parseIp('::ffff:1.2.3.4')).toEqual({ip: '::ffff:102:304', family: 'IPv6'})
    expect(parseIp('fe80::1%eth0')).toEqual({ip: 'fe80::1%eth0', family: 'IPv6'})
    expect(parseIp('fe80::1%eth-0')).toBeNull()
    for (const bad of ['ns/name', '010.0.0.1', '10.0.0.1/32', 'kube-dns', ''])
      expect(canonicalIp(bad), bad).toBeNull()
  })
})

describe("kube-proxy's reading (ParseIPSloppy, ParseCIDRSloppy)", () => {
  it.each([
    ['10.0.0.1', {family: 'IPv4', text: '10.0.0.1', bytes: [10, 0, 0, 1]}],
    ['010.000.0.01', {family: 'IPv4', text: '10.0.0.1', bytes: [10, 0, 0, 1]}],
    [' 10.0.0.1\n', {family: 'IPv4', text: '10.0.0.1', bytes: [10, 0, 0, 1]}],
    ['::ffff:1.2.3.4', {family: 'IPv4', text: '1.2.3.4', bytes: [1, 2, 3, 4]}],
    ['FD00:0::A', {family: 'IPv6', text: 'fd00::a', bytes: [253, 0, ...Array(13).fill(0), 10]}],
    ['fe80::1%eth0', null],
    ['256.0.0.1', null],
    ['0010.0.0.1', null],
    ['1.2.3', null],
    ['', null],
  ] as const)('parseIpSloppy(%j)', (text, expected) =>
    expect(parseIpSloppy(text)).toEqual(expected),
  )

  it.each([
    ['203.0.113.000/025', {family: 'IPv4', text: '203.0.113.0/25'}],
    ['10.1.2.3/8', {family: 'IPv4', text: '10.0.0.0/8'}],
    ['10.1.2.3/0', {family: 'IPv4', text: '0.0.0.0/0'}],
    ['fd00::1:2/112', {family: 'IPv6', text: 'fd00::1:0/112'}],
    [' 10.0.0.0/8 ', {family: 'IPv4', text: '10.0.0.0/8'}],
    ['10.0.0.0/33', null],
    ['10.0.0.0', null],
    ['10.0.0.0/', null],
    ['fd00::/129', null],
  ] as const)('parseCidrSloppy(%j)', (text, expected) =>
    expect(parseCidrSloppy(text)).toEqual(expected),
  )

  it('the IPv4 it reads is any dotted quad of decimal octets, leading zeros and all', () => {
    const oracle = (t: string) => {
      const m = /^\s*(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\s*$/.exec(t)
      return m && m.slice(1).every((x) => Number(x) <= 255)
        ? m.slice(1).map(Number).join('.')
        : null
    }
    const v4 = (t: string) => {
      const p = t.includes(':') ? null : parseIpSloppy(t)
      return p?.text ?? null
    }
    expect(disagreements(v4, (t) => (t.includes(':') ? null : oracle(t)))).toEqual([])
  })
})

describe("the renderers' reading", () => {
  // A dotted quad of 1-3 digit octets (leading zeros allowed), or what node:net takes for IPv6
  // once an IPv4 tail's leading zeros are gone, without a zone ID.
  const oracle = (t: string): 'IPv4' | 'IPv6' | null => {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(t)
    if (m) return m.slice(1).every((x) => Number(x) <= 255) ? 'IPv4' : null
    if (t.includes('%')) return null
    const tail = t.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, ...g: string[]) =>
      g
        .slice(0, 4)
        .map((x) => (x.length <= 3 ? String(Number(x)) : 'x'))
        .join('.'),
    )
    return isIPv6(tail) ? 'IPv6' : null
  }

  it('addressFamily, isAddress, parseAddress and addressOrCidrFamily agree with that reading', () => {
    expect(disagreements(addressFamily, oracle)).toEqual([])
    expect(disagreements(isAddress, (t) => oracle(t) !== null)).toEqual([])
    expect(disagreements((t) => parseAddress(t)?.family ?? null, oracle)).toEqual([])
    expect(
      disagreements(addressOrCidrFamily, (t) => oracle(t.includes('/') ? t.split('/')[0]! : t)),
    ).toEqual([])
    for (const [text, family] of [
      ['010.0.0.1', 'IPv4'],
      ['::ffff:010.0.0.1', 'IPv6'],
      ['fe80::1%eth0', null],
      ['1.2.3.4/32', null],
      ['256.0.0.1', null],
      ['1::2::3', null],
    ] as const)
      expect(addressFamily(text), text).toBe(family)
  })

  it('parseAddress gives the address as a number', () => {
    expect(parseAddress('10.0.0.1')).toEqual({family: 'IPv4', value: 0x0a000001n})
    expect(parseAddress('::ffff:1.2.3.4')).toEqual({family: 'IPv6', value: 0xffff01020304n})
    expect(parseAddress('fd00::1')?.value).toBe((0xfd00n << 112n) | 1n)
  })

  it('isAddressCidr: such an address and a prefix length of 1-3 digits its family allows', () => {
    const cidrOracle = (t: string) => {
      const m = /^([^/]*)\/(\d{1,3})$/.exec(t)
      const family = m ? oracle(m[1]!) : null
      return family !== null && Number(m![2]) <= (family === 'IPv4' ? 32 : 128)
    }
    expect(disagreements(isAddressCidr, cidrOracle)).toEqual([])
    expect(isAddressCidr('010.0.0.0/8')).toBe(true)
    expect(isAddressCidr('fe80::%eth0/64')).toBe(false)
  })

  it('cidrContains: same family, and the bits under the prefix equal', () => {
    const r = rng(7)
    const oracle2 = (cidr: string, address: string): boolean => {
      const slash = cidr.indexOf('/')
      const net = slash < 0 ? cidr : cidr.slice(0, slash)
      const fNet = oracle(net)
      if (fNet === null || oracle(address) !== fNet) return false
      const bits = fNet === 'IPv4' ? 32 : 128
      const prefix = slash < 0 ? bits : Number(cidr.slice(slash + 1))
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return false
      const shift = BigInt(bits - prefix)
      return parseAddress(net)!.value >> shift === parseAddress(address)!.value >> shift
    }
    let inside = 0
    for (let i = 0; i < 20_000; i++) {
      const c = sample(r)
      const a = r() < 0.5 ? sample(r) : c.split('/')[0]!
      expect(cidrContains(c, a), `${c} ${a}`).toBe(oracle2(c, a))
      if (cidrContains(c, a)) inside++
    }
    expect(inside).toBeGreaterThan(100)
    expect(cidrContains('10.0.0.0/8', '10.255.0.1')).toBe(true)
    expect(cidrContains('10.0.0.0/8', '11.0.0.1')).toBe(false)
    expect(cidrContains('fd00::/64', 'fd00::5')).toBe(true)
    expect(cidrContains('10.0.0.1', '10.0.0.1')).toBe(true)
    expect(cidrContains('0.0.0.0/0', 'fd00::1')).toBe(false)
    expect(cidrContains('10.0.0.0/ 8', '10.0.0.1')).toBe(true) // Number(' 8'): as the renderers always read it
    expect(cidrContains('10.0.0.0/x', '10.0.0.1')).toBe(false)
  })

  it('hostAddress and isLoopback', () => {
    expect(hostAddress('10.0.0.1')).toBe('10.0.0.1')
    expect(hostAddress('10.0.0.1/32')).toBe('10.0.0.1')
    expect(hostAddress('fd00::1/128')).toBe('fd00::1')
    expect(hostAddress('10.0.0.0/8')).toBeNull()
    expect(hostAddress('10.0.0.1/032')).toBeNull()
    expect(hostAddress('x')).toBeNull()
    for (const ok of ['127.0.0.1', '127.255.1.2', '::1', '0:0:0:0:0:0:0:1'])
      expect(isLoopback(ok), ok).toBe(true)
    for (const bad of ['128.0.0.1', '::2', '::ffff:127.0.0.1', 'localhost'])
      expect(isLoopback(bad), bad).toBe(false)
  })
})

describe('ports and host:port', () => {
  it('parsePort: 1-5 decimal digits, at most 65535', () => {
    const oracle = (t: string) => (/^[0-9]{1,5}$/.test(t) && Number(t) <= 65535 ? Number(t) : null)
    expect(disagreements(parsePort, oracle)).toEqual([])
    for (const t of ['', '-1', '+1', '1e3', ' 80', '65536', '000080', 'http', '٨٠'])
      expect(parsePort(t), t).toBeNull()
    expect(parsePort(undefined)).toBeNull()
    expect(parsePort('0')).toBe(0)
    expect(parsePort('00080')).toBe(80)
    expect(parsePort('65535')).toBe(65535)
  })

  it.each([
    ['10.0.0.1:80', {ip: '10.0.0.1', family: 'IPv4', port: 80}],
    ['[FD00:0::1]:443', {ip: 'fd00::1', family: 'IPv6', port: 443}],
    ['10.0.0.1:0', {ip: '10.0.0.1', family: 'IPv4', port: 0}],
    ['[fe80::1%eth0]:80', {ip: 'fe80::1%eth0', family: 'IPv6', port: 80}],
    ['[10.0.0.1]:80', null],
    ['fd00::1:80', null],
    ['[fd00::1]80', null],
    ['10.0.0.1', null],
    ['10.0.0.1:http', null],
    ['10.0.0.1:65536', null],
    ['kube-dns.svc:domain', null],
  ] as const)('parseHostPort(%j)', (text, expected) =>
    expect(parseHostPort(text)).toEqual(expected),
  )

  it('parseHostPort reads back what joinHostPort writes, for every canonical address', () => {
    let read = 0
    for (const t of INPUTS) {
      const ip = parseIp(t)
      if (!ip) continue
      expect(parseHostPort(joinHostPort(ip.ip, 8080))).toEqual({...ip, port: 8080})
      read++
    }
    expect(read).toBeGreaterThan(1000)
  })

  it.each([
    ['10.0.0.1:80', {ip: '10.0.0.1', port: 80}],
    ['10.0.0.1', {ip: '10.0.0.1', port: null}],
    ['[fd00::1]:80', {ip: 'fd00::1', port: 80}],
    ['[fd00::1]', {ip: 'fd00::1', port: null}],
    ['fd00::1', {ip: 'fd00::1', port: null}],
    ['fd00::1:80', {ip: 'fd00::1:80', port: null}],
    ['anything:80', {ip: 'anything', port: 80}],
    ['10.0.0.1:', null],
    ['10.0.0.1:80-90', null],
    ['[fd00::1]80', null],
    ['[fd00::1', null],
  ] as const)('splitHostPort(%j)', (text, expected) =>
    expect(splitHostPort(text)).toEqual(expected),
  )

  it('joinHostPort: brackets by a colon or by the family given; the host alone, bracketed, without a port', () => {
    expect(joinHostPort('10.0.0.1', 80)).toBe('10.0.0.1:80')
    expect(joinHostPort('fd00::1', 80)).toBe('[fd00::1]:80')
    expect(joinHostPort('fd00::1', null)).toBe('[fd00::1]')
    expect(joinHostPort('fd00::1', '?')).toBe('[fd00::1]:?')
    expect(joinHostPort('*', 30080)).toBe('*:30080')
    expect(joinHostPort('?', 80, 'IPv6')).toBe('[?]:80')
    expect(joinHostPort('fd00::1', 80, 'IPv4')).toBe('fd00::1:80')
    expect(joinHostPort('fd00::1', null, 'IPv6')).toBe('[fd00::1]')
  })
})
