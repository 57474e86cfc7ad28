/**
 * A loadBalancerSourceRange of one address (`203.0.113.7/32`, a common way to allow one client)
 * is written `-s 198.51.100.7/32` in KUBE-FW, and the rule reader drops `/32` and `/128` from
 * addresses. The range came out as "198.51.100.7": `kp list --json` wrote a state that kp then
 * refused to read ("expected a CIDR"), and `kp migrate` left the range out as "not a CIDR", so
 * the rendered LoadBalancer had no firewall at all. Ranges (and pod CIDRs) are CIDRs again; the LB
 * IPs kube-proxy also lets through its KUBE-FW chain are still not taken for ranges.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {readState} from '../../../src/readers/read-state.js'
import {renderNftables} from '../../../src/render/nftables/render.js'
import {ROOT} from '../../helpers/run-cli.js'
import {readText, service} from './helpers.js'

const fixture = (dir: string) =>
  readFileSync(join(ROOT, 'fixtures/iptables', dir, 'input.rules'), 'utf8')

describe('one-address loadBalancerSourceRanges', () => {
  it.each([
    [
      'realsave-multipleservices-older',
      '-s 203.0.113.0/25 ',
      '-s 198.51.100.7/32 ',
      'ns5/svc5:p80/tcp',
      '198.51.100.7/32',
      'ip saddr != { 198.51.100.7/32 } drop',
    ],
    [
      'realsave-handmade-ipv6',
      '-s 2001:db8:1::/48 ',
      '-s 2001:db8:1::7/128 ',
      'ns7/svc7:p80/tcp',
      '2001:db8:1::7/128',
      'ip6 saddr != { 2001:db8:1::7/128 } drop',
    ],
  ])(
    '%s: %s read as a CIDR, saved and read again, and rendered as a firewall',
    async (dir, from, to, name, range, firewall) => {
      const dump = fixture(dir)
      expect(dump).toContain(from)
      const state = await readText(dump.replace(from, to))
      const lb = service(state, name).frontends.find((f) => f.type === 'LoadBalancer')!
      expect(lb.sourceRanges).toEqual([range])
      // The saved state is read back as it was written.
      const again = await readState({sources: [{path: 'saved.json', text: JSON.stringify(state)}]})
      expect(again.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
      expect(
        service(again, name).frontends.find((f) => f.type === 'LoadBalancer')!.sourceRanges,
      ).toEqual([range])
      const rendered = renderNftables(state, {})
      expect(rendered.text).toContain(firewall)
      expect(rendered.findings.map((f) => f.id)).not.toContain('RENDER_BAD_SOURCE_RANGE')
    },
  )

  it('the LB IP that KUBE-FW lets through itself is not a range', async () => {
    // kube-proxy adds `-s LBIP/32 -j KUBE-EXT-...` for traffic from the node to its own LB IP.
    const dump = fixture('realsave-multipleservices-older')
    const line = dump
      .split('\n')
      .find((l) => l.startsWith('-A KUBE-FW-') && l.includes('-s 203.0.113.0/25'))!
    const self = line.replace('-s 203.0.113.0/25', '-s 5.6.7.8/32')
    const state = await readText(dump.replace(line, `${line}\n${self}`))
    expect(
      service(state, 'ns5/svc5:p80/tcp').frontends.find((f) => f.type === 'LoadBalancer'),
    ).toMatchObject({ip: '5.6.7.8', sourceRanges: ['203.0.113.0/25']})
  })
})
