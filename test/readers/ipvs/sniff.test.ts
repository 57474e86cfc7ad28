/**
 * Every IPVS-mode fixture is recognised by content alone (src/readers/registry.ts), including the
 * shapes without a telling first line: a single-service listing (no version line), `-Sn` that
 * starts with an SCTP service, `ip -o addr`, pretty `ip -j -p addr`, and CRLF `ipset list`.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {sniffFormat} from '../../../src/readers/registry.js'
import {ROOT} from '../../helpers/run-cli.js'

const sniff = (rel: string) => sniffFormat(readFileSync(`${ROOT}fixtures/${rel}`, 'utf8'))

describe('sniffing the IPVS-mode formats', () => {
  const cases: [string, string][] = [
    ['ipvs/generated/ipvsadm-Ln.txt', 'ipvsadm'],
    ['ipvs/generated/ipvsadm-Sn.txt', 'ipvsadm'],
    ['ipvs/generated/ipvsadm-Ln--stats.txt', 'ipvsadm'],
    ['ipvs/generated/ipvsadm-Ln--rate.txt', 'ipvsadm'],
    ['ipvs/generated/ipvsadm-Ln--persistent-conn.txt', 'ipvsadm'],
    ['ipvsadm/single-service/ipvsadm-Ln-t-10.96.100.20-80.txt', 'ipvsadm'],
    ['ipvsadm/non-numeric/ipvsadm-L.txt', 'ipvsadm'],
    ['ipvsadm/variants/ipvsadm-Sn.txt', 'ipvsadm'],
    ['ipvsadm/proc/proc-net-ip_vs.txt', 'ipvsadm'],
    ['ipvs/generated/ipset-save.ipvs-mode.txt', 'ipset'],
    ['ipvs/generated/ipset-list.ipvs-mode.txt', 'ipset'],
    ['ip-addr/real-netns/ip-addr-show-kube-ipvs0.txt', 'ip-addr'],
    ['ip-addr/real-netns/ip-o-addr-show-kube-ipvs0.txt', 'ip-addr'],
    ['ip-addr/real-netns/ip-j-addr-show-kube-ipvs0.json', 'ip-addr'],
    ['ip-addr/real-netns/ip-j-p-addr.json', 'ip-addr'],
    ['ip-addr/real-netns/ip-addr.txt', 'ip-addr'],
    ['ipvs/generated/iptables-save.ipvs-mode.nft-backend.txt', 'iptables-save'],
  ]
  for (const [file, format] of cases) {
    it(`${file} is ${format}`, () => expect(sniff(file)).toBe(format))
  }

  it('-Sn starting with an SCTP service, a bitmap-first ipset save and CRLF ipset list', () => {
    expect(sniffFormat('-A --sctp-service 10.96.50.5:9999 -s rr\n')).toBe('ipvsadm')
    expect(
      sniffFormat(
        'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535\nadd KUBE-NODE-PORT-TCP 30080\n',
      ),
    ).toBe('ipset')
    expect(sniffFormat('Name: KUBE-CLUSTER-IP\r\nType: hash:ip,port\r\n')).toBe('ipset')
    expect(
      sniffFormat('IPVS connection entries\npro expire state source virtual destination\n'),
    ).toBe('ipvsadm')
  })
})

// sniff-fixtures.json: what every fixture file sniffed as before the headerless `ipvsadm -Ln` and
// /proc/net/ip_vs rules were added (issue 21 §3); a new sniff rule must not take any of them.
describe('every fixture sniffs as it did before the headerless ipvsadm rule', () => {
  const before = JSON.parse(
    readFileSync(`${ROOT}test/readers/sniff-fixtures.json`, 'utf8'),
  ) as Record<string, string | null>
  it(`${Object.keys(before).length} fixture files`, () => {
    const now = Object.fromEntries(
      Object.keys(before).map((rel) => [
        rel,
        sniffFormat(readFileSync(`${ROOT}${rel}`, 'utf8').slice(0, 64 * 1024)),
      ]),
    )
    expect(now).toEqual(before)
  })
})
