/**
 * `cat /proc/net/ip_vs` (docs/ipvs-layouts.md b.6) and `ipvsadm -Ln` pasted without its header:
 * both read as the list layout. fixtures/ipvsadm/proc/ is the corpus scenario of
 * fixtures/ipvs/generated/ipvsadm-Ln.txt in the kernel's own formats, so both must give the
 * same virtual servers; only the persistence timeout (jiffies) is unknown.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parseIpvsadm, type IpvsadmListing} from '../../../src/readers/ipvsadm/parse.js'
import {parseProcHostPort} from '../../../src/readers/ipvsadm/proc-hex.js'
import {readState} from '../../../src/readers/read-state.js'
import {sniffFormat} from '../../../src/readers/registry.js'
import {ROOT} from '../../helpers/run-cli.js'

const PROC = 'fixtures/ipvsadm/proc/proc-net-ip_vs.txt'
const LN = 'fixtures/ipvs/generated/ipvsadm-Ln.txt'
const text = (rel: string) => readFileSync(`${ROOT}${rel}`, 'utf8')
const codes = (r: {diagnostics: {code: string}[]}) => r.diagnostics.map((d) => d.code)

/** Everything a virtual server says but its line numbers and the persistence timeout. */
function shape(listing: IpvsadmListing) {
  return listing.virtualServers.map((vs) => ({
    key: vs.key,
    scheduler: vs.scheduler,
    persistent: vs.persistent,
    realServers: vs.realServers.map((rs) => [rs.ip, rs.port, rs.forward, rs.weight, rs.inactConn]),
  }))
}

describe('/proc/net/ip_vs', () => {
  it('reads hex IPv4 and uncompressed IPv6 addresses and hex ports', () => {
    expect(parseProcHostPort('0A600001:01BB')).toEqual({ip: '10.96.0.1', family: 'IPv4', port: 443})
    expect(parseProcHostPort('C0A80A0B:7580')).toEqual({
      ip: '192.168.10.11',
      family: 'IPv4',
      port: 30080,
    })
    expect(parseProcHostPort('[fd00:0010:0096:0000:0000:0000:0000:000a]:0035')).toEqual({
      ip: 'fd00:10:96::a',
      family: 'IPv6',
      port: 53,
    })
    expect(parseProcHostPort('10.96.0.1:443')).toBeNull()
  })

  it('gives the virtual servers of the same node`s ipvsadm -Ln', () => {
    const proc = parseIpvsadm(text(PROC), PROC)
    const ln = parseIpvsadm(text(LN), LN)
    expect(proc.listing.layout).toBe('proc')
    expect(shape(proc.listing)).toEqual(shape(ln.listing))
    expect(proc.listing.virtualServers.length).toBeGreaterThan(10)
    // The timeout is in jiffies: said once, never taken for seconds.
    expect(codes(proc)).toEqual(['IPVS_PROC_TIMEOUT_JIFFIES'])
    const sticky = proc.listing.virtualServers.find((vs) => vs.key === 'TCP 10.96.30.7:6379')!
    expect(sticky.persistentTimeout).toBeNull()
    expect(sticky.persistenceMask).toBeNull()
  })

  it('is sniffed as ipvsadm and builds the same state, affinity timeout unknown', async () => {
    expect(sniffFormat(text(PROC))).toBe('ipvsadm')
    const proc = await readState({sources: [{path: PROC, text: text(PROC)}]})
    const ln = await readState({sources: [{path: LN, text: text(LN)}]})
    expect(proc.sources[0]!.format).toBe('ipvsadm')
    const strip = (s: typeof proc) =>
      s.services.map((sp) => ({...sp, rules: [], sessionAffinity: sp.sessionAffinity?.type}))
    expect(strip(proc)).toEqual(strip(ln))
    const sticky = proc.services.find((sp) => sp.frontends[0]!.ip === '10.96.30.7')!
    expect(sticky.sessionAffinity).toEqual({type: 'ClientIP', timeoutSeconds: null})
    expect(codes(proc).filter((c) => c !== 'IPVS_PROC_TIMEOUT_JIFFIES')).toEqual(
      codes(ln).filter((c) => c !== 'IPVS_PROC_TIMEOUT_JIFFIES'),
    )
  })

  it('reads a persistence mask other than the host mask, ops, and hex firewall marks', () => {
    const r = parseIpvsadm(
      [
        'TCP  0A600001:01BB wlc ops persistent 75000 FFFFFF00',
        '  -> 0A00000A:192B      Route   1      0          0         ',
        'FWM  00000064 rr ',
        '  -> 0A00000B:0050      Masq    1      0          0         ',
        '',
      ].join('\n'),
      'ip_vs',
    )
    const [vs, fwm] = r.listing.virtualServers
    expect(vs).toMatchObject({
      key: 'TCP 10.96.0.1:443',
      scheduler: 'wlc',
      onePacket: true,
      persistent: true,
      persistenceMask: '255.255.255.0',
    })
    expect(vs!.realServers[0]).toMatchObject({ip: '10.0.0.10', port: 6443, forward: 'Route'})
    expect(fwm).toMatchObject({fwmark: 100, scheduler: 'rr'})
    expect(codes(r)).toEqual(['IPVS_PROC_TIMEOUT_JIFFIES'])
  })
})

describe('ipvsadm -Ln pasted without its header lines', () => {
  const ln = text(LN)
  const headerless = ln.split('\n').slice(3).join('\n')

  it('is sniffed as ipvsadm, and reads like the whole listing', async () => {
    expect(headerless.startsWith('TCP  10.0.0.10:30080 rr')).toBe(true)
    expect(sniffFormat(headerless)).toBe('ipvsadm')
    expect(sniffFormat('UDP  [fd00:10:96::a]:53 rr\n')).toBe('ipvsadm')
    expect(sniffFormat('FWM  100 rr\n')).toBe('ipvsadm')
    const whole = await readState({sources: [{path: 'a', text: ln}]})
    const pasted = await readState({sources: [{path: 'a', text: headerless}]})
    expect(pasted.services.map((s) => ({...s, rules: []}))).toEqual(
      whole.services.map((s) => ({...s, rules: []})),
    )
    expect(codes(pasted)).toEqual(codes(whole))
  })

  it('a proc listing pasted without its header is sniffed and read too', () => {
    const proc = text(PROC).split('\n').slice(3).join('\n')
    expect(sniffFormat(proc)).toBe('ipvsadm')
    expect(parseIpvsadm(proc, 'p').listing.layout).toBe('proc')
  })

  it('a line that only starts with TCP is not a listing', () => {
    expect(sniffFormat('TCP is a protocol\n')).toBeNull()
  })
})
