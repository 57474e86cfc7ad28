import {Chalk} from 'chalk'
import {describe, expect, it} from 'vitest'
import {displayWidth, renderTable} from '../../src/cli/views/table.js'
import {plainStyle} from '../../src/cli/views/style.js'

const colour = new Chalk({level: 1})
/** Strips SGR sequences, for comparing a coloured table with a plain one. */
const uncoloured = (text: string) => text.replace(/\u001b\[[\d;]*m/g, '')

describe('displayWidth', () => {
  it('counts ASCII by length, colour codes as nothing, wide characters as two, combining marks as none', () => {
    expect(displayWidth('10.0.0.1:80 50 %')).toBe(16)
    expect(displayWidth(colour.red('none'))).toBe(4)
    expect(displayWidth(colour.bold('SERVICE PORT'))).toBe(12)
    expect(displayWidth('café')).toBe(4)
    expect(displayWidth('cafe\u0301')).toBe(4)
    expect(displayWidth('中文')).toBe(4)
    expect(displayWidth('')).toBe(0)
  })

  it('measures CJK, Hangul and fullwidth forms as two columns a character, halfwidth kana as one', () => {
    expect(displayWidth('服务-中文')).toBe(9)
    expect(displayWidth('한국어')).toBe(6)
    expect(displayWidth('ＡＢ')).toBe(4)
    expect(displayWidth('ｶﾀｶﾅ')).toBe(4)
    expect(displayWidth('\u{20000}')).toBe(2)
    // A conjoining jamo pair is one syllable block on a terminal.
    expect(displayWidth('\u1100\u1161')).toBe(2)
  })

  it('measures emoji as two columns, outside the emoticon blocks too, and an emoji sequence as one emoji', () => {
    expect(displayWidth('😀')).toBe(2)
    expect(displayWidth('🚀 up')).toBe(5)
    expect(displayWidth('🇯🇵')).toBe(2)
    expect(displayWidth('👍🏽')).toBe(2)
    expect(displayWidth('👨\u200d👩\u200d👧')).toBe(2)
    expect(displayWidth(colour.green('✅ ok'))).toBe(5)
  })

  it('counts combining marks and zero-width characters as nothing, other marks as the letters they join', () => {
    expect(displayWidth('n\u0303and\u00fa')).toBe(5)
    expect(displayWidth('й')).toBe(1)
    expect(displayWidth('สวัสดี')).toBe(4)
    expect(displayWidth('a\u200bb')).toBe(2)
    expect(displayWidth('\ufeffx')).toBe(1)
    expect(displayWidth('a\u20dd')).toBe(1)
  })
})

describe('renderTable', () => {
  const columns = [
    {header: 'NAME', cell: (r: {name: string; ips: string[]; note: string}) => r.name},
    {header: 'ADDRESSES', cell: (r: {ips: string[]}) => r.ips.join('\n')},
    {header: 'NOTE', cell: (r: {note: string}) => r.note},
  ]
  const rows = [
    {name: 'a', ips: ['10.0.0.1', '10.0.0.22'], note: 'x'},
    {name: '中文', ips: [], note: ''},
    {name: 'longer-name', ips: ['1.1.1.1'], note: colour.red('drop')},
  ]

  it('pads every column but the last to its widest line, two blanks apart, one line per line of the tallest cell', () => {
    expect(renderTable(columns, rows, plainStyle).split('\n')).toEqual([
      'NAME         ADDRESSES  NOTE',
      'a            10.0.0.1   x',
      '             10.0.0.22',
      '中文',
      'longer-name  1.1.1.1    \u001b[31mdrop\u001b[39m',
    ])
  })

  it('lays a coloured table out as the plain one (colour codes take no columns)', () => {
    const plainRows = rows.map((r) => ({...r, note: uncoloured(r.note)}))
    expect(uncoloured(renderTable(columns, rows, colour))).toBe(
      renderTable(columns, plainRows, plainStyle),
    )
  })

  it('is only the header for no rows', () => {
    expect(renderTable(columns, [], plainStyle)).toBe('NAME  ADDRESSES  NOTE')
  })
})
