/**
 * Named counters in nft input (issue 21 §3): `counter NAME { packets N bytes M }` objects in a
 * table (over several lines or on one), `add counter ...` commands, and `counter name "x"` /
 * `counter packets N bytes M` statements in rules. They say nothing about services: the state is
 * the one read without them, and no warning is printed (only an info that they were skipped).
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const text = (rel: string) => readFileSync(`${ROOT}fixtures/${rel}`, 'utf8')
const read = (t: string) => readState({sources: [{path: 'ruleset.nft', text: t}]})
/** Services without their line references, which the inserted lines shift. */
const services = (s: ProxyState) => s.services.map((sp) => ({...sp, rules: []}))
// Without their lines: the counters added to the input move the lines after them.
const notInfo = (s: ProxyState) =>
  s.diagnostics
    .filter((d) => d.severity !== 'info')
    .map((d) => ({severity: d.severity, code: d.code, message: d.message}))
const skipped = (s: ProxyState) =>
  s.diagnostics.filter((d) => d.code === 'NFT_SKIPPED_OBJECT').map((d) => d.message)

/** Replaces `from` once, and fails when the fixture no longer has it. */
function edit(t: string, from: string, to: string): string {
  expect(t).toContain(from)
  return t.replace(from, to)
}

describe('named counters in nft list ruleset', () => {
  const base = text('nft/newest-inline-dnat/input.nft')

  it('counter objects in a table and counter statements in rules leave the state as it was', async () => {
    let t = edit(
      base,
      '\tset cluster-ips {',
      '\tcounter svc-hits {\n\t\tpackets 12 bytes 720\n\t}\n\n\tcounter drops { packets 0 bytes 0 }\n\n\tset cluster-ips {',
    )
    t = edit(
      t,
      '\t\tip daddr . meta l4proto . th dport vmap @service-ips',
      '\t\tip daddr . meta l4proto . th dport counter name "svc-hits" vmap @service-ips',
    )
    t = edit(
      t,
      '\t\tmeta l4proto tcp dnat to 10.244.1.5:8080',
      '\t\tmeta l4proto tcp counter packets 4 bytes 240 dnat to 10.244.1.5:8080',
    )
    const before = await read(base)
    const after = await read(t)
    expect(services(after)).toEqual(services(before))
    expect(before.services.length).toBeGreaterThan(2)
    expect(notInfo(after)).toEqual(notInfo(before))
    expect(skipped(after)).toEqual([
      'counter svc-hits in table ip kube-proxy is not used by kp and was skipped',
      'counter drops in table ip kube-proxy is not used by kp and was skipped',
    ])
  })
})

describe('named counters in the transaction form', () => {
  const base = text('nft/upstream-overall/input.nft')

  it('add counter, with and without values, and counter name in a rule', async () => {
    let t = edit(
      base,
      'add chain ip kube-proxy cluster-ips-check\n',
      'add counter ip kube-proxy svc1-hits\nadd counter ip kube-proxy svc1-misses { packets 3 bytes 180 ; }\nadd chain ip kube-proxy cluster-ips-check\n',
    )
    t = edit(
      t,
      'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 numgen',
      'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 counter name "svc1-hits" numgen',
    )
    t += 'delete counter ip kube-proxy svc1-misses\n'
    const before = await read(base)
    const after = await read(t)
    expect(services(after)).toEqual(services(before))
    expect(notInfo(after)).toEqual(notInfo(before))
    expect(skipped(after)).toHaveLength(2)
  })
})
