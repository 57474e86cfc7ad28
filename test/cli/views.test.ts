/**
 * The human views, rendered without colour (and once with colour, to check that colour is
 * never the only signal). Expected rows are written by hand from fixtures/kp-json/overall.
 */
import {readFileSync} from 'node:fs'
import {Chalk} from 'chalk'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {explainService} from '../../src/analyze/explain.js'
import {parseServiceQuery, type ServiceQuery} from '../../src/analyze/explain-query.js'
import {renderExplain} from '../../src/cli/views/explain.js'
import {renderServiceList} from '../../src/cli/views/list.js'
import {outputStyle, plainStyle} from '../../src/cli/views/style.js'
import {emptyState} from '../../src/core/state.js'
import type {ProxyState} from '../../src/model/types.js'
import {parse} from '../../src/readers/kp-json/parse.js'
import {ROOT} from '../helpers/run-cli.js'

function load(name: string): ProxyState {
  const path = `${ROOT}fixtures/kp-json/${name}/state.json`
  return parse({path, text: readFileSync(path, 'utf8')}).data!
}

const overall = load('overall')

function query(text: string): ServiceQuery {
  const q = parseServiceQuery(text)
  if ('invalid' in q) throw new Error(q.invalid)
  return q
}

function explainText(state: ProxyState, text: string, rules = false): string {
  const r = explainService(state, query(text))
  if (r.kind !== 'ExplainResult') throw new Error('not found')
  return renderExplain(r, {rules, ruleText: () => [], style: plainStyle})
}

/** Splits a borderless table into trimmed cells (two or more spaces separate columns). */
function rows(table: string): string[][] {
  return table.split('\n').map((line) => line.split(/ {2,}/).map((c) => c.trim()))
}

describe('list view', () => {
  const text = renderServiceList(overall, {
    wide: false,
    total: overall.services.length,
    style: plainStyle,
  })

  it('shows one row per service port, frontends with REJECT/DROP and source-range marks', () => {
    const table = rows(text)
    expect(table[0]).toEqual(['SERVICE PORT', 'FRONTENDS', 'ENDPOINTS', 'POLICY', 'AFFINITY'])
    expect(table[1]).toEqual([
      'ns1/svc1:p80/tcp',
      'ClusterIP 172.30.0.41:80',
      '1',
      'ITP=Cluster',
      '-',
    ])
    expect(table[2]).toEqual([
      'ns2/svc2:p80/tcp',
      'ClusterIP 172.30.0.42:80',
      '1 (0 local)',
      'ITP=Cluster',
      '-',
    ])
    expect(table[3]).toEqual(['', 'ExternalIP 192.168.99.22:80 DROP', 'ETP=Local'])
    expect(text).toContain('NodePort *:3001 DROP')
    expect(text).toContain('LB 5.6.7.8:80 (from 203.0.113.0/25)')
    expect(text).toMatch(/ns6\/svc6:p80\/tcp +ClusterIP 172\.30\.0\.46:80 REJECT +0 /)
    expect(text).toContain('ClientIP 10800s')
    expect(text).toContain('ClusterIP [fd00:172:30::47]:80')
    expect(text).toMatch(/\n8 service ports \(iptables mode\)$/)
  })

  it('-o wide lists every endpoint with its share and locality', () => {
    const wide = renderServiceList(overall, {wide: true, total: 8, style: plainStyle})
    expect(wide).toContain('10.180.0.4:80 50 %')
    expect(wide).toContain('10.180.0.2:80 100 % remote')
    expect(wide).toContain('[fd00:10:180::1]:80 33.3 %')
    expect(wide).not.toContain('SCHEDULER')
  })

  it('says plainly when there is nothing to list', () => {
    expect(
      renderServiceList(emptyState('nftables'), {wide: false, total: 0, style: plainStyle}),
    ).toBe('No service ports found (nftables mode, 0 sources read).')
    expect(
      renderServiceList(
        {...overall, services: []},
        {wide: false, namespace: 'nope', total: 8, style: plainStyle},
      ),
    ).toBe('No service ports in namespace nope (8 in other namespaces; drop -n to see them).')
  })

  it('escapes control characters that came from the input', () => {
    const out = renderServiceList(load('control-chars'), {wide: false, total: 1, style: plainStyle})
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
    expect(out).toContain('ns1/evil\\x1b]0;pwned\\x07\\x1b[31m:p80/tcp')
  })

  it('marks actions with words even when colour is on', () => {
    const coloured = renderServiceList(overall, {
      wide: false,
      total: 8,
      style: new Chalk({level: 1}),
    })
    expect(coloured).toContain('\u001b[31mREJECT\u001b[39m')
    expect(coloured).toContain('\u001b[31mDROP\u001b[39m')
  })
})

describe('explain view', () => {
  it('spells out each frontend of ns5/svc5: verdict, masquerade and source ranges', () => {
    const out = explainText(overall, 'ns5/svc5')
    expect(out).toContain('ns5/svc5:p80/tcp  (iptables mode)')
    expect(out).toContain(
      'session affinity ClientIP: a client keeps the endpoint it got first for 10800 s after its last new connection',
    )
    expect(out).toMatch(
      / {2}LB 5\.6\.7\.8:80 \(from 203\.0\.113\.0\/25\)\n {4}Forwarded \(DNAT\) to the only endpoint\.\n {4}Source NAT \(masquerade\): always\./,
    )
    expect(out).toContain('Only clients from 203.0.113.0/25 are let in')
    expect(out).toMatch(/10\.180\.0\.3:80 +100 % +unknown/)
    expect(out).not.toContain('Rules')
  })

  it('shows effective shares as percentages, never conditional probabilities', () => {
    const out = explainText(overall, 'ns7/svc7')
    expect(out.match(/33\.3 %/g)).toHaveLength(3)
    expect(out).not.toMatch(/0\.33|0\.5\b/)
  })

  it('--rules lists path:line in source order, with the rule text when the file was read', () => {
    const r = explainService(overall, query('ns6/svc6'))
    if (r.kind !== 'ExplainResult') throw new Error('not found')
    const withText = renderExplain(r, {
      rules: true,
      ruleText: (ref) => (ref.line === 9 ? ['-A KUBE-SERVICES ... -j REJECT'] : []),
      style: plainStyle,
    })
    expect(withText).toContain(
      '  Rules (1), in source order:\n    fixtures/iptables/upstream-overall/input.rules:9  -A KUBE-SERVICES ... -j REJECT',
    )
    expect(explainText(overall, 'ns1/svc1', true)).toMatch(
      /input\.rules:46\n.*input\.rules:79\n.*input\.rules:80\n.*input\.rules:93\n.*input\.rules:94$/,
    )
  })

  it('escapes control characters in names and rule text', () => {
    const state = load('control-chars')
    const r = explainService(state, query('172.30.0.41'))
    if (r.kind !== 'ExplainResult') throw new Error('not found')
    const out = renderExplain(r, {
      rules: true,
      ruleText: () => ['-A X -m comment --comment "\u001b[2J"'],
      style: plainStyle,
    })
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
    expect(out).toContain('\\x1b[2J')
  })
})

describe('outputStyle', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })
  const tty = {isTTY: true}
  it('colours on a terminal, and nothing with --no-color, NO_COLOR, or off a terminal', () => {
    vi.stubEnv('NO_COLOR', '')
    expect(outputStyle(false, tty, 3).level).toBe(3)
    expect(outputStyle(true, tty, 3).level).toBe(0)
    expect(outputStyle(false, {isTTY: false}, 3).level).toBe(0)
    vi.stubEnv('NO_COLOR', '1')
    expect(outputStyle(false, tty, 3).level).toBe(0)
  })
})
