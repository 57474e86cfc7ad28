/**
 * Stage 1: the tokenizer and parseIptablesText. Expectations are written by hand from the
 * iptables-restore tokenising rules (xshared.c add_param_to_argv, see tokenize.ts) and the
 * docs/kube-proxy-layouts.md §2.8 / §4 (text forms).
 */
import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  firstOptionOfPlainText,
  normaliseAddress,
  OPTION_ALIASES,
  parse,
  parseIptablesText,
} from '../../../src/readers/iptables/parse.js'
import {
  ALIASED_LONG_OPTIONS,
  findMatch,
  findTargetOption,
  type IptablesRule,
} from '../../../src/readers/iptables/ruleset.js'
import {tokenizeLine} from '../../../src/readers/iptables/words.js'
import {ROOT} from '../../helpers/run-cli.js'
import {COMMON_NOISE, mutate, prng} from '../robustness.js'

const words = (line: string) => tokenizeLine(line).words.map((w) => w.text)
/** The input.rules of every iptables fixture. */
const FIXTURE_DUMPS = readdirSync(join(ROOT, 'fixtures/iptables'), {withFileTypes: true})
  .filter((d) => d.isDirectory())
  .map((d) => readFileSync(join(ROOT, 'fixtures/iptables', d.name, 'input.rules'), 'utf8'))
/** A whole text as the (text, from, to) a plain walk takes. */
const whole = (text: string): [string, number, number] => [text, 0, text.length]

/** The one rule of a one-rule nat dump. */
function ruleOf(ruleLine: string): IptablesRule {
  const {ruleset, diagnostics} = parseIptablesText(`*nat\n:X - [0:0]\n${ruleLine}\nCOMMIT\n`, 't')
  expect(diagnostics).toEqual([])
  expect(ruleset.rules).toHaveLength(1)
  return ruleset.rules[0]!
}

describe('tokenizeLine', () => {
  it('splits on runs of blanks and tabs', () => {
    expect(words('-A  X\t-j   Y ')).toEqual(['-A', 'X', '-j', 'Y'])
  })
  it('removes quotes and keeps the blanks inside them', () => {
    expect(words('--comment "ns1/svc1:p80 cluster IP" -j X')).toEqual([
      '--comment',
      'ns1/svc1:p80 cluster IP',
      '-j',
      'X',
    ])
  })
  it('takes the character after a backslash literally inside quotes (\\" \\\' \\\\)', () => {
    expect(words('--comment "say \\"hi\\" it\\\'s a \\\\ x"')).toEqual([
      '--comment',
      'say "hi" it\'s a \\ x',
    ])
  })
  it('keeps a backslash outside quotes as it is', () => {
    expect(words('--comment a\\b')).toEqual(['--comment', 'a\\b'])
  })
  it('joins a quoted part to the word around it', () => {
    expect(words('a"b c"d e')).toEqual(['ab cd', 'e'])
  })
  it('an empty quoted string is a word', () => {
    expect(words('--comment "" -j X')).toEqual(['--comment', '', '-j', 'X'])
  })
  it('marks quoted words, so a quoted "!" or "-x" is a value', () => {
    const w = tokenizeLine('"!" "-x" !').words
    expect(w.map((x) => x.quoted)).toEqual([true, true, false])
  })
  it('reports an unclosed quote', () => {
    expect(tokenizeLine('--comment "abc').unclosedQuote).toBe(true)
    expect(tokenizeLine('--comment "abc"').unclosedQuote).toBe(false)
  })
})

describe('rule options', () => {
  it("reads kube-proxy's order and iptables-save's order alike", () => {
    const a = ruleOf(
      '-A X -m comment --comment "c" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-A',
    )
    const b = ruleOf(
      '-A X -d 172.30.0.41/32 -p tcp -m comment --comment "c" -m tcp --dport 80 -j KUBE-SVC-A',
    )
    for (const r of [a, b]) {
      expect(r.destination).toEqual({value: '172.30.0.41', negated: false})
      expect(r.protocol).toEqual({value: 'tcp', negated: false})
      expect(r.dport).toEqual({value: '80', negated: false})
      expect(r.comment).toBe('c')
      expect(r.target).toBe('KUBE-SVC-A')
      expect(r.modules.sort()).toEqual(['comment', 'tcp'])
    }
  })
  it('reads both negation forms: `! -s X` and the old `-s ! X`', () => {
    expect(ruleOf('-A X ! -s 10.0.0.0/8 -j Y').source).toEqual({value: '10.0.0.0/8', negated: true})
    expect(ruleOf('-A X -s ! 10.0.0.0/8 -j Y').source).toEqual({value: '10.0.0.0/8', negated: true})
    const mark = findMatch(ruleOf('-A X -m mark ! --mark 0x4000/0x4000 -j RETURN'), '--mark')
    expect(mark).toEqual({name: '--mark', values: ['0x4000/0x4000'], negated: true, module: 'mark'})
    expect(
      findMatch(ruleOf('-A X -m conntrack --ctstate ! RELATED,ESTABLISHED -j DROP'), '--ctstate')
        ?.negated,
    ).toBe(true)
  })
  it('rejects a dangling or doubled negation', () => {
    const r = parseIptablesText(
      '*nat\n:X - [0:0]\n-A X -j Y !\n-A X ! ! -s 1.2.3.4 -j Y\nCOMMIT\n',
      't',
    )
    expect(r.diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['IPT_SYNTAX', 3],
      ['IPT_SYNTAX', 4],
    ])
  })
  it('keeps flags, multi-value options and unknown matches', () => {
    const r = ruleOf(
      '-A X -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-A --mask 255.255.255.255 --rsource -m set --match-set KUBE-CLUSTER-IP dst,dst -m frob --frob a b -j KUBE-SEP-A',
    )
    expect(findMatch(r, '--rcheck')?.values).toEqual([])
    expect(findMatch(r, '--seconds')?.values).toEqual(['10800'])
    expect(findMatch(r, '--match-set')?.values).toEqual(['KUBE-CLUSTER-IP', 'dst,dst'])
    expect(findMatch(r, '--frob')).toEqual({
      name: '--frob',
      values: ['a', 'b'],
      negated: false,
      module: 'frob',
    })
  })
  it('puts options after -j into targetOptions', () => {
    const r = ruleOf('-A X -p tcp -m tcp -j DNAT --to-destination [fd00::1]:80')
    expect(findTargetOption(r, '--to-destination')?.values).toEqual(['[fd00::1]:80'])
    expect(r.matches.map((m) => m.name)).toEqual(['-p'])
  })
  it('a rule without a target (KUBE-FW "other traffic" no-op)', () => {
    expect(
      ruleOf(
        '-A X -m comment --comment "other traffic to ns/s:p will be dropped by KUBE-PROXY-FIREWALL"',
      ).target,
    ).toBeNull()
  })
  it('a comment value that starts with a dash stays a value', () => {
    expect(ruleOf('-A X -m comment --comment -odd -j Y').comment).toBe('-odd')
  })
  it('-g is a goto', () => {
    const r = ruleOf('-A X -g Y')
    expect([r.target, r.goto]).toEqual(['Y', true])
  })
  it('long option names mean the short ones', () => {
    const r = ruleOf(
      '-A X --protocol udp --source 1.2.3.4 --destination 5.6.7.8 --destination-port 53 --jump Y',
    )
    expect([
      r.protocol?.value,
      r.source?.value,
      r.destination?.value,
      r.dport?.value,
      r.target,
    ]).toEqual(['udp', '1.2.3.4', '5.6.7.8', '53', 'Y'])
  })
  it('findMatch finds an option written in its long spelling (the text search that skips rules must not miss it)', () => {
    const r = ruleOf(
      '-A X --protocol udp -m udp --destination-port 53 --source-port 1000:2000 -j Y',
    )
    expect(findMatch(r, '-p')?.values).toEqual(['udp'])
    expect(findMatch(r, '--dport')?.values).toEqual(['53'])
    expect(findMatch(r, '--sport')?.values).toEqual(['1000:2000'])
    expect(findMatch(r, '--probability')).toBeUndefined()
  })
  it('every long option an alias stands for is known to findMatch as one a text search cannot see', () => {
    const longTargets = Object.values(OPTION_ALIASES).filter((name) => name.length > 2)
    expect(longTargets.length).toBeGreaterThan(0)
    for (const name of longTargets) expect(ALIASED_LONG_OPTIONS.has(name), name).toBe(true)
  })
  it('the option lists, read again from the text, match what the rule holds, rule after rule', () => {
    const {ruleset} = parseIptablesText(
      '*nat\n:X - [0:0]\n-A X -m statistic --mode random --probability 0.5 -j A\n-A X -p tcp -j DNAT --to-destination 1.2.3.4:80\nCOMMIT\n',
      't',
    )
    const [a, b] = ruleset.rules
    // Asked in turns, so each answer comes from a fresh read of that rule, not from the previous one.
    expect(findMatch(a!, '--probability')?.values).toEqual(['0.5'])
    expect(findTargetOption(b!, '--to-destination')?.values).toEqual(['1.2.3.4:80'])
    expect(a!.matches.map((m) => m.name)).toEqual(['--mode', '--probability'])
    expect(findMatch(b!, '--probability')).toBeUndefined()
    expect(b!.modules).toEqual([])
    expect(a!.modules).toEqual(['statistic'])
    expect(findTargetOption(a!, '--to-destination')).toBeUndefined()
  })
  it('equal protocol and port matches are shared, and cannot be changed in place', () => {
    const {ruleset} = parseIptablesText(
      '*nat\n:X - [0:0]\n-A X -p tcp -m tcp --dport 80 -j A\n-A X -p tcp -m tcp --dport 80 -j B\nCOMMIT\n',
      't',
    )
    const [a, b] = ruleset.rules
    expect(a!.protocol).toBe(b!.protocol)
    expect(a!.dport).toBe(b!.dport)
    expect(Object.isFrozen(a!.dport)).toBe(true)
  })
})

describe('normaliseAddress', () => {
  it('drops /32 and /128, keeps other prefixes, compresses IPv6', () => {
    expect(normaliseAddress('10.1.2.3/32')).toBe('10.1.2.3')
    expect(normaliseAddress('10.0.0.0/8')).toBe('10.0.0.0/8')
    expect(normaliseAddress('fd00:0:0:0::1/128')).toBe('fd00::1')
    expect(normaliseAddress('FD00:10:244:0::/64')).toBe('fd00:10:244::/64')
    expect(normaliseAddress('::ffff:1.2.3.4')).toBe('::ffff:1.2.3.4')
    expect(normaliseAddress('node-1.example')).toBe('node-1.example')
  })
})

describe('text forms', () => {
  it('iptables-save: header, built-in chains with policy and counters, -c counters', () => {
    const text = [
      '# Generated by iptables-save v1.8.9 (nf_tables) on Wed Dec  2 13:53:08 2026',
      '*nat',
      ':PREROUTING ACCEPT [12:720]',
      ':KUBE-SERVICES - [3:180]',
      '[5:300] -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      'COMMIT',
      '# Completed on Wed Dec  2 13:53:08 2026',
      '',
    ].join('\n')
    const {ruleset, diagnostics} = parseIptablesText(text, 't')
    expect(diagnostics).toEqual([])
    expect(ruleset.form).toBe('iptables-save')
    expect(ruleset.tool).toBe('iptables-save v1.8.9 (nf_tables)')
    expect(ruleset.family).toBe('IPv4')
    const nat = ruleset.tables.get('nat')!
    expect(nat.committed).toBe(true)
    expect(nat.chains.get('PREROUTING')).toMatchObject({
      builtin: true,
      policy: 'ACCEPT',
      counters: {packets: 12, bytes: 720},
      line: 3,
    })
    expect(nat.chains.get('KUBE-SERVICES')).toMatchObject({
      builtin: false,
      policy: null,
      counters: {packets: 3, bytes: 180},
    })
    expect(ruleset.rules[0]).toMatchObject({
      line: 5,
      table: 'nat',
      chain: 'PREROUTING',
      counters: {packets: 5, bytes: 300},
    })
  })
  it('says when iptables-nft warns about the other backend or a table it cannot print', () => {
    const text =
      "# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n# Table `nat' is incompatible, use 'nft' tool.\n*filter\nCOMMIT\n"
    const {diagnostics} = parseIptablesText(text, 't')
    expect(diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      ['warning', 'IPT_OTHER_BACKEND', 1],
      ['warning', 'IPT_INCOMPATIBLE_TABLE', 2],
    ])
  })
  it('iptables-save and ip6tables-save output in one input is an error; a table twice is a warning', () => {
    const v4 = '# Generated by iptables-save v1.8.9 (nf_tables) on x\n*nat\n:X - [0:0]\nCOMMIT\n'
    const v6 = v4.replace('iptables-save', 'ip6tables-save')
    expect(
      parseIptablesText(v4 + v6, 't').diagnostics.map((d) => [d.severity, d.code, d.source?.line]),
    ).toEqual([
      ['error', 'IPT_MIXED_FAMILIES', 5],
      ['warning', 'IPT_DUPLICATE_TABLE', 6],
    ])
    expect(
      parseIptablesText(v4 + v4, 't').diagnostics.map((d) => [d.severity, d.code, d.source?.line]),
    ).toEqual([['warning', 'IPT_DUPLICATE_TABLE', 6]])
  })
  it('ip6tables-save header sets the family', () => {
    const {ruleset} = parseIptablesText(
      '# Generated by ip6tables-save v1.8.9 (nf_tables) on x\n*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n',
      't',
    )
    expect([ruleset.tool, ruleset.family]).toEqual(['ip6tables-save v1.8.9 (nf_tables)', 'IPv6'])
  })
  it('restore input: -X deletes a declared chain', () => {
    const {ruleset, diagnostics} = parseIptablesText(
      '*nat\n:KUBE-SVC-A - [0:0]\n-X KUBE-SVC-A\nCOMMIT\n',
      't',
    )
    expect(diagnostics).toEqual([])
    expect(ruleset.form).toBe('restore-input')
    expect(ruleset.tables.get('nat')!.chains.get('KUBE-SVC-A')!.deletedLine).toBe(3)
  })
  it('iptables -S: -P/-N/-A without headers, table told per block and said in an info', () => {
    const text = [
      '-P PREROUTING ACCEPT',
      '-P INPUT ACCEPT',
      '-P OUTPUT ACCEPT',
      '-P POSTROUTING ACCEPT',
      '-N KUBE-SERVICES',
      '-A KUBE-SERVICES -j RETURN',
      '-P INPUT ACCEPT',
      '-P FORWARD DROP',
      '-P OUTPUT ACCEPT',
      '-N KUBE-FORWARD',
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
      '',
    ].join('\n')
    const {ruleset, diagnostics} = parseIptablesText(text, 't')
    expect(ruleset.form).toBe('list-rules')
    expect([...ruleset.tables.keys()]).toEqual(['nat', 'filter'])
    expect(ruleset.tables.get('filter')!.chains.get('FORWARD')!.policy).toBe('DROP')
    expect(ruleset.rules.map((r) => r.table)).toEqual(['nat', 'filter'])
    expect(diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      ['info', 'IPT_TABLE_INFERRED', 1],
      ['info', 'IPT_TABLE_INFERRED', 7],
    ])
  })
  it('iptables -t nat -S of one chain: told nat from its targets', () => {
    const {ruleset} = parseIptablesText(
      '-N KUBE-SEP-A\n-A KUBE-SEP-A -p tcp -j DNAT --to-destination 10.0.0.1:80\n',
      't',
    )
    expect([...ruleset.tables.keys()]).toEqual(['nat'])
  })
  it('a grep of a whole dump mixes both tables: each rule goes to the table that can hold it', () => {
    const text = [
      '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "a/b:p cluster IP" -m tcp --dport 80 -j KUBE-SVC-X',
      '-A KUBE-SERVICES -d 10.96.0.2/32 -p tcp -m comment --comment "a/c:p has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
      '-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "a/b:p has no local endpoints" -m addrtype --dst-type LOCAL -m tcp --dport 30001 -j DROP',
      '-A KUBE-SVC-X -j KUBE-SEP-Y',
      '',
    ].join('\n')
    const {ruleset, diagnostics} = parseIptablesText(text, 't')
    expect(ruleset.rules.map((r) => `${r.table}/${r.chain}`)).toEqual([
      'nat/KUBE-SERVICES',
      'filter/KUBE-SERVICES',
      'filter/KUBE-EXTERNAL-SERVICES',
      'nat/KUBE-SVC-X',
    ])
    expect([...ruleset.tables.get('nat')!.chains.keys()].sort()).toEqual([
      'KUBE-SERVICES',
      'KUBE-SVC-X',
    ])
    expect([...ruleset.tables.get('filter')!.chains.keys()].sort()).toEqual([
      'KUBE-EXTERNAL-SERVICES',
      'KUBE-SERVICES',
    ])
    expect(diagnostics.map((d) => d.code)).toEqual(['IPT_TABLE_INFERRED', 'IPT_UNDECLARED_CHAIN'])
  })
  it('CRLF line ends read the same as LF', () => {
    const lf = '*nat\n:X - [0:0]\n-A X -m comment --comment "a b" -j Y\nCOMMIT\n'
    const crlf = parseIptablesText(lf.replaceAll('\n', '\r\n'), 't')
    expect(crlf.diagnostics).toEqual([])
    // What a rule says, field by field (the rule objects also hold where their line is in their own text).
    const said = (r: IptablesRule) => ({
      line: r.line,
      table: r.table,
      chain: r.chain,
      text: r.text,
      counters: r.counters,
      protocol: r.protocol,
      source: r.source,
      destination: r.destination,
      inInterface: r.inInterface,
      outInterface: r.outInterface,
      dport: r.dport,
      sport: r.sport,
      modules: r.modules,
      comment: r.comment,
      target: r.target,
      goto: r.goto,
      matches: r.matches,
      targetOptions: r.targetOptions,
    })
    expect(crlf.ruleset.rules.map(said)).toEqual(parseIptablesText(lf, 't').ruleset.rules.map(said))
  })
})

describe('bad input never throws', () => {
  it('a malformed line is an IPT_SYNTAX error with its line; the rest is read', () => {
    const {ruleset, diagnostics} = parseIptablesText(
      '*nat\n:X - [0:0]\nhello world\n-A X -j\n-A X -j Y\nCOMMIT\n',
      'f.rules',
    )
    expect(diagnostics.map((d) => [d.severity, d.code, d.source])).toEqual([
      ['error', 'IPT_SYNTAX', {path: 'f.rules', line: 3}],
      ['error', 'IPT_SYNTAX', {path: 'f.rules', line: 4}],
    ])
    expect(ruleset.rules.map((r) => r.line)).toEqual([5])
  })
  it('a dump cut off without COMMIT keeps its complete lines and says what was cut', () => {
    const text =
      '*filter\n:KUBE-SERVICES - [0:0]\nCOMMIT\n*nat\n:X - [0:0]\n-A X -j Y\n-A X -p tcp -j DNAT --to-destination 10.180.0.1:8'
    const {ruleset, diagnostics} = parseIptablesText(text, 't')
    expect(ruleset.rules.map((r) => r.line)).toEqual([6])
    expect(ruleset.tables.get('filter')!.committed).toBe(true)
    expect(ruleset.tables.get('nat')!.committed).toBe(false)
    expect(diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      // Cut off: errors, so the state is marked incomplete and kp exits 3 (issue 21 §1).
      ['error', 'IPT_TRUNCATED', 7],
      ['error', 'IPT_TRUNCATED', 7],
    ])
    expect(diagnostics[0]!.message).toContain('line 7')
    expect(diagnostics[1]!.message).toContain('the nat table')
  })
  it('a table without COMMIT before the next one is reported', () => {
    const {diagnostics} = parseIptablesText('*filter\n:A - [0:0]\n*nat\n:B - [0:0]\nCOMMIT\n', 't')
    // It may only be concatenated by hand: a warning.
    expect(diagnostics.map((d) => [d.severity, d.code, d.source?.line])).toEqual([
      ['warning', 'IPT_TRUNCATED', 3],
    ])
  })
  it('an unclosed quote is a syntax error, not a hang', () => {
    const {diagnostics} = parseIptablesText(
      '*nat\n:X - [0:0]\n-A X -m comment --comment "open -j Y\nCOMMIT\n',
      't',
    )
    expect(diagnostics.map((d) => d.code)).toEqual(['IPT_SYNTAX'])
  })
  // No timing assertion (docs/architecture.md, "Tests": performance is the benchmark's job); a quadratic scan of these
  // lines would take minutes and hit the test timeout.
  it('1 MB lines, well-formed or garbage, are read without hanging', () => {
    const comment = 'x'.repeat(1024 * 1024)
    const r = ruleOf(`-A X -m comment --comment "${comment}" -j Y`)
    expect(r.comment).toHaveLength(1024 * 1024)
    const garbage = parseIptablesText(
      `*nat\n${'-'.repeat(1024 * 1024)}\n:${'a '.repeat(512 * 1024)}\nCOMMIT\n`,
      't',
    )
    expect(garbage.diagnostics.map((d) => d.code)).toEqual(['IPT_SYNTAX', 'IPT_SYNTAX'])
    expect(garbage.diagnostics.every((d) => d.message.length < 200)).toBe(true)
  })
  it('binary-ish garbage: every line an error, capped, nothing thrown', () => {
    const lines = Array.from({length: 300}, (_, i) => `\u0001\u00ff\u0007 garbage ${i} \u001b[31m`)
    const {ruleset, diagnostics} = parseIptablesText(lines.join('\n'), 't')
    expect(ruleset.rules).toEqual([])
    expect(diagnostics.filter((d) => d.code === 'IPT_SYNTAX')).toHaveLength(101)
    // The summary is a path:line message too (exit 3 prints every error): it points at line 101, the first not listed.
    expect(diagnostics.at(-1)).toMatchObject({
      message: '200 more malformed lines from here on, not listed',
      source: {path: 't', line: 101},
    })
  })
  it('parse() wraps the ruleset as a ParsedSource with the tool from the header', () => {
    const p = parse({
      path: 'x',
      text: '# Generated by iptables-save v1.8.7 (legacy) on x\n*nat\nCOMMIT\n',
    })
    expect(p.format).toBe('iptables-save')
    expect(p.source).toEqual({
      path: 'x',
      format: 'iptables-save',
      tool: 'iptables-save v1.8.7 (legacy)',
    })
  })
})

describe('firstOption without tokenising (firstOptionOfPlainText)', () => {
  const TRICKY = [
    '-A X -m comment --comment -x -j Y',
    '-A X -m foo --unknown a b --probability 0.5 -j Y',
    '-A X -m tcp -p tcp --dport 80 -j DNAT --to-destination 1.2.3.4:80 --random-fully',
    '-A X -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-X --mask 255.255.255.255 --rsource -j KUBE-SEP-X',
    '-A X -p tcp --destination-port 80 -j Y',
    '-A X -c 5 10 -j Y',
    '-A X -g Y',
    '-A X\t-m statistic  --mode random\t--probability 0.25   -j Y',
    '-A X -m comment --comment "quoted words" -j Y',
    '-A X -m "comment" --comment "" -s "1.2.3.4" -m statistic --probability "0.5" -j DNAT --to-destination "1.2.3.4:80"',
    '-A X -m comment --comment "-x" -j Y',
    '-A X -m comment --comment "a \\"b\\"" -j Y',
    '-A X -m comment --comment a"b c"d -j Y',
    '-A X ! -s 1.2.3.4 -j Y',
    '-A X -m mark --mark 0x4000/0x4000 -j MARK --set-xmark 0x4000/0x0',
    '[3:180] -A X -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
  ]
  const ruleSets = [
    ...FIXTURE_DUMPS,
    `*nat\n:X - [0:0]\n:Y - [0:0]\n${TRICKY.join('\n')}\nCOMMIT\n`,
  ].map((text) => parseIptablesText(text, 't').ruleset.rules)

  it('finds the option the full re-read finds, for every rule of every fixture and every option name', () => {
    let plain = 0
    for (const rules of ruleSets) {
      const names = new Set([
        '--probability',
        '--to-destination',
        '--nothing',
        ...rules.flatMap((r) => [...r.matches, ...r.targetOptions].map((o) => o.name)),
      ])
      for (const rule of rules) {
        for (const name of names) {
          for (const afterTarget of [false, true]) {
            const fast = firstOptionOfPlainText(
              rule.text,
              0,
              rule.text.length,
              (rule as unknown as {optionsFrom: number}).optionsFrom,
              name,
              afterTarget,
            )
            if (fast === null) continue
            plain++
            const full = (afterTarget ? rule.targetOptions : rule.matches).find(
              (o) => o.name === name,
            )
            expect(fast, `${rule.text} ${name} ${afterTarget}`).toEqual(full)
          }
        }
      }
    }
    // Most rules are plain: the walk is what the builder's questions mostly take.
    expect(plain).toBeGreaterThan(1000)
  })

  it('walks an option of unknown arity up to the next option, and keeps the module in force', () => {
    const text = '-A X -m foo --unknown a b --probability 0.5 -j DNAT --to-destination 1.2.3.4:80'
    expect(firstOptionOfPlainText(text, 0, text.length, 2, '--unknown', false)).toEqual({
      name: '--unknown',
      values: ['a', 'b'],
      negated: false,
      module: 'foo',
    })
    expect(firstOptionOfPlainText(text, 0, text.length, 2, '--probability', false)).toEqual({
      name: '--probability',
      values: ['0.5'],
      negated: false,
      module: 'foo',
    })
    expect(firstOptionOfPlainText(text, 0, text.length, 2, '--to-destination', true)).toEqual({
      name: '--to-destination',
      values: ['1.2.3.4:80'],
      negated: false,
      module: 'foo',
    })
    expect(
      firstOptionOfPlainText(text, 0, text.length, 2, '--to-destination', false),
    ).toBeUndefined()
  })

  it('reads quoted whole words (how iptables-save writes comments) without their quotes', () => {
    expect(
      firstOptionOfPlainText(
        ...whole('-A X -m comment --comment "a b" -j Y'),
        2,
        '--comment',
        false,
      ),
    ).toEqual({name: '--comment', values: ['a b'], negated: false, module: 'comment'})
    expect(
      firstOptionOfPlainText(
        ...whole('-A X -m "comment" --comment "" -j DNAT --to-destination "1.2.3.4:80"'),
        2,
        '--to-destination',
        true,
      ),
    ).toEqual({name: '--to-destination', values: ['1.2.3.4:80'], negated: false, module: 'comment'})
  })

  it('leaves negated rules, and quotes that are not around one whole word, to the full re-read', () => {
    expect(firstOptionOfPlainText(...whole('-A X ! -s 1.2.3.4 -j Y'), 2, '-s', false)).toBeNull()
    for (const comment of ['"a \\"b\\""', 'a"b c"d', '"a"b', '"unclosed', '"a \\\\ b"']) {
      expect(
        firstOptionOfPlainText(
          ...whole(`-A X -m comment --comment ${comment} -j Y`),
          2,
          '--comment',
          false,
        ),
        comment,
      ).toBeNull()
    }
  })

  it('walks only its own part of a longer text (a rule keeps offsets into its piece of the dump)', () => {
    const before = '-A X -m comment --comment "a b" -j Y\n'
    const line = '-A X -p tcp -j DNAT --to-destination 1.2.3.4:80'
    const text = `${before}${line}\n-A X ! -s 1.2.3.4 -j Y --to-destination 9.9.9.9:1\n`
    const from = before.length
    expect(
      firstOptionOfPlainText(text, from, from + line.length, 2, '--to-destination', true),
    ).toEqual({name: '--to-destination', values: ['1.2.3.4:80'], negated: false, module: null})
    // The words after `to` are not the rule's, even the option asked for.
    expect(
      firstOptionOfPlainText(text, from, from + line.length - 11, 2, '--to-destination', true),
    ).toBeNull()
  })
})

describe('-s and -d of a plain rule, read from its text when asked for', () => {
  // With the save header: without one, the first rules' addresses are read to tell the family.
  const IN_TEXT_RULES =
    '# Generated by iptables-save v1.8.9 (nf_tables) on x\n*nat\n:X - [0:0]\n-A X -s 10.0.0.1/32 -j KUBE-MARK-MASQ\n-A X -d fd00:0::1/128 -p tcp -j Y\n-A X -s 1.1.1.1 -s 2.2.2.2 -j Y\nCOMMIT\n'
  const internals = (rule: IptablesRule) => rule as unknown as {src: unknown; dst: unknown}

  it('makes no match until one is asked for, then the one readRuleWords makes', () => {
    const [masq, v6, twice] = parseIptablesText(IN_TEXT_RULES, 't').ruleset.rules
    const slow = parseIptablesText(IN_TEXT_RULES, 't', undefined, {plainLines: false}).ruleset.rules
    expect(typeof internals(masq!).src).toBe('object')
    expect(internals(masq!).src).not.toHaveProperty('value')
    expect(internals(masq!).dst).toBeNull()
    expect(masq!.source).toEqual({value: '10.0.0.1', negated: false})
    // Made once, then kept.
    expect(masq!.source).toBe(masq!.source)
    expect(v6!.destination).toEqual({value: 'fd00::1', negated: false})
    // Two -s: read as the rule is read, the last one counting.
    expect(internals(twice!).src).toEqual({value: '2.2.2.2', negated: false})
    expect([masq, v6, twice].map((r) => [r!.source, r!.destination])).toEqual(
      slow.map((r) => [r.source, r.destination]),
    )
  })
})

describe('ruleset.rules', () => {
  it('lists the rules of every table in source order, made when asked for; a rule flushed by -F is not one', () => {
    const text = [
      '*filter',
      ':A - [0:0]',
      '-A A -j DROP',
      'COMMIT',
      '*nat',
      ':B - [0:0]',
      ':C - [0:0]',
      '-A C -j RETURN',
      '-A B -j C',
      '-I B -j ACCEPT',
      '-A C -j DNAT --to-destination 1.2.3.4',
      '-F C',
      '-A C -j MASQUERADE',
      'COMMIT',
      '',
    ].join('\n')
    const {ruleset} = parseIptablesText(text, 't')
    expect(ruleset.rules.map((r) => [r.line, r.table, r.chain, r.target])).toEqual([
      [3, 'filter', 'A', 'DROP'],
      [9, 'nat', 'B', 'C'],
      [10, 'nat', 'B', 'ACCEPT'],
      [13, 'nat', 'C', 'MASQUERADE'],
    ])
    // One list, not a new one per question.
    expect(ruleset.rules).toBe(ruleset.rules)
  })
})

describe('firstValue: the values readPlainAppend kept the place of (--probability, --to-destination)', () => {
  const KEPT_TRICKY = [
    '-A X -m statistic --mode random --probability 0.25 -j Y',
    '-A X -p tcp -j DNAT --to-destination 1.2.3.4:80 --to-destination 5.6.7.8:90',
    // The first kept option met fills the one place: the other is then found by the walk.
    '-A X -m statistic --mode random --probability 0.5 -j DNAT --to-destination 9.9.9.9:1',
    // In the other place than the builder asks for: not kept, and not there when asked.
    '-A X -j DNAT --probability 0.5',
    '-A X -m foo --to-destination 1.1.1.1:1 -j Y',
    '-A X -m comment --comment "a b" -m statistic --mode random --probability 0.75 -j Y',
    // Quoted values (hand-written): kept where their word starts, read without the quotes.
    '-A X -m statistic --mode random --probability "0.125" -j DNAT --to-destination "[fd00::1]:80"',
    '-A X -m comment --comment "a \\"b" -m statistic --mode random --probability 0.75 -j Y',
    '-A X -j Y',
  ]
  const texts = [
    ...FIXTURE_DUMPS,
    `*nat\n:X - [0:0]\n:Y - [0:0]\n${KEPT_TRICKY.join('\n')}\nCOMMIT\n`,
  ]

  it('gives firstOption(name)?.values[0] for every rule of every fixture, read by either reader, for every name and place', () => {
    let kept = 0
    for (const text of texts) {
      for (const plainLines of [true, false]) {
        const {rules} = parseIptablesText(text, 't', undefined, {plainLines}).ruleset
        const names = new Set([
          '--probability',
          '--to-destination',
          '--nothing',
          ...rules.flatMap((r) => [...r.matches, ...r.targetOptions].map((o) => o.name)),
        ])
        for (const rule of rules) {
          for (const name of names) {
            for (const afterTarget of [false, true]) {
              const value = rule.firstValue(name, afterTarget)
              const full = (afterTarget ? rule.targetOptions : rule.matches).find(
                (o) => o.name === name,
              )?.values[0]
              expect(value, `${rule.text} ${name} ${afterTarget}`).toBe(full)
              const known = Math.floor((rule as unknown as {options: number}).options / 8)
              if (known >= 2 && value !== undefined) kept++
            }
          }
        }
      }
    }
    // The kept places are what answers most of these on real dumps, not the walk.
    expect(kept).toBeGreaterThan(100)
  })

  it('keeps nothing for a rule read by readLine, which the walk then answers', () => {
    const {rules} = parseIptablesText(
      '*nat\n:X - [0:0]\n-A X -m statistic --mode random --probability 0.5 -j Y \nCOMMIT\n',
      't',
    ).ruleset
    expect((rules[0] as unknown as {options: number}).options).toBe(2)
    expect(rules[0]!.firstValue('--probability', false)).toBe('0.5')
  })
})

describe('plain rule lines read where they are (readPlainAppend) and through the tokenizer (readLine) alike', () => {
  // Lines at the edges of what the plain reader takes: each is either read by it or left to
  // readLine, and either way the rule (or the error) must be the same.
  const EDGES = [
    '-A X -s 10.0.0.1/32 -j KUBE-MARK-MASQ',
    '-A X -p TCP -m tcp --dport 80 -j DNAT --to-destination 10.0.0.1:80',
    '-A X -m statistic --mode random --probability 0.5 -j Y',
    '-A X -m comment --comment bare-comment -d fd00::1/128 -p udp --dport 53 -j Y',
    '-A X -i eth0 -o lo --sport 9 -j Y',
    '-A X --in-interface eth0 --protocol tcp --destination-port 80 -j Y',
    '-A X -m foo --unknown a b --frob -g Y',
    '-A X -m comment --comment -x -j Y',
    '-A X -j',
    '-A X -j Y -j Z',
    '-A X stray -j Y',
    '-A X -m',
    '-A X -p',
    '-A X -c 5 10 -j Y',
    '-A X\t-p tcp\t-j Y',
    '-A X -j Y  ',
    '-A X -j Y\r',
    '-A X -j Y\u00a0',
    '-A X -j Y\u3000',
    '-A X -j Y\u2028',
    '-A X -j Ÿ',
    ' -A X -j Y',
    '-A NEW -j Y',
    '-A X -m comment --comment "q" -j Y',
    // Quotes: around whole words they are read in place (how iptables-save writes comments);
    // escapes, quotes inside a word, unclosed ones, quoted chains and targets go to readLine.
    '-A X -m comment --comment "ns/svc:port cluster IP" -p tcp --dport 80 -j Y',
    '-A X -m comment --comment "" -j Y',
    '-A X -m comment --comment "-x" -j Y',
    '-A X\t-m comment --comment\t"tab before"\t-j Y',
    '-A X -m "comment" --comment "c" -s "1.2.3.4" -m statistic --mode random --probability "0.5" -j DNAT --to-destination "1.2.3.4:80"',
    '-A X -j Y -m comment --comment "at the end"',
    '-A X -m foo --unknown a\\b -m comment --comment "backslash outside the quotes" -j Y',
    // A comment is kept as its place in the line, unless it is too long or too far in for that.
    `-A X -m comment --comment "${'c'.repeat(5000)}" -j Y`,
    `-A X -m foo --unknown ${'w'.repeat(600_000)} -m comment --comment "far in" -j Y`,
    '-A X -m comment --comment "a \\"b\\"" -j Y',
    '-A X -m comment --comment a"b c"d -j Y',
    '-A X -m comment --comment "a"b -j Y',
    '-A X -m comment --comment "a" "b" -j Y',
    '-A X -m comment --comment "unclosed -j Y',
    '-A X -m comment --comment "!x" -j Y',
    '-A X -j "Y"',
    '-A "X" -j Y',
    '-A X ! -p tcp -j Y',
    '-A X',
    '-AX -j Y',
    '-A DELETED -j Y',
    // -s / -d: one alone is left in the text (LazyRule.source); with two, the last counts.
    '-A X -s 1.1.1.1 -s 2.2.2.2/32 -d 4.4.4.4/32 -j Y',
    '-A X --source 10.0.0.0/8 --dst FD00:0:0::1/128 -j Y',
    '-A X -j Y -s 3.3.3.3',
  ]
  // Declarations: only `:NAME - [0:0]` in a table is read in place.
  const DECLARATIONS = [
    ':Z - [0:0]',
    ':INPUT - [0:0]',
    ':Z - [0:0]',
    ':A B - [0:0]',
    ':"Q R" - [0:0]',
    ': - [0:0]',
    ':W - [0:0] ',
    ':V\t- [0:0]',
    ':U ACCEPT [0:0]',
    ':T - [1:2]',
    ':S -  [0:0]',
    ':R\t - [0:0]',
  ]
  const inTable = `*nat\n:X - [0:0]\n:Y - [0:0]\n:DELETED - [0:0]\n-X DELETED\n${DECLARATIONS.join('\n')}\n${EDGES.join('\n')}\nCOMMIT\n`
  // Without a table header every line goes to readLine (a declaration there is an error).
  const headerless = `${DECLARATIONS.join('\n')}\n${EDGES.join('\n')}\n`
  const texts = [...FIXTURE_DUMPS, inTable, headerless]
  /** Everything a rule shows, and the chains' rule lists. */
  const snapshot = (text: string, plainLines: boolean) => {
    const {ruleset, diagnostics} = parseIptablesText(text, 't', undefined, {plainLines})
    const rules = ruleset.rules.map((r) => ({
      line: r.line,
      table: r.table,
      chain: r.chain,
      text: r.text,
      counters: r.counters,
      protocol: r.protocol,
      source: r.source,
      destination: r.destination,
      inInterface: r.inInterface,
      outInterface: r.outInterface,
      dport: r.dport,
      sport: r.sport,
      comment: r.comment,
      target: r.target,
      goto: r.goto,
      modules: r.modules,
      matches: r.matches,
      targetOptions: r.targetOptions,
    }))
    // What a chain shows (not how the reader keeps its rules: a run of rows, or a list).
    const chains = [...ruleset.tables.values()].flatMap((t) =>
      [...t.chains.values()].map((c) => ({
        table: c.table,
        name: c.name,
        builtin: c.builtin,
        policy: c.policy,
        counters: c.counters,
        line: c.line,
        declared: c.declared,
        deletedLine: c.deletedLine,
        rules: c.rules.map((r) => r.line),
        ruleCount: c.ruleCount,
      })),
    )
    return {rules, chains, diagnostics, family: ruleset.family, form: ruleset.form}
  }

  it('gives every rule, chain and diagnostic the same, for every fixture and the edge lines', () => {
    for (const text of texts) expect(snapshot(text, true)).toEqual(snapshot(text, false))
  })

  it('gives the same for mutated fixtures, and the same first values (firstValue) as the full re-read', () => {
    const rnd = prng(7031)
    for (let i = 0; i < 300; i++) {
      const text = mutate(FIXTURE_DUMPS[i % FIXTURE_DUMPS.length]!, rnd, [
        ...COMMON_NOISE,
        ' -s 1.2.3.4',
        ' --probability 0.5',
        ' -j DNAT --to-destination 9.9.9.9:9',
        ' -d ::1',
        ' "a b"',
        ' --comment "c"',
        '" ',
        ' "',
      ])
      expect(snapshot(text, true), `#${i}`).toEqual(snapshot(text, false))
      for (const rule of parseIptablesText(text, 't').ruleset.rules) {
        for (const [name, afterTarget] of [
          ['--probability', false],
          ['--to-destination', true],
          ['--probability', true],
          ['--to-destination', false],
        ] as const) {
          expect(rule.firstValue(name, afterTarget), `#${i} ${rule.text}`).toBe(
            (afterTarget ? rule.targetOptions : rule.matches).find((o) => o.name === name)
              ?.values[0],
          )
        }
      }
    }
  })

  it('reads most lines in place (so the comparison above is not of readLine with itself)', () => {
    const edges = parseIptablesText(inTable, 't')
    // Plain and well formed: the first eight edge lines, the tab-separated one, the bare `-A X`
    // and the last three (13); the ten with quotes around whole words only; the declarations
    // `:X`, `:Y`, `:DELETED`, `:Z` twice and `:INPUT` (6). Lines with something wrong, blanks
    // around them, other quotes, `!`, counters, policies, or a chain the table does not have
    // (yet) are left to readLine.
    expect(edges.plainLinesRead).toBe(29)
    expect(parseIptablesText(inTable, 't', undefined, {plainLines: false}).plainLinesRead).toBe(0)
    const overall = readFileSync(
      join(ROOT, 'fixtures/iptables/upstream-overall/input.rules'),
      'utf8',
    )
    const read = parseIptablesText(overall, 't')
    expect(read.plainLinesRead).toBeGreaterThan(read.ruleset.rules.length / 3)
    // Headerless input (iptables -S) has no open table: all of it goes through readLine.
    expect(parseIptablesText(headerless, 't').plainLinesRead).toBe(0)
  })
})

describe('the comment of a plain rule', () => {
  it('is kept as its place in the line, or as a string when it does not fit there, and reads the same', () => {
    const long = 'c'.repeat(5000)
    const lines = [
      '-A X -m comment --comment "ns/svc:http -> 10.1.2.3:80" -j Y',
      `-A X -m comment --comment "${long}" -j Y`,
      `-A X -m foo --unknown ${'w'.repeat(600_000)} -m comment --comment "far in" -j Y`,
    ]
    const {ruleset, plainLinesRead} = parseIptablesText(
      `*nat\n:X - [0:0]\n:Y - [0:0]\n${lines.join('\n')}\nCOMMIT\n`,
      't',
    )
    expect(plainLinesRead).toBe(5)
    const rules = ruleset.rules
    expect(rules.map((r) => r.comment)).toEqual(['ns/svc:http -> 10.1.2.3:80', long, 'far in'])
    // Row place 15 (COMMENT_AT): the place in the line, or 0 with the string in the values.
    const place = (r: IptablesRule) =>
      (r as unknown as {store: {int(row: number, field: number): number}; row: number}).store.int(
        (r as unknown as {row: number}).row,
        15,
      )
    expect(rules.map((r) => place(r) !== 0)).toEqual([true, false, false])
    // Setting a comment replaces the place.
    rules[0]!.comment = 'set'
    expect([rules[0]!.comment, place(rules[0]!)]).toEqual(['set', 0])
  })
})

describe('the chain of a plain rule, found by name where the line has it', () => {
  it('puts each rule in its own chain whether chains come in declared order, skip empty ones, go back, or share a prefix', () => {
    // readPlainAppend tries the last rule's chain, then the chain declared after it, then a lookup.
    const declared = [':P - [0:0]', ':PQ - [0:0]', ':EMPTY - [0:0]', ':R - [0:0]', ':PQR - [0:0]']
    const appends = [
      '-A P -j A1',
      '-A PQ -j A2',
      '-A PQ -j A3',
      '-A R -j A4',
      '-A PQR -j A5',
      '-A P -j A6',
      '-A PQR -j A7',
      '-A PQ -j A8',
      '-A R -j A9',
    ]
    const text = `*nat\n${declared.join('\n')}\n${appends.join('\n')}\nCOMMIT\n`
    const read = (plainLines: boolean) => {
      const {ruleset, plainLinesRead} = parseIptablesText(text, 't', undefined, {plainLines})
      const chains = ruleset.tables.get('nat')!.chains
      return {
        byChain: ['P', 'PQ', 'EMPTY', 'R', 'PQR'].map((name) =>
          chains.get(name)!.rules.map((r) => `${r.chain} ${r.target}`),
        ),
        plainLinesRead,
      }
    }
    const plain = read(true)
    expect(plain.byChain).toEqual([
      ['P A1', 'P A6'],
      ['PQ A2', 'PQ A3', 'PQ A8'],
      [],
      ['R A4', 'R A9'],
      ['PQR A5', 'PQR A7'],
    ])
    expect(plain.byChain).toEqual(read(false).byChain)
    expect(plain.plainLinesRead).toBe(declared.length + appends.length)
  })
})

describe('rules kept in rows (rule-store.ts): chains and lines found wrong', () => {
  it('keeps each chain in order whether its rules come one after another, interleaved, inserted or flushed', () => {
    const text = [
      '*nat',
      ':A - [0:0]',
      ':B - [0:0]',
      ':C - [0:0]',
      '-A C -j C1',
      '-A C -j C2',
      '-A C -j C3',
      '-A A -j X1',
      '-A B -j X2',
      '-A A -j X3',
      '-I A 2 -j X4',
      '-A B -j X5',
      '-F B',
      '-A B -j X6',
      '-I C -j C0',
      'COMMIT',
      '',
    ].join('\n')
    for (const plainLines of [true, false]) {
      const chains = parseIptablesText(text, 't', undefined, {plainLines}).ruleset.tables.get(
        'nat',
      )!.chains
      const said = (name: string) => {
        const chain = chains.get(name)!
        return {
          targets: chain.rules.map((r) => r.target),
          lines: chain.rules.map((r) => r.line),
          count: chain.ruleCount,
        }
      }
      expect(said('A')).toEqual({targets: ['X1', 'X4', 'X3'], lines: [8, 11, 10], count: 3})
      expect(said('B')).toEqual({targets: ['X6'], lines: [14], count: 1})
      expect(said('C')).toEqual({targets: ['C0', 'C1', 'C2', 'C3'], lines: [15, 5, 6, 7], count: 4})
    }
  })

  it("gives a rule after a line found wrong none of that line (its row is the next rule's)", () => {
    // The first line is begun as a rule (comment, target, -s) before its stray word is met.
    const text =
      '*nat\n:X - [0:0]\n-A X -s 1.2.3.4/32 -m comment --comment c1 -p tcp --dport 80 -j Y stray\n-A X -j Z\nCOMMIT\n'
    for (const plainLines of [true, false]) {
      const {ruleset, diagnostics} = parseIptablesText(text, 't', undefined, {plainLines})
      expect(diagnostics.map((d) => [d.code, d.source?.line])).toEqual([['IPT_SYNTAX', 3]])
      const [rule, ...rest] = ruleset.rules
      expect(rest).toEqual([])
      expect({
        line: rule!.line,
        target: rule!.target,
        comment: rule!.comment,
        source: rule!.source,
        protocol: rule!.protocol,
        dport: rule!.dport,
        text: rule!.text,
      }).toEqual({
        line: 4,
        target: 'Z',
        comment: null,
        source: null,
        protocol: null,
        dport: null,
        text: '-A X -j Z',
      })
    }
  })
})
