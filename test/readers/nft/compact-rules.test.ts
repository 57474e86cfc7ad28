/**
 * The text reader keeps most rules as the offset of their line and reads their words only when
 * NftChain.rules() is called (parse.ts readAll, tokenize.ts lineShape). These lines must come
 * out exactly as when every line was read word by word: properties stay properties, `;` still
 * splits statements, `#` still ends a line, and quoted strings keep their `{`, `;` and `#`.
 */
import {describe, expect, it} from 'vitest'
import {parseNftText} from '../../../src/readers/nft/parse.js'

function chainOf(body: string[]) {
  const text = ['table ip t {', '\tchain c {', ...body.map((l) => `\t\t${l}`), '\t}', '}', ''].join(
    '\n',
  )
  const r = parseNftText(text, 'x')
  const chain = r.doc.tables.get('ip t')!.chains.get('c')!
  return {
    chain,
    rules: chain.rules().map((rule) => [rule.tokens.join(' '), rule.comment, rule.line]),
    diagnostics: r.diagnostics,
  }
}

describe('rules read when used', () => {
  it('gives the words, comment and line of each rule', () => {
    const {rules, chain} = chainOf([
      'ip daddr 10.0.0.1 tcp dport 80 jump x comment "a; b { # c"',
      'numgen random mod 2 vmap { 0 : goto a, 1 : goto b }',
      '"quoted"word ip saddr 1.2.3.4 drop # handle 7',
      '',
      '# handle 9',
      'ct state established,related accept',
    ])
    expect(rules).toEqual([
      ['ip daddr 10.0.0.1 tcp dport 80 jump x', 'a; b { # c', 3],
      ['numgen random mod 2 vmap { 0 : goto a , 1 : goto b }', null, 4],
      ['"quoted" word ip saddr 1.2.3.4 drop', null, 5],
      ['ct state established,related accept', null, 8],
    ])
    expect(chain.ruleCount).toBe(4)
  })

  it('keeps chain properties, `;` statements and open braces on the word-by-word path', () => {
    const {rules, chain} = chainOf([
      'type nat hook output priority -100; policy accept;',
      'comment "the chain"',
      'type filter',
      'meta mark set 0x4000 ; counter',
      'ip daddr { 10.0.0.1,',
      '  10.0.0.2 } drop',
      'devices = { eth0 }',
    ])
    expect(chain.hook).toMatchObject({
      type: 'nat',
      hook: 'output',
      priority: -100,
      policy: 'accept',
    })
    expect(chain.comment).toBe('the chain')
    expect(rules).toEqual([
      ['type filter', null, 5],
      ['meta mark set 0x4000', null, 6],
      ['counter', null, 6],
      ['ip daddr { 10.0.0.1 , 10.0.0.2 } drop', null, 7],
    ])
  })

  it('reports an unterminated quote once, while the dump is read', () => {
    const {rules, diagnostics} = chainOf(['ip saddr 1.2.3.4 comment "open'])
    expect(rules).toEqual([['ip saddr 1.2.3.4', 'open', 3]])
    expect(diagnostics.map((d) => [d.code, d.source?.line])).toEqual([
      ['NFT_UNTERMINATED_STRING', 3],
    ])
  })
})

describe('a file read in pieces of whole lines (textPieces), as kp reads files', () => {
  /** Everything the reader gives: each table's chains with their rules made, sets, and the diagnostics. */
  const readOf = (text: string | Iterable<string>) => {
    const {doc, diagnostics} = parseNftText(text, 'x')
    const tables = [...doc.tables.entries()].map(([key, t]) => ({
      key,
      chains: [...t.chains.values()].map((c) => ({
        name: c.name,
        line: c.line,
        hook: c.hook,
        comment: c.comment,
        rules: c.rules(),
      })),
      sets: [...t.sets.values()],
    }))
    return {tables, diagnostics}
  }

  it('gives every nft text fixture what the whole text gives, for pieces as small as a line', async () => {
    const {readdirSync, readFileSync} = await import('node:fs')
    const {join} = await import('node:path')
    const {memoryBytes, textPieces} = await import('../../../src/readers/bytes.js')
    const root = 'fixtures/nft'
    const files = readdirSync(root, {withFileTypes: true, recursive: true})
      .filter((d) => d.isFile() && /\.nft$/.test(d.name))
      .map((d) => join(d.parentPath, d.name))
    expect(files.length).toBeGreaterThan(10)
    let rules = 0
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      const whole = readOf(text)
      rules += whole.tables.reduce(
        (n, t) => n + t.chains.reduce((m, c) => m + c.rules.length, 0),
        0,
      )
      for (const size of [1, 97, 4096]) {
        const pieces = [...textPieces(memoryBytes(Buffer.from(text, 'utf8')), size)]
        if (size === 1) expect(pieces.length).toBeGreaterThan(1)
        expect(readOf(pieces), `${file} in pieces of ${size} bytes`).toEqual(whole)
      }
      // No newline at the end, and a byte order mark at the start (both as a whole text reads them).
      const cut = text.replace(/\n$/, '')
      expect(
        readOf(textPieces(memoryBytes(Buffer.from(`\ufeff${cut}`, 'utf8')), 64)),
        file,
      ).toEqual(readOf(cut))
    }
    expect(rules).toBeGreaterThan(100)
  })
})

describe('lines taken by their shape (compact rules, `chain NAME {`, a lone `}`)', () => {
  /** The document as readOf above gives it, with the shortcuts or word by word. */
  const readBoth = (text: string) =>
    [false, true].map((wordByWord) => {
      const {doc, diagnostics} = parseNftText(text, 'x', {wordByWord})
      const tables = [...doc.tables.entries()].map(([key, t]) => ({
        key,
        chains: [...t.chains.values()].map((c) => ({
          name: c.name,
          line: c.line,
          hook: c.hook,
          comment: c.comment,
          rules: c.rules(),
        })),
        sets: [...t.sets.values()],
      }))
      return {tables, diagnostics}
    })

  it('give the document word-by-word reading gives, for the chain lines kp takes by shape and those it does not', () => {
    const text = [
      'table ip t {',
      '\tchain a {',
      '\t\tip daddr 10.0.0.1 drop',
      '\t}',
      '  chain b{',
      '\t}  ',
      '\tchain c { # handle 3',
      '\t} # handle 3',
      '\tchain "d" {',
      '\t}',
      '\tchain e, {',
      '\t};',
      '\tchain f {}',
      '\tchain g { type nat hook output priority 0; }',
      '\tchain #h {',
      '\tchainx i {',
      '\t}',
      '\tchain',
      '\t}',
      '}',
      '}',
      '',
    ].join('\n')
    const [shortcut, wordByWord] = readBoth(text)
    expect(shortcut).toEqual(wordByWord)
    // `chain e, {` is no chain header (four words): what follows is skipped to its closing brace.
    expect(shortcut!.tables[0]!.chains.map((c) => c.name)).toEqual(['a', 'b', 'c', '"d"'])
    expect(shortcut!.tables[0]!.chains[0]!.rules.map((r) => r.tokens.join(' '))).toEqual([
      'ip daddr 10.0.0.1 drop',
    ])
  })

  it('give every nft text fixture, and mutations of them, what word-by-word reading gives', async () => {
    const {readdirSync, readFileSync} = await import('node:fs')
    const {join} = await import('node:path')
    const {mutate, prng, COMMON_NOISE} = await import('../robustness.js')
    const noise = [
      ...COMMON_NOISE,
      '{',
      '}',
      '\n}\n',
      ';',
      'chain x {',
      '\tchain y {\n',
      'chain',
      '#',
      ' }',
      '} ',
      'table ip t {',
      'type nat hook output priority 0;',
      '"',
    ]
    const files = readdirSync('fixtures/nft', {withFileTypes: true, recursive: true})
      .filter((d) => d.isFile() && /\.nft$/.test(d.name))
      .map((d) => join(d.parentPath, d.name))
    const rnd = prng(0x6e66)
    let chains = 0
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      for (const [k, variant] of [
        text,
        ...Array.from({length: 20}, () => mutate(text, rnd, noise)),
      ].entries()) {
        const [shortcut, wordByWord] = readBoth(variant)
        expect(shortcut, `${file} variant ${k}`).toEqual(wordByWord)
        chains += shortcut!.tables.reduce((n, t) => n + t.chains.length, 0)
      }
    }
    expect(chains).toBeGreaterThan(1000)
  })
})
