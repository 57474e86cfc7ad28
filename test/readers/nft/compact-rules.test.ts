/**
 * The text reader keeps most rules as the offset of their line and reads their words only when
 * NftChain.rules() is called (parse.ts readAll, tokenize.ts lineShape). These lines must come
 * out exactly as when every line was read word by word: properties stay properties, `;` still
 * splits statements, `#` still ends a line, and quoted strings keep their `{`, `;` and `#`.
 */
import {describe, expect, it} from 'vitest'
import {parseNftText} from '../../../src/readers/nft/parse.js'

function chainOf(body: string[]) {
  const text = ['table ip t {', '\tchain c {', ...body.map((l) => `\t\t${l}`), '\t}', '}', ''].join('\n')
  const r = parseNftText(text, 'x')
  const chain = r.doc.tables.get('ip t')!.chains.get('c')!
  return {chain, rules: chain.rules().map((rule) => [rule.tokens.join(' '), rule.comment, rule.line]), diagnostics: r.diagnostics}
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
    expect(chain.hook).toMatchObject({type: 'nat', hook: 'output', priority: -100, policy: 'accept'})
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
    expect(diagnostics.map((d) => [d.code, d.source?.line])).toEqual([['NFT_UNTERMINATED_STRING', 3]])
  })
})
