/**
 * `iptables -L` listings (issue 21 §3): every listing of fixtures/iptables-list (real output of
 * iptables 1.8.9, nf_tables and legacy, made by make-listings.sh from the iptables fixtures) is
 * sniffed as such and read to the same service ports as the iptables-save dump it was loaded
 * from; what a listing cannot show is said, and what depends on it is unknown, not guessed.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {parse} from '../../../src/readers/iptables-list/parse.js'
import type {IptablesRuleset} from '../../../src/readers/iptables/ruleset.js'
import {readState} from '../../../src/readers/read-state.js'
import {sniffFormat} from '../../../src/readers/registry.js'
import {ROOT} from '../../helpers/run-cli.js'
import {codes, readFixture, withoutRules} from '../iptables/helpers.js'

const DIR = join(ROOT, 'fixtures/iptables-list')

/** Listing case -> the iptables fixture its dump came from (make-listings.sh). */
const CASES: Record<string, string> = {
  overall: 'realsave-overall',
  'overall-legacy': 'realsave-overall',
  'k8s-1.1': 'legacy-k8s-1.1',
  'node-with-cni': 'handmade-node-with-cni',
  ipv6: 'realsave-handmade-ipv6',
}

const listing = (name: string, file: string) => join('fixtures/iptables-list', name, file)

function readListing(path: string, format?: 'iptables-list'): Promise<ProxyState> {
  const text = readFileSync(join(ROOT, path), 'utf8')
  return readState({sources: [{path, text, ...(format ? {format} : {})}]})
}

const services = (s: ProxyState) => s.services.map(withoutRules)

describe('sniffing', () => {
  for (const name of Object.keys(CASES))
    for (const file of readdirSync(join(DIR, name)).filter((f) => f.endsWith('.txt')))
      it(`${name}/${file} is an iptables -L listing`, () => {
        const head = readFileSync(join(DIR, name, file), 'utf8').slice(0, 64 * 1024)
        expect(sniffFormat(head)).toBe('iptables-list')
      })

  it('an iptables-save dump and iptables -S output are not', () => {
    for (const dir of ['realsave-overall', 'list-rules-overall']) {
      const head = readFileSync(join(ROOT, 'fixtures/iptables', dir, 'input.rules'), 'utf8')
      expect(sniffFormat(head)).toBe('iptables-save')
    }
  })
})

describe('a listing reads as the dump it was listed from', () => {
  for (const [name, dump] of Object.entries(CASES)) {
    describe(name, async () => {
      const saved = await readFixture(dump)
      for (const file of ['nat-filter-n-v.txt', 'nat-filter-n-v-x-line-numbers.txt'])
        it(`${file}: the same service ports and node settings, no warnings`, async () => {
          const state = await readListing(listing(name, file))
          expect(services(state)).toEqual(services(saved))
          expect(state.node).toEqual(saved.node)
          expect(codes(state, 'error')).toEqual([])
          expect(codes(state, 'warning')).toEqual(codes(saved, 'warning'))
          expect(state.sources).toEqual([
            {path: listing(name, file), format: 'iptables-list', tool: null},
          ])
        })

      it('nat-filter-n.txt (no -v): the same service ports; interfaces said to be unknown', async () => {
        const state = await readListing(listing(name, 'nat-filter-n.txt'))
        expect(services(state)).toEqual(services(saved))
        expect(codes(state, 'warning')).toContain('IPT_LIST_NO_INTERFACES')
        // What interfaces tell is unknown, never a guess; a source-CIDR detector is still seen.
        if (saved.node.localDetector === 'cidr') {
          expect(state.node.localDetector).toBe('cidr')
          expect(state.node.masqueradeAll).toBe(saved.node.masqueradeAll)
        } else {
          expect(state.node.localDetector).toBeNull()
          expect(state.node.localInterface).toBeNull()
          expect(state.node.masqueradeAll).toBeNull()
        }
      })
    })
  }

  it('each rule keeps the line of the listing it is on', async () => {
    const path = listing('overall', 'nat-filter-n-v.txt')
    const lines = readFileSync(join(ROOT, path), 'utf8').split('\n')
    const state = await readListing(path)
    const svc1 = state.services.find((s) => s.name === 'svc1')!
    expect(svc1.rules.length).toBeGreaterThan(3)
    for (const ref of svc1.rules) {
      expect(ref.path).toBe(path)
      expect(lines[ref.line - 1]).toMatch(/ns1\/svc1:p80|KUBE-S(VC|EP)-/)
    }
  })

  it('one chain (`-L KUBE-SERVICES`) is read as nat, with its service ports and no endpoints', async () => {
    const state = await readListing(listing('overall', 'nat-kube-services-n-v.txt'))
    expect(state.services.map((s) => s.name)).toEqual(['svc1', 'svc2', 'svc3', 'svc4', 'svc5'])
    expect(state.diagnostics.find((d) => d.code === 'IPT_TABLE_INFERRED')?.message).toMatch(
      /as the nat table/,
    )
  })
})

describe('what a listing cannot show', () => {
  it('without -n, names for addresses and ports are an error, not resolved', async () => {
    for (const name of Object.keys(CASES)) {
      const state = await readListing(listing(name, 'nat-names.txt'))
      const names = state.diagnostics.filter((d) => d.code === 'IPT_LIST_NAMES')
      expect(names, name).toHaveLength(1)
      expect(names[0]!.severity).toBe('error')
    }
  })

  it('match text kp cannot translate: an error in a kube-proxy chain, a warning elsewhere', async () => {
    const text = [
      'Chain KUBE-SERVICES (2 references)',
      ' pkts bytes target     prot opt in     out     source               destination',
      '    0     0 KUBE-SVC-XPGD46QRK7WJZT7O  6    --  *      *       0.0.0.0/0            172.30.0.41          /* ns1/svc1:p80 cluster IP */ tcp dpt:80 frob 7',
      '',
      'Chain OTHER (0 references)',
      ' pkts bytes target     prot opt in     out     source               destination',
      '    0     0 LOG        0    --  *      *       0.0.0.0/0            0.0.0.0/0            LOG flags 0 level 4',
      '',
    ].join('\n')
    const state = await readState({sources: [{path: 'l.txt', text}]})
    const unknown = state.diagnostics.filter((d) => d.code === 'IPT_LIST_UNKNOWN_MATCH')
    expect(unknown.map((d) => [d.severity, d.source?.line])).toEqual([
      ['error', 3],
      ['warning', 7],
    ])
    expect(unknown[0]!.message).toContain('"frob 7"')
  })

  it('a line that is not a listing line is an error at its line; the rest is read', async () => {
    const text = readFileSync(join(DIR, 'overall/nat-filter-n-v.txt'), 'utf8').replace(
      /\n\n(Chain KUBE-MARK-MASQ)/,
      '\n\ngarbage here\n$1',
    )
    const state = await readState({sources: [{path: 'l.txt', text}]})
    const bad = state.diagnostics.filter((d) => d.severity === 'error')
    expect(bad.map((d) => d.code)).toEqual(['IPT_SYNTAX'])
    expect(text.split('\n')[bad[0]!.source!.line - 1]).toBe('garbage here')
    expect(state.services).toHaveLength(6)
  })
})

describe('translation back to iptables-save options', () => {
  /** The rule lines the reader made of a listing (their text is the translation). */
  function translated(text: string): string[] {
    const ruleset = parse({path: 'l.txt', text}).data as IptablesRuleset
    return ruleset.rules.map((r) => r.text)
  }

  it("writes kube-proxy's matches and targets as iptables-save does", () => {
    const head = ' pkts bytes target     prot opt in     out     source               destination'
    const rows = [
      '    0     0 KUBE-MARK-MASQ  6    --  *      *      !10.0.0.0/8           172.30.0.45          /* ns5/svc5:p80 cluster IP */ tcp dpt:80',
      '    0     0 KUBE-SEP-I77PXRDZVX7PMWMN  0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* ns5/svc5:p80 -> 10.180.0.3:80 */ recent: CHECK seconds: 10800 reap name: KUBE-SEP-I77PXRDZVX7PMWMN side: source mask: 255.255.255.255',
      '    0     0 KUBE-SEP-A  0    --  *      *       0.0.0.0/0            0.0.0.0/0            statistic mode random probability 0.50000000000',
      '    0     0 DNAT       6    --  *      *       0.0.0.0/0            0.0.0.0/0            /* ns5/svc5:p80 */ recent: SET name: KUBE-SEP-I77PXRDZVX7PMWMN side: source mask: 255.255.255.255 tcp to:10.180.0.3:80',
      '    0     0 MARK       0    --  *      *       0.0.0.0/0            0.0.0.0/0            MARK or 0x4000',
      '    0     0 MARK       0    --  *      *       0.0.0.0/0            0.0.0.0/0            MARK xor 0x4000',
      '    0     0 RETURN     0    --  *      *       0.0.0.0/0            0.0.0.0/0            mark match ! 0x4000/0x4000',
      '    0     0 KUBE-NODEPORTS  0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* kubernetes service nodeports; NOTE: this must be the last rule in this chain */ ADDRTYPE match dst-type LOCAL',
      '    0     0 KUBE-SVC-X  0    --  cali+  *       0.0.0.0/0            0.0.0.0/0            /* pod traffic for team/api:grpc external destinations */',
      '    0     0 MASQUERADE  0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* kubernetes service traffic requiring SNAT */ random-fully',
      '    0     0            0    --  *      *       0.0.0.0/0            0.0.0.0/0            /* other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL */',
      '    0     0 Y          0    --  *      *       0.0.0.0/0            0.0.0.0/0           [goto] ',
      '    0     0 RETURN    !6    --  *      !eth1   10.0.0.1             10.1.0.0/16          ! ctstate INVALID,NEW /* has "quote" */',
    ]
    expect(translated(['Chain X (0 references)', head, ...rows, ''].join('\n'))).toEqual([
      '-A X ! -s 10.0.0.0/8 -d 172.30.0.45 -p tcp -m comment --comment "ns5/svc5:p80 cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ',
      '-A X -m comment --comment "ns5/svc5:p80 -> 10.180.0.3:80" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-I77PXRDZVX7PMWMN --mask 255.255.255.255 --rsource -j KUBE-SEP-I77PXRDZVX7PMWMN',
      '-A X -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-A',
      '-A X -p tcp -m comment --comment "ns5/svc5:p80" -m recent --set --name KUBE-SEP-I77PXRDZVX7PMWMN --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.180.0.3:80',
      '-A X -j MARK --set-xmark 0x4000/0x4000',
      '-A X -j MARK --set-xmark 0x4000/0x0',
      '-A X -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A X -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
      '-A X -i cali+ -m comment --comment "pod traffic for team/api:grpc external destinations" -j KUBE-SVC-X',
      '-A X -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
      '-A X -m comment --comment "other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL"',
      '-A X -g Y',
      '-A X -s 10.0.0.1 -d 10.1.0.0/16 ! -o eth1 ! -p tcp -m conntrack ! --ctstate INVALID,NEW -m comment --comment "has \\"quote\\"" -j RETURN',
    ])
  })
})

describe('input that is no listing, forced with --format iptables-list', () => {
  it('says the first 100 bad lines, then counts the rest in one error', async () => {
    const text = `${'not a listing line\n'.repeat(250)}`
    const state = await readState({sources: [{path: 'x.txt', text, format: 'iptables-list'}]})
    const errors = state.diagnostics.filter((d) => d.code === 'IPT_SYNTAX')
    expect(errors).toHaveLength(101)
    expect(errors[100]!.message).toMatch(/^150 more lines/)
    expect(errors[100]!.source?.line).toBe(101)
  })
})
