/**
 * The ipvsadm reader on the corpus listings (fixtures/ipvs/generated, one scenario in five
 * layouts), on hand-made listings of the shapes docs/ipvs-layouts.md b.1–b.3
 * describes (fixtures/ipvsadm), and on bad input.
 *
 * Fixtures, not the kernel: the test machines' kernel has no IPVS, so no virtual server can be
 * created and listed here (docs/architecture.md, "Tests"); the listings are ipvsadm 1.31's formats (see PROVENANCE.md).
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parseIpvsadm, type IpvsadmListing} from '../../../src/readers/ipvsadm/parse.js'
import {ROOT} from '../../helpers/run-cli.js'

const fixture = (rel: string) => readFileSync(`${ROOT}fixtures/${rel}`, 'utf8')
const parse = (rel: string) => parseIpvsadm(fixture(rel), rel)
const codes = (r: {diagnostics: {code: string}[]}) => r.diagnostics.map((d) => d.code)

/** Virtual servers and real servers as `VS -> RS`, without counters or line numbers. */
function shape(listing: IpvsadmListing): string[] {
  return listing.virtualServers
    .flatMap((vs) =>
      vs.realServers.length === 0
        ? [`${vs.key} ->`]
        : vs.realServers.map((rs) => `${vs.key} -> ${rs.ip}:${rs.port}`),
    )
    .sort()
}

// Written by hand from fixtures/ipvs/generated/ipvsadm-Sn.txt (the scenario of fixtures/PROVENANCE.md (IPVS corpus, generated/)).
const SCENARIO_VIRTUAL_SERVERS = [
  'TCP 10.0.0.10:30080',
  'TCP 10.0.0.10:31443',
  'TCP 10.0.100.10:443',
  'TCP 10.0.200.5:80',
  'TCP 10.96.0.1:443',
  'TCP 10.96.0.10:53',
  'TCP 10.96.0.10:9153',
  'TCP 10.96.30.7:6379',
  'TCP 10.96.100.20:80',
  'TCP 10.96.200.30:443',
  'UDP 10.96.0.10:53',
  'SCTP 10.0.0.10:30999',
  'SCTP 10.96.50.5:9999',
  'TCP [fd00:10:96::a]:53',
  'TCP [fd00:10:96::a]:9153',
  'UDP [fd00:10:96::a]:53',
]

describe('ipvsadm: the corpus scenario in every layout', () => {
  const layouts = {
    'ipvsadm-Ln.txt': 'list',
    'ipvsadm-Sn.txt': 'save',
    'ipvsadm-Ln--stats.txt': 'stats',
    'ipvsadm-Ln--rate.txt': 'rate',
    'ipvsadm-Ln--persistent-conn.txt': 'persistent-conn',
  } as const
  const results = Object.fromEntries(
    Object.keys(layouts).map((f) => [f, parse(`ipvs/generated/${f}`)]),
  )

  for (const [file, layout] of Object.entries(layouts)) {
    it(`${file}: ${layout} layout, the 16 virtual servers, no diagnostics`, () => {
      const r = results[file]!
      expect(codes(r)).toEqual([])
      expect(r.listing.layout).toBe(layout)
      expect(r.listing.virtualServers.map((vs) => vs.key)).toEqual(SCENARIO_VIRTUAL_SERVERS)
    })
    it(`${file}: the same real servers as ipvsadm -Sn`, () => {
      expect(shape(results[file]!.listing)).toEqual(shape(results['ipvsadm-Sn.txt']!.listing))
    })
  }

  it('-Ln and -Sn agree on scheduler, persistence and weights', () => {
    const config = (l: IpvsadmListing) =>
      l.virtualServers.map((vs) => [
        vs.key,
        vs.scheduler,
        vs.persistentTimeout,
        vs.realServers.map((rs) => rs.weight),
      ])
    expect(config(results['ipvsadm-Ln.txt']!.listing)).toEqual(
      config(results['ipvsadm-Sn.txt']!.listing),
    )
    expect(config(results['ipvsadm-Ln--persistent-conn.txt']!.listing)).toEqual(
      config(results['ipvsadm-Sn.txt']!.listing),
    )
  })

  it('reads persistence, weight 0 and the version line (ipvsadm-Ln.txt lines 1, 22, 27)', () => {
    const l = results['ipvsadm-Ln.txt']!.listing
    expect(l.kernelVersion).toBe('1.2.1')
    expect(l.connectionTableSize).toBe(4096)
    const sticky = l.virtualServers.find((vs) => vs.key === 'TCP 10.96.30.7:6379')!
    expect(sticky).toMatchObject({scheduler: 'rr', persistentTimeout: 10800, line: 22})
    const web = l.virtualServers.find((vs) => vs.key === 'TCP 10.96.100.20:80')!
    expect(
      web.realServers.map((rs) => [
        rs.ip,
        rs.port,
        rs.forward,
        rs.weight,
        rs.activeConn,
        rs.inactConn,
      ]),
    ).toEqual([
      ['10.244.1.5', 8080, 'Masq', 1, 0, 0],
      ['10.244.2.7', 8080, 'Masq', 0, 3, 11],
    ])
  })

  it('--stats and --rate show neither scheduler nor weights: null, not guessed', () => {
    for (const f of ['ipvsadm-Ln--stats.txt', 'ipvsadm-Ln--rate.txt']) {
      for (const vs of results[f]!.listing.virtualServers) {
        expect(vs.showsConfig).toBe(false)
        expect(vs.scheduler).toBeNull()
        for (const rs of vs.realServers) expect(rs.weight).toBeNull()
      }
    }
  })
})

describe('ipvsadm: hand-made variants (fixtures/ipvsadm/variants)', () => {
  const ln = parse('ipvsadm/variants/ipvsadm-Ln.txt')
  const sn = parse('ipvsadm/variants/ipvsadm-Sn.txt')

  it('-Ln and -Sn give the same virtual servers, flags, persistence and weights', () => {
    expect(codes(ln)).toEqual([])
    expect(codes(sn)).toEqual([])
    const strip = (l: IpvsadmListing) =>
      l.virtualServers.map(({line: _l, showsConfig: _s, realServers, ...vs}) => ({
        ...vs,
        realServers: realServers.map((rs) => [rs.ip, rs.port, rs.forward, rs.weight]),
      }))
    expect(strip(ln.listing)).toEqual(strip(sn.listing))
  })

  it('mh (mh-port) persistent 10800', () => {
    const vs = ln.listing.virtualServers.find((v) => v.key === 'TCP 10.96.0.10:53')!
    expect(vs).toMatchObject({
      scheduler: 'mh',
      schedulerFlags: ['mh-port'],
      persistentTimeout: 10800,
    })
  })

  it('SCTP, UDP with sh-port, a virtual server without real servers', () => {
    expect(
      ln.listing.virtualServers.find((v) => v.key === 'SCTP 10.96.50.5:9999')?.realServers,
    ).toHaveLength(1)
    expect(
      ln.listing.virtualServers.find((v) => v.key === 'UDP 10.96.0.10:53')?.schedulerFlags,
    ).toEqual(['sh-port'])
    expect(
      ln.listing.virtualServers.find((v) => v.key === 'TCP 198.51.100.0:20000')?.realServers,
    ).toEqual([])
  })

  it('an IPv6 name longer than the 28-character column shifts the columns and still parses', () => {
    const vs = ln.listing.virtualServers.find(
      (v) => v.key === 'TCP [2001:db8:aaaa:bbbb:cccc:dddd:eeee:1]:443',
    )!
    expect(vs.family).toBe('IPv6')
    expect(vs.realServers.map((rs) => [rs.ip, rs.port, rs.weight, rs.activeConn])).toEqual([
      ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:100', 8443, 1, 0],
      ['2001:db8:aaaa:bbbb:cccc:dddd:eeee:101', 8443, 0, 1],
    ])
  })

  it('fwmark services, IPv4 and IPv6, with direct routing', () => {
    const fwm = ln.listing.virtualServers.filter((v) => v.fwmark !== null)
    expect(
      fwm.map((v) => [v.key, v.fwmark, v.family, v.protocol, v.realServers[0]?.forward]),
    ).toEqual([
      ['FWM 100 IPv4', 100, 'IPv4', null, 'Route'],
      ['FWM 200 IPv6', 200, 'IPv6', null, 'Route'],
    ])
  })

  it('--thresholds: the threshold columns, no weight (b.2)', () => {
    const text =
      'Prot LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port           Uthreshold Lthreshold ActiveConn InActConn\nTCP  10.96.0.1:443 rr\n  -> 10.0.0.10:6443               0          0          2          0         \n'
    const r = parseIpvsadm(text, 't')
    expect(codes(r)).toEqual([])
    expect(r.listing.layout).toBe('thresholds')
    expect(r.listing.virtualServers[0]!.realServers[0]).toMatchObject({
      ip: '10.0.0.10',
      port: 6443,
      weight: null,
      activeConn: 2,
    })
  })

  it('a header with unknown columns names them; one with none says so (was "unknown ipvsadm header columns: ")', () => {
    const diag = (header: string) =>
      parseIpvsadm(
        `${header}\nTCP  10.96.0.1:443 rr\n  -> 10.0.0.10:6443 Masq 1 0 0\n`,
        't',
      ).diagnostics.find((d) => d.code === 'IPVS_UNKNOWN_HEADER')?.message
    expect(diag('Prot LocalAddress:Port Colour Flags')).toBe(
      'unknown ipvsadm header columns: Colour Flags',
    )
    expect(diag('Prot LocalAddress:Port')).toBe(
      'ipvsadm header without columns after LocalAddress:Port',
    )
  })

  it('a single-service listing (-Ln -t VIP:PORT) has no version line', () => {
    const r = parse('ipvsadm/single-service/ipvsadm-Ln-t-10.96.100.20-80.txt')
    expect(codes(r)).toEqual([])
    expect(r.listing.kernelVersion).toBeNull()
    expect(shape(r.listing)).toEqual([
      'TCP 10.96.100.20:80 -> 10.244.1.5:8080',
      'TCP 10.96.100.20:80 -> 10.244.2.7:8080',
    ])
  })
})

describe('ipvsadm: refused and bad input', () => {
  it('ipvsadm -L without -n is refused with one error at the first resolved line, saying to use -n', () => {
    const r = parse('ipvsadm/non-numeric/ipvsadm-L.txt')
    const errors = r.diagnostics.filter((d) => d.severity === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({
      code: 'IPVS_NOT_NUMERIC',
      source: {path: 'ipvsadm/non-numeric/ipvsadm-L.txt', line: 4},
    })
    expect(errors[0]!.message).toContain('ipvsadm -Ln')
    // Lines 4-7: two resolved services and their real servers; the numeric 10.96.0.1:443 is not counted.
    expect(errors[0]!.message).toContain('4 lines')
  })

  it('garbage: a warning per line, no virtual servers, no throw', () => {
    const r = parseIpvsadm('hello world\nthis is not ipvsadm\n', 'g')
    expect(codes(r)).toEqual(['IPVS_UNKNOWN_LINE', 'IPVS_UNKNOWN_LINE', 'IPVS_NO_VIRTUAL_SERVERS'])
    expect(r.listing.virtualServers).toEqual([])
  })

  it('empty input: no virtual servers, said so', () => {
    expect(codes(parseIpvsadm('', 'e'))).toEqual(['IPVS_NO_VIRTUAL_SERVERS'])
  })

  it('a listing cut in the middle of a real-server row keeps what is whole and flags the cut row', () => {
    const text = fixture('ipvs/generated/ipvsadm-Ln.txt')
    const cut = text.slice(
      0,
      text.indexOf('  -> 10.244.2.7:8080') + '  -> 10.244.2.7:8080              Masq'.length,
    )
    const r = parseIpvsadm(cut, 'cut')
    // The cut is an error (the state is incomplete, exit 3): what followed the row is missing.
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      ['error', 'IPVS_TRUNCATED', 6],
      ['warning', 'IPVS_BAD_REAL_SERVER', 6],
    ])
    expect(r.listing.virtualServers).toHaveLength(1)
    // The address of the cut row was whole: it is kept, and its weight is unknown; its last word
    // ("Masq", which may have been cut) is not read.
    expect(r.listing.virtualServers[0]!.realServers.map((rs) => [rs.weight, rs.forward])).toEqual([
      [1, 'Masq'],
      [null, null],
    ])
  })

  it('a listing cut inside an address does not invent the shorter one (10.244.2.7:8080 cut to :80)', () => {
    const text = fixture('ipvs/generated/ipvsadm-Ln.txt')
    const cut = text.slice(0, text.indexOf('  -> 10.244.2.7:8080') + '  -> 10.244.2.7:80'.length)
    const r = parseIpvsadm(cut, 'cut')
    expect(r.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual([
      'IPVS_TRUNCATED',
    ])
    expect(r.diagnostics[0]!.message).toContain('"10.244.2.7:80" may be cut')
    expect(shape(r.listing)).toEqual(['TCP 10.0.0.10:30080 -> 10.244.1.5:8080'])
  })

  it('an ipvsadm -Sn dump cut inside a -a line: the error, and no real server from the cut line', () => {
    const text = fixture('ipvs/generated/ipvsadm-Sn.txt')
    const at = text.indexOf('-r 10.244.2.7:8080') + '-r 10.244.2.7:80'.length
    const r = parseIpvsadm(text.slice(0, at), 'cut')
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toContainEqual([
      'error',
      'IPVS_TRUNCATED',
      3,
    ])
    expect(shape(r.listing)).toEqual(['TCP 10.0.0.10:30080 -> 10.244.1.5:8080'])
  })

  it('a last row whole up to its padding but without a newline is still cut: all of it is read, with the error', () => {
    const text = fixture('ipvs/generated/ipvsadm-Ln.txt')
    const r = parseIpvsadm(text.replace(/\n$/, ''), 'no-newline')
    expect(codes(r)).toEqual(['IPVS_TRUNCATED'])
    expect(r.diagnostics[0]!.message).toContain('add it')
    expect(shape(r.listing)).toEqual(shape(parseIpvsadm(text, 'whole').listing))
  })

  it('a cut at a line boundary cannot be told from a shorter listing (documented in docs/ipvs-layouts.md)', () => {
    const text = fixture('ipvs/generated/ipvsadm-Ln.txt')
    const r = parseIpvsadm(text.slice(0, text.indexOf('  -> 10.244.2.7:8080')), 'cut')
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
  })

  it('numbers no 32-bit kernel field can hold are refused, not read as 1e20', () => {
    // Were read as they stood: a persistence timeout of 1e20 s, a weight of 1e23, FWM 1e20.
    const list = parseIpvsadm(
      [
        'TCP  10.96.0.1:443 rr persistent 99999999999999999999',
        '  -> 10.0.0.10:6443              Masq    100000000000000000000000 0          0',
        'FWM  99999999999999999999 rr',
        'TCP  10.96.0.3:80 rr persistent 4294967295',
        '',
      ].join('\n'),
      'l',
    )
    expect(list.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['IPVS_BAD_SERVICE', 1],
      ['IPVS_BAD_REAL_SERVER', 2],
      ['IPVS_BAD_SERVICE', 3],
    ])
    const save = parseIpvsadm(
      [
        '-A -t 10.96.0.2:80 -s rr -p 4294967296',
        '-a -t 10.96.0.2:80 -r 10.0.0.11:80 -m -w 4294967296',
        '',
      ].join('\n'),
      's',
    )
    expect(save.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['IPVS_BAD_SERVICE', 1],
      ['IPVS_BAD_REAL_SERVER', 2],
    ])
    const byKey = new Map(
      [...list.listing.virtualServers, ...save.listing.virtualServers].map((vs) => [vs.key, vs]),
    )
    expect(byKey.get('TCP 10.96.0.1:443')).toMatchObject({persistentTimeout: null})
    expect(byKey.get('TCP 10.96.0.1:443')!.realServers.map((rs) => rs.weight)).toEqual([null])
    expect(byKey.get('TCP 10.96.0.2:80')).toMatchObject({persistentTimeout: null})
    // A -w kp cannot read is unknown, as in the list layout; not ipvsadm's default of 1.
    expect(byKey.get('TCP 10.96.0.2:80')!.realServers.map((rs) => rs.weight)).toEqual([null])
    expect(byKey.get('TCP 10.96.0.3:80')).toMatchObject({persistentTimeout: 4294967295})
    expect([...byKey.keys()].some((k) => k.includes('e+'))).toBe(false)
  })

  it('CRLF line ends read the same as LF', () => {
    const text = fixture('ipvs/generated/ipvsadm-Ln.txt')
    const crlf = parseIpvsadm(text.replace(/\n/g, '\r\n'), 'x')
    const lf = parseIpvsadm(text, 'x')
    expect(crlf.listing).toEqual(lf.listing)
    expect(crlf.diagnostics).toEqual([])
  })

  it('a 1 MB line is skipped with a diagnostic, the rest still read', () => {
    const text = `${fixture('ipvs/generated/ipvsadm-Sn.txt')}${'x'.repeat(1024 * 1024)}\n-A -t 10.96.9.9:80 -s rr\n`
    const r = parseIpvsadm(text, 'big')
    expect(codes(r)).toEqual(['IPVS_LINE_TOO_LONG'])
    expect(r.listing.virtualServers.map((vs) => vs.key)).toContain('TCP 10.96.9.9:80')
    expect(r.listing.virtualServers).toHaveLength(17)
  })

  it('a -a line without its -A keeps the virtual server and says so', () => {
    const r = parseIpvsadm('-a -t 10.96.0.1:443 -r 10.0.0.10:6443 -m -w 1\n', 'o')
    expect(codes(r)).toEqual(['IPVS_ORPHAN_REAL_SERVER'])
    expect(r.listing.virtualServers[0]).toMatchObject({key: 'TCP 10.96.0.1:443', scheduler: null})
  })

  it('connection listings (ipvsadm -Lnc) are not virtual servers', () => {
    const text =
      'IPVS connection entries\npro expire state       source             virtual            destination\nTCP 14:59  ESTABLISHED 10.244.1.2:40000   10.96.0.1:443      10.0.0.10:6443\n'
    expect(codes(parseIpvsadm(text, 'c'))).toEqual([
      'IPVS_CONNECTION_LISTING',
      'IPVS_NO_VIRTUAL_SERVERS',
    ])
  })
})
