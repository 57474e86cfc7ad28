/**
 * Output for people at the terminal's width (issue 21 §6): prose wraps between words with a
 * hanging indent, the list table folds its FRONTENDS column, and into a pipe nothing changes
 * unless COLUMNS asks for a width.
 */
import {describe, expect, it} from 'vitest'
import {renderTable} from '../../src/cli/views/table.js'
import {plainStyle} from '../../src/cli/views/style.js'
import {displayWidth} from '../../src/cli/views/table.js'
import {terminalWidth, wrapLine, wrapText} from '../../src/cli/wrap.js'
import {runKpInProcess} from '../helpers/run-in-process.js'

const RULES = 'fixtures/iptables/upstream-overall/input.rules'
const words = (text: string) => text.split(/\s+/).filter(Boolean)

describe('terminalWidth', () => {
  it('COLUMNS first, then a terminal’s columns; into a pipe without COLUMNS, no width', () => {
    expect(terminalWidth({isTTY: false}, {COLUMNS: '60'})).toBe(60)
    expect(terminalWidth({isTTY: true, columns: 120}, {COLUMNS: '60'})).toBe(60)
    expect(terminalWidth({isTTY: true, columns: 120}, {})).toBe(120)
    expect(terminalWidth({isTTY: false, columns: 120}, {})).toBeNull()
    expect(terminalWidth({isTTY: true, columns: 100}, {COLUMNS: 'wide'})).toBe(100)
    expect(terminalWidth({isTTY: false}, {COLUMNS: '0'})).toBeNull()
  })
})

describe('wrapLine', () => {
  it('breaks between words, keeps the indent and hangs the continuations', () => {
    const line = '    Source NAT (masquerade): always. The endpoint sees this node’s address.'
    const lines = wrapLine(line, 30)
    expect(lines[0]).toBe('    Source NAT (masquerade):')
    expect(lines.length).toBeGreaterThan(2)
    for (const l of lines.slice(1)) expect(l).toMatch(/^ {6}\S/)
    for (const l of lines) expect(displayWidth(l)).toBeLessThanOrEqual(30)
    expect(words(lines.join(' '))).toEqual(words(line))
  })

  it('never cuts a word: one wider than the room has a line of its own', () => {
    const long = 'fd00:1234:5678:9abc:def0:1234:5678:9abc'
    expect(wrapLine(`  to ${long} now`, 20)).toEqual(['  to', `    ${long}`, '    now'])
  })

  it('measures by columns on a terminal (wide characters take two)', () => {
    expect(wrapLine('名前 名前 名前', 10)).toEqual(['名前 名前', '  名前'])
  })

  it('leaves lines that fit, and every line when there is no width', () => {
    expect(wrapLine('short', 10)).toEqual(['short'])
    const text = 'a '.repeat(100).trim()
    expect(wrapText(text, null)).toBe(text)
  })
})

describe('table folding', () => {
  const columns = [
    {header: 'NAME', cell: (r: string[]) => r[0]!},
    {header: 'FRONTENDS', cell: (r: string[]) => r[1]!, fold: true},
    {header: 'N', cell: (r: string[]) => r[2]!},
  ]
  const rows = [['ns/a:80/tcp', 'LB 5.6.7.8:80 (from 203.0.113.0/25)\nNodePort *:3002', '1']]

  it('folds the fold column between words when the table is wider than the terminal', () => {
    const wide = renderTable(columns, rows, plainStyle)
    const folded = renderTable(columns, rows, plainStyle, {width: 40})
    expect(Math.max(...wide.split('\n').map(displayWidth))).toBeGreaterThan(40)
    for (const l of folded.split('\n')) expect(displayWidth(l)).toBeLessThanOrEqual(40)
    expect(words(folded).sort()).toEqual(words(wide).sort())
    expect(folded.split('\n').length).toBeGreaterThan(wide.split('\n').length)
    expect(renderTable(columns, rows, plainStyle, {width: null})).toBe(wide)
  })

  it('stays wide where folding cannot help (too little room for the column)', () => {
    const wide = renderTable(columns, rows, plainStyle)
    expect(renderTable(columns, rows, plainStyle, {width: 20})).toBe(wide)
  })
})

describe('the commands at COLUMNS=60', () => {
  it('kp explain wraps its prose at 60 columns and keeps every word; piped, it does not wrap', async () => {
    const args = ['explain', 'ns5/svc5', '-f', RULES]
    const piped = await runKpInProcess(args)
    const narrow = await runKpInProcess(args, {env: {COLUMNS: '60'}})
    expect(narrow.exitCode).toBe(0)
    expect(Math.max(...piped.stdout.split('\n').map(displayWidth))).toBeGreaterThan(60)
    for (const l of narrow.stdout.split('\n')) expect(displayWidth(l)).toBeLessThanOrEqual(60)
    expect(words(narrow.stdout)).toEqual(words(piped.stdout))
  })

  it('kp list folds FRONTENDS at COLUMNS=80; the rows and words stay the same', async () => {
    const piped = await runKpInProcess(['list', '-f', RULES])
    const narrow = await runKpInProcess(['list', '-f', RULES], {env: {COLUMNS: '80'}})
    for (const l of narrow.stdout.split('\n')) expect(displayWidth(l)).toBeLessThanOrEqual(80)
    expect(words(narrow.stdout).sort()).toEqual(words(piped.stdout).sort())
  })

  it('kp diff wraps its lines at 60 columns and keeps every word; piped, it does not wrap', async () => {
    const args = ['diff', RULES, 'fixtures/nft/upstream-overall/list.nft']
    const piped = await runKpInProcess(args)
    const narrow = await runKpInProcess(args, {env: {COLUMNS: '60'}})
    expect(narrow.exitCode).toBe(piped.exitCode)
    expect(Math.max(...piped.stdout.split('\n').map(displayWidth))).toBeGreaterThan(60)
    for (const l of narrow.stdout.split('\n')) expect(displayWidth(l)).toBeLessThanOrEqual(60)
    expect(words(narrow.stdout)).toEqual(words(piped.stdout))
  })

  it('kp migrate --check wraps its findings', async () => {
    const args = ['migrate', '--to', 'nftables', '--check', '-f', RULES]
    const narrow = await runKpInProcess(args, {env: {COLUMNS: '60'}})
    const piped = await runKpInProcess(args)
    expect(words(narrow.stdout)).toEqual(words(piped.stdout))
    const tooWide = narrow.stdout.split('\n').filter((l) => displayWidth(l) > 60)
    // Only a single unbreakable word (a URL) may stick out.
    for (const l of tooWide)
      expect(words(l)).toHaveLength(1 + (l.trim().startsWith('see:') ? 1 : 0))
  })
})
