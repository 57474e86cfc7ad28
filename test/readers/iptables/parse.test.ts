/**
 * Stage 1: the tokenizer and parseIptablesText. Expectations are written by hand from the
 * iptables-restore tokenising rules (xshared.c add_param_to_argv, see tokenize.ts) and the
 * docs/kube-proxy-layouts.md §2.8 / §4 (text forms).
 */
import {describe, expect, it} from 'vitest'
import {
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

const words = (line: string) => tokenizeLine(line).words.map((w) => w.text)

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
