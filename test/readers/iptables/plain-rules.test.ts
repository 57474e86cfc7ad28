/**
 * Stage 1's fast path for plain `-A` lines (readPlainAppend, firstOptionOfPlainText, the row
 * store): it must read every rule exactly as the general tokenizer does. Split from
 * parse.test.ts, which holds the tokenizer and the text forms.
 */
import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {firstOptionOfPlainText, parseIptablesText} from '../../../src/readers/iptables/parse.js'
import {type IptablesRule} from '../../../src/readers/iptables/ruleset.js'
import {ROOT} from '../../helpers/run-cli.js'
import {COMMON_NOISE, mutate, prng} from '../robustness.js'

/** The input.rules of every iptables fixture. */
const FIXTURE_DUMPS = readdirSync(join(ROOT, 'fixtures/iptables'), {withFileTypes: true})
  .filter((d) => d.isDirectory())
  .map((d) => readFileSync(join(ROOT, 'fixtures/iptables', d.name, 'input.rules'), 'utf8'))
/** A whole text as the (text, from, to) a plain walk takes. */
const whole = (text: string): [string, number, number] => [text, 0, text.length]

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
