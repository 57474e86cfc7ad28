/**
 * IPVS frontends with their own endpoints (issue 21 §4, kubernetes #89923) in `kp explain` and
 * `kp list`: the 127.0.0.1 NodePort of default/web lacks 10.244.3.3:8080, which the ClusterIP,
 * the externalIP and the node's other NodePort address have (test/helpers/ipvs-disagree.ts).
 */
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import {explainService} from '../../src/analyze/explain.js'
import {parseServiceQuery} from '../../src/analyze/explain-query.js'
import {renderExplain} from '../../src/cli/views/explain.js'
import {renderServiceList} from '../../src/cli/views/list.js'
import {plainStyle} from '../../src/cli/views/style.js'
import type {ProxyState} from '../../src/model/types.js'
import {
  loopbackNodePortLacksOne,
  readIpvs,
  webWithTwoReady,
  withLoopbackNodePort,
} from '../helpers/ipvs-disagree.js'

function explain(state: ProxyState, text: string) {
  const q = parseServiceQuery(text)
  if ('invalid' in q) throw new Error(q.invalid)
  const r = explainService(state, q)
  if (r.kind !== 'ExplainResult') throw new Error('not found')
  return r
}

describe('explain: a frontend with its own endpoints', () => {
  it('reaches its own real servers and says what it lacks', async () => {
    const s = await readIpvs(loopbackNodePortLacksOne())
    // `:30080` takes the NodePort on every address and the one on 127.0.0.1.
    const all = explain(s, ':30080').matches[0]!.frontends
    expect(all.map((f) => f.address)).toEqual(['*:30080', '127.0.0.1:30080'])
    expect(explain(s, '127.0.0.1:30080').matches[0]!.frontends).toHaveLength(1)
    const loopback = all.find((f) => f.ip === '127.0.0.1')!
    expect(loopback.reaches.map((r) => `${r.ip}:${r.port}`)).toEqual([
      '10.244.1.5:8080',
      '10.244.2.7:8080',
    ])
    expect(loopback.ownEndpoints).toEqual({missing: ['10.244.3.3:8080'], extra: []})
    expect(loopback.notes.join(' ')).toContain('lacks 10.244.3.3:8080')
    const wild = all.find((f) => f.type === 'NodePort' && f.ip === null)!
    expect(wild.ownEndpoints).toBeNull()
    expect(wild.reaches.map((r) => `${r.ip}:${r.port}`)).toContain('10.244.3.3:8080')
  })

  it('the text shows the frontend, what it reaches and the difference', async () => {
    const s = await readIpvs(loopbackNodePortLacksOne())
    const text = renderExplain(explain(s, ':30080'), {
      rules: false,
      ruleText: () => [],
      style: plainStyle,
    })
    const at = text.indexOf('127.0.0.1:30080')
    expect(at).toBeGreaterThan(0)
    const block = text.slice(at)
    expect(block).toMatch(/Reaches: 10\.244\.1\.5:8080, 10\.244\.2\.7:8080/)
    expect(block).toContain('lacks 10.244.3.3:8080')
  })

  it('without a disagreement nothing changes', async () => {
    const s = await readIpvs(webWithTwoReady())
    for (const f of explain(s, ':30080').matches[0]!.frontends) expect(f.ownEndpoints).toBeNull()
  })
})

describe('list: a frontend with its own endpoints', () => {
  const render = (s: ProxyState, wide: boolean) =>
    renderServiceList(s, {wide, total: s.services.length, style: plainStyle})

  it('the table says what differs; -o wide lists its endpoints under it', async () => {
    const s = await readIpvs(loopbackNodePortLacksOne())
    const table = render(s, false)
    expect(table).toContain('127.0.0.1:30080')
    expect(table).toContain('own endpoints (lacks 10.244.3.3:8080)')
    const wide = render(s, true).split('\n')
    const at = wide.findIndex((l) => l.includes('own endpoints (lacks 10.244.3.3:8080):'))
    expect(at).toBeGreaterThan(0)
    expect(wide[at + 1]).toMatch(/^\s.*\s{4}10\.244\.1\.5:8080 weight 1/)
    expect(wide[at + 2]).toMatch(/\s{4}10\.244\.2\.7:8080 .*weight 0 .*draining/)
    expect(render(await readIpvs(webWithTwoReady()), true)).not.toContain('own endpoints')
  })
})

describe('diff: a frontend with its own endpoints', () => {
  it('the node before and after the 127.0.0.1 NodePort lost a real server', async () => {
    const before = await readIpvs(
      withLoopbackNodePort(webWithTwoReady(), 'TCP  10.0.0.10:30080', null),
    )
    const after = await readIpvs(loopbackNodePortLacksOne())
    const r = diffStates(before, after)
    expect(r.equal).toBe(false)
    expect(r.services).toEqual([
      {
        service: '10.96.100.20:80/TCP',
        change: 'changed',
        differences: [
          {
            field: 'frontends[NodePort 127.0.0.1:30080].endpoints',
            a: ['10.244.1.5:8080', '10.244.3.3:8080'],
            b: ['10.244.1.5:8080'],
          },
        ],
      },
    ])
    expect(diffStates(after, after).equal).toBe(true)
  })
})
