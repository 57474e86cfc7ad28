import {describe, expect, it} from 'vitest'
import {parseServiceQuery} from '../../src/analyze/explain-query.js'
import {canonicalIp} from '../../src/core/address.js'

describe('parseServiceQuery', () => {
  it.each([
    [
      'ns5/svc5',
      undefined,
      {by: 'name', namespace: 'ns5', name: 'svc5', port: null, protocol: null},
    ],
    [
      'ns5/svc5:p80',
      undefined,
      {by: 'name', namespace: 'ns5', name: 'svc5', port: 'p80', protocol: null},
    ],
    [
      'ns5/svc5:80',
      undefined,
      {by: 'name', namespace: 'ns5', name: 'svc5', port: '80', protocol: null},
    ],
    // the display name kp list prints reads back
    [
      'ns5/svc5:p80/tcp',
      undefined,
      {by: 'name', namespace: 'ns5', name: 'svc5', port: 'p80', protocol: 'TCP'},
    ],
    [
      'ns8/svc8/udp',
      undefined,
      {by: 'name', namespace: 'ns8', name: 'svc8', port: null, protocol: 'UDP'},
    ],
    ['svc5', 'ns5', {by: 'name', namespace: 'ns5', name: 'svc5', port: null, protocol: null}],
    [
      'svc5:p80/sctp',
      undefined,
      {by: 'name', namespace: null, name: 'svc5', port: 'p80', protocol: 'SCTP'},
    ],
    ['svc5', undefined, {by: 'name', namespace: null, name: 'svc5', port: null, protocol: null}],
    // a service really called "tcp"
    ['ns1/tcp', undefined, {by: 'name', namespace: 'ns1', name: 'tcp', port: null, protocol: null}],
    ['ns5/svc5', 'ns5', {by: 'name', namespace: 'ns5', name: 'svc5', port: null, protocol: null}],
  ] as const)('reads %s (-n %s) as a name', (text, ns, expected) => {
    expect(parseServiceQuery(text, ns)).toEqual({...expected, text})
  })

  it.each([
    ['172.30.0.41', {ip: '172.30.0.41', port: null, protocol: null}],
    ['172.30.0.41:80', {ip: '172.30.0.41', port: 80, protocol: null}],
    ['172.30.0.41:80/TCP', {ip: '172.30.0.41', port: 80, protocol: 'TCP'}],
    ['[fd00:172:30:0::47]:80/udp', {ip: 'fd00:172:30::47', port: 80, protocol: 'UDP'}],
    ['fd00:172:30::47', {ip: 'fd00:172:30::47', port: null, protocol: null}],
    [':3001', {ip: null, port: 3001, protocol: null}],
    ['*:3001/tcp', {ip: null, port: 3001, protocol: 'TCP'}],
  ] as const)('reads %s as an address', (text, expected) => {
    expect(parseServiceQuery(text)).toEqual({by: 'address', text, ...expected})
  })

  it.each([
    ['', 'empty'],
    ['  ', 'empty'],
    ['a/b/c/d', 'is not ns/name'],
    ['ns/name/quic', 'unknown protocol "quic"'],
    // Were read as namespace "10.96.0.1:80" and name "icmp", then "no service port matches".
    ['10.96.0.1:80/icmp', 'unknown protocol "icmp"'],
    ['[fd00::1]:53/dns', 'unknown protocol "dns"'],
    [':30080/quic', 'unknown protocol "quic"'],
    // Was 'unknown protocol "8"': the prefix length read as a protocol.
    ['10.0.0.0/8', '10.0.0.0/8 is a CIDR; give one address'],
    ['fd00::/64', 'fd00::/64 is a CIDR; give one address'],
    ['ns/', 'empty service name'],
    ['/svc', 'empty namespace'],
    ['ns/svc:', 'empty port'],
    ['1.2.3.4:0', 'not a port number'],
    ['1.2.3.4:65536', 'not a port number'],
    ['[fd00::zz]:80', 'not an IP address'],
    ['999.1.1.1:80', 'not an IP address'],
    [':', 'not a port number'],
  ])('refuses %j', (text, reason) => {
    const q = parseServiceQuery(text)
    expect(q).toHaveProperty('invalid')
    expect((q as {invalid: string}).invalid).toContain(reason)
  })

  it('refuses a namespace given twice, and -n with an address', () => {
    expect(parseServiceQuery('ns1/svc', 'ns2')).toEqual({
      invalid: expect.stringContaining('given twice'),
    })
    expect(parseServiceQuery('1.2.3.4:80', 'ns2')).toEqual({
      invalid: expect.stringContaining('not to an address'),
    })
  })
})

describe('canonicalIp', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1'],
    ['fd00:0::1', 'fd00::1'],
    ['FD00::1', 'fd00::1'],
    ['::ffff:10.0.0.1', '::ffff:a00:1'],
  ])('%s is the address %s', (text, canonical) => expect(canonicalIp(text)).toBe(canonical))

  it.each(['ns/name', 'kube-dns', 'svc.example', '10.0.0.0/8', 'fd00::/64', '1.2.3', ''])(
    '%s is not an address',
    (text) => {
      expect(canonicalIp(text)).toBeNull()
    },
  )
})

describe('a zone ID node:net takes and ipaddr.js cannot spell', () => {
  it('is not an IP address, rather than an internal error', () => {
    expect(parseServiceQuery('[fe80::1%eth-0]:80')).toEqual({
      invalid: '"fe80::1%eth-0" is not an IP address',
    })
    expect(() => parseServiceQuery('fe80::1%eth-0')).not.toThrow()
  })
})
