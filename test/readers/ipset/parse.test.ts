/**
 * The ipset reader on the real ipset 7.17 output of the corpus (fixtures/ipvs/generated:
 * `ipset save` and `ipset list` of the same sets) and on bad input. Entry grammar from
 * docs/ipvs-layouts.md b.4.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parseIpset, type IpsetDump} from '../../../src/readers/ipset/parse.js'
import {ROOT} from '../../helpers/run-cli.js'

const fixture = (rel: string) => readFileSync(`${ROOT}fixtures/${rel}`, 'utf8')
const codes = (r: {diagnostics: {code: string}[]}) => r.diagnostics.map((d) => d.code)
const save = parseIpset(fixture('ipvs/generated/ipset-save.ipvs-mode.txt'), 'save')
const list = parseIpset(fixture('ipvs/generated/ipset-list.ipvs-mode.txt'), 'list')

/** Sets as `name type family: sorted members` (hash order is arbitrary, b.4). */
function shape(dump: IpsetDump): string[] {
  return dump.sets.map(
    (s) =>
      `${s.name} ${s.type} ${s.family}: ${s.members
        .map((m) => m.text)
        .sort()
        .join(' ')}`,
  )
}

describe('ipset: the corpus sets', () => {
  it('save and list hold the same 34 sets and members, without diagnostics', () => {
    expect(codes(save)).toEqual([])
    expect(codes(list)).toEqual([])
    expect(save.dump.layout).toBe('save')
    expect(list.dump.layout).toBe('list')
    expect(save.dump.sets).toHaveLength(34)
    expect(shape(list.dump)).toEqual(shape(save.dump))
  })

  it('splits hash:ip,port members, IPv6 without brackets (ipset-save line 58)', () => {
    const v6 = save.dump.sets.find((s) => s.name === 'KUBE-6-CLUSTER-IP')!
    expect(v6.family).toBe('IPv6')
    expect(v6.members[0]).toEqual({
      text: 'fd00:10:96::a,tcp:53',
      ip: 'fd00:10:96::a',
      protocol: 'TCP',
      port: 53,
      third: null,
      line: 58,
    })
  })

  it('splits hash:ip,port,net and hash:ip,port,ip members', () => {
    const cidr = save.dump.sets.find((s) => s.name === 'KUBE-LOAD-BALANCER-SOURCE-CIDR')!
    expect(cidr.members.map((m) => [m.ip, m.protocol, m.port, m.third])).toEqual([
      ['10.0.100.10', 'TCP', 443, '10.0.0.0/24'],
      ['10.0.100.10', 'TCP', 443, '192.0.2.0/24'],
    ])
    const loop = save.dump.sets.find((s) => s.name === 'KUBE-LOOP-BACK')!
    expect(loop.members.find((m) => m.protocol === 'SCTP')).toMatchObject({
      ip: '10.244.1.9',
      port: 9999,
      third: '10.244.1.9',
    })
  })

  it('bitmap:port sets have no family and numeric members', () => {
    const np = save.dump.sets.find((s) => s.name === 'KUBE-NODE-PORT-TCP')!
    expect(np.family).toBeNull()
    expect(np.members.map((m) => m.port)).toEqual([30080, 31443])
  })

  it('the 31-character IPv6 names are kept as ipset prints them', () => {
    const names = save.dump.sets.map((s) => s.name)
    expect(names).toContain('KUBE-6-LOAD-BALANCER-SOURCE-CID')
    expect(names).toContain('KUBE-6-NODE-PORT-LOCAL-SCTP-HAS')
  })

  it('ipset list keeps References (KUBE-CLUSTER-IP is used by 3 rules)', () => {
    expect(list.dump.sets.find((s) => s.name === 'KUBE-CLUSTER-IP')?.references).toBe(3)
  })
})

describe('ipset: other real shapes (fixtures/ipset)', () => {
  const odd = parseIpset(fixture('ipset/real-odd/ipset-save.txt'), 'save')
  const oddList = parseIpset(fixture('ipset/real-odd/ipset-list.txt'), 'list')

  it('save and list of the same sets agree, member options (timeout, counters, comment) cut off', () => {
    expect(codes(odd)).toEqual([])
    expect(codes(oddList)).toEqual([])
    expect(shape(oddList.dump)).toEqual(shape(odd.dump))
    expect(odd.dump.sets[0]!.members.map((m) => [m.text, m.protocol, m.port])).toEqual([
      ['10.96.50.5,sctp:9999', 'SCTP', 9999],
      ['10.96.0.1,tcp:443', 'TCP', 443],
    ])
  })

  it("IPv6 members and CIDRs are read in ipset's compressed form; other tools' sets are kept as text", () => {
    const cid = odd.dump.sets.find((s) => s.name === 'KUBE-6-LOAD-BALANCER-SOURCE-CID')!
    expect(cid.members[0]).toMatchObject({
      ip: 'fd00:10:100::10',
      protocol: 'TCP',
      port: 443,
      third: '2001:db8::/32',
    })
    const calico = odd.dump.sets.find((s) => s.name === 'cali40all-ipam-pools')!
    expect(calico.members.map((m) => [m.text, m.ip])).toEqual([['10.244.0.0/16', null]])
  })

  it('the older list block (Revision 2, no "Number of entries") reads the same way', () => {
    const r = parseIpset(fixture('ipset/old-list/ipset-list.txt'), 'old')
    expect(codes(r)).toEqual([])
    expect(shape(r.dump)).toEqual([
      'KUBE-CLUSTER-IP hash:ip,port IPv4: 10.96.0.10,tcp:53 10.96.0.10,udp:53',
      'KUBE-NODE-PORT-TCP bitmap:port null: 30080',
    ])
  })
})

describe('ipset: bad input', () => {
  it('a list cut inside the members of its last set, at a line boundary, is cut off: an error at the entry count', () => {
    const text = fixture('ipvs/generated/ipset-list.ipvs-mode.txt')
    const cut = text.slice(0, text.indexOf('10.96.0.10,tcp:9153'))
    const r = parseIpset(cut, 'cut')
    // KUBE-CLUSTER-IP declares 8 entries (line 23) and lists 2 before the cut.
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      ['error', 'IPSET_TRUNCATED', 23],
    ])
    expect(r.diagnostics[0]!.message).toContain('2 of the 8')
  })

  it('a list cut in the header of its last set (before Members:) is cut off', () => {
    const text = fixture('ipvs/generated/ipset-list.ipvs-mode.txt')
    const cut = text.slice(0, text.indexOf('Name: KUBE-CLUSTER-IP'))
    const at = cut.length + text.slice(cut.length).indexOf('References:')
    const r = parseIpset(text.slice(0, at), 'cut')
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['error', 'IPSET_TRUNCATED']])
    expect(r.diagnostics[0]!.message).toContain('KUBE-CLUSTER-IP, before its Members:')
  })

  it('a set whose count disagrees before the last one stays a warning: what follows it was read', () => {
    const text = fixture('ipvs/generated/ipset-list.ipvs-mode.txt')
    const r = parseIpset(text.replace('Number of entries: 7', 'Number of entries: 9'), 'edited')
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([
      ['warning', 'IPSET_ENTRY_COUNT'],
    ])
  })

  it('ipset save cut in the middle of an add line: an error, and the cut member is not read', () => {
    const text = fixture('ipvs/generated/ipset-save.ipvs-mode.txt')
    const at =
      text.indexOf('add KUBE-CLUSTER-IP 10.96.0.10,tcp:9153') +
      'add KUBE-CLUSTER-IP 10.96.0.10,tcp:91'.length
    const r = parseIpset(text.slice(0, at), 'cut')
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['error', 'IPSET_TRUNCATED']])
    const set = r.dump.sets.find((s) => s.name === 'KUBE-CLUSTER-IP')!
    expect(set.members.map((m) => m.text)).toEqual(['10.96.0.10,udp:53', '10.96.200.30,tcp:443'])
  })

  it('ipset save cut at a line boundary cannot be told from a shorter dump: kube-proxy leaves sets empty too', () => {
    const text = fixture('ipvs/generated/ipset-save.ipvs-mode.txt')
    const r = parseIpset(text.slice(0, text.indexOf('add KUBE-CLUSTER-IP')), 'cut')
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
  })

  it('bad members are flagged with their line and kept as text', () => {
    const text =
      'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536\nadd KUBE-CLUSTER-IP 10.96.0.999,tcp:80\nadd KUBE-CLUSTER-IP fd00::1,tcp:80\nadd KUBE-CLUSTER-IP 10.96.0.1,icmp:ping\nadd KUBE-NOPE 1.2.3.4\n'
    const r = parseIpset(text, 'bad')
    expect(r.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['IPSET_BAD_MEMBER', 2],
      ['IPSET_BAD_MEMBER', 3],
      ['IPSET_BAD_MEMBER', 4],
      ['IPSET_UNKNOWN_SET', 5],
    ])
    expect(r.dump.sets[0]!.members.map((m) => m.text)).toEqual([
      '10.96.0.999,tcp:80',
      'fd00::1,tcp:80',
      '10.96.0.1,icmp:ping',
    ])
  })

  it('garbage and empty input never throw', () => {
    expect(codes(parseIpset('foo bar\n', 'g'))).toEqual(['IPSET_UNKNOWN_LINE', 'IPSET_NO_SETS'])
    expect(codes(parseIpset('', 'e'))).toEqual(['IPSET_NO_SETS'])
  })

  it('CRLF line ends read the same as LF', () => {
    const text = fixture('ipvs/generated/ipset-list.ipvs-mode.txt')
    expect(parseIpset(text.replace(/\n/g, '\r\n'), 'x')).toEqual(parseIpset(text, 'x'))
  })

  it('a 1 MB line is skipped with a diagnostic', () => {
    const r = parseIpset(
      `${'a'.repeat(1 << 20)}\n${fixture('ipvs/generated/ipset-save.ipvs-mode.txt')}`,
      'big',
    )
    expect(codes(r)).toEqual(['IPSET_LINE_TOO_LONG'])
    expect(r.dump.sets).toHaveLength(34)
  })
})

describe('ipset restore input', () => {
  it('flush empties a set, so only what is added after it is a member (kp migrate --to ipvs writes create, flush, add)', () => {
    const text = [
      'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536',
      'add KUBE-CLUSTER-IP 10.96.0.9,tcp:80',
      'flush KUBE-CLUSTER-IP',
      'add KUBE-CLUSTER-IP 10.96.0.1,tcp:443',
      'create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536',
      'flush KUBE-LOOP-BACK',
      'flush KUBE-NO-SUCH-SET',
      '',
    ].join('\n')
    const r = parseIpset(text, 'restore')
    expect(r.dump.sets.map((set) => [set.name, set.members.map((m) => m.text)])).toEqual([
      ['KUBE-CLUSTER-IP', ['10.96.0.1,tcp:443']],
      ['KUBE-LOOP-BACK', []],
    ])
    expect(r.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([['IPSET_UNKNOWN_SET', 7]])
  })

  it('a flush without a set name empties every set, and many of them stay one pass', () => {
    const r = parseIpset(
      [
        'create A hash:ip family inet',
        'add A 10.0.0.1',
        'create B hash:ip family inet',
        'add B 10.0.0.2',
        'flush',
        'add B 10.0.0.3',
        '',
      ].join('\n'),
      'all',
    )
    expect(r.dump.sets.map((set) => [set.name, set.members.map((m) => m.text)])).toEqual([
      ['A', []],
      ['B', ['10.0.0.3']],
    ])
    // 60,000 sets and a bare flush after each: each flush empties only the sets filled since the last one.
    const n = 60_000
    const lines: string[] = []
    for (let i = 0; i < n; i++)
      lines.push(
        `create S${i} hash:ip family inet`,
        `add S${i} 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        'flush',
      )
    const many = parseIpset(`${lines.join('\n')}\n`, 'many')
    expect(many.dump.sets).toHaveLength(n)
    expect(many.dump.sets.every((set) => set.members.length === 0)).toBe(true)
  }, 20_000)
})
