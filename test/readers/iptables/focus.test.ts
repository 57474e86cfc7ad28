/**
 * The focused read behind `kp explain NAME` (ReadOptions.focus, src/readers/iptables/focus.ts)
 * must answer exactly what the full read answers for the services it was asked about: same
 * service ports (frontends, endpoints, shares, policies, rule lines), same node settings.
 * The expectation is the full read of the same fixture, not a copy of the output.
 */
import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {ProxyState, ServicePort} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const FIXTURES = readdirSync(join(ROOT, 'fixtures/iptables'), {withFileTypes: true})
  .filter((d) => d.isDirectory())
  .map((d) => d.name)

function load(dir: string): {path: string; text: string} {
  const path = join('fixtures/iptables', dir, 'input.rules')
  return {path, text: readFileSync(join(ROOT, path), 'utf8')}
}

const read = (src: {path: string; text: string}, needles?: string[]): Promise<ProxyState> =>
  readState({sources: [src]}, needles ? {focus: {needles}} : {})

const named = (state: ProxyState, namespace: string | null, name: string): ServicePort[] =>
  state.services.filter((s) => (namespace === null || s.namespace === namespace) && s.name === name)

/** Dumps with table headers are read focused; `-S` output and grep fragments are not (their tables are inferred from all rules). */
const headerless = (text: string): boolean => !/^\*\w+$/m.test(text)

describe('focused read == full read for the services asked about', () => {
  it.each(FIXTURES)('%s: every named service, by ns/name and by bare name', async (dir) => {
    const src = load(dir)
    const full = await read(src)
    const names = [...new Set(full.services.filter((s) => s.name !== null).map((s) => `${s.namespace}/${s.name}`))]
    for (const nsName of names) {
      const [namespace, name] = nsName.split('/') as [string, string]
      const focused = await read(src, [nsName])
      const focusedCodes = focused.diagnostics.map((d) => d.code)
      expect(focusedCodes.includes('IPT_FOCUSED_READ'), nsName).toBe(!headerless(src.text))
      expect(named(focused, namespace, name), nsName).toEqual(named(full, namespace, name))
      expect(focused.node, nsName).toEqual(full.node)
      expect(focused.diagnostics.filter((d) => d.severity === 'error')).toEqual(full.diagnostics.filter((d) => d.severity === 'error'))

      const anyNamespace = await read(src, [`/${name}`])
      expect(named(anyNamespace, null, name), `/${name}`).toEqual(named(full, null, name))
      expect(anyNamespace.node).toEqual(full.node)
    }
  })
})

describe('what a focused read leaves out', () => {
  it('reads only the matching service of a many-service dump, and says the read was focused', async () => {
    const src = load('upstream-overall')
    const full = await read(src)
    const focused = await read(src, ['ns1/svc1'])
    expect(full.services.length).toBeGreaterThan(5)
    expect(new Set(focused.services.map((s) => `${s.namespace}/${s.name}`))).toEqual(new Set(['ns1/svc1']))
    const info = focused.diagnostics.find((d) => d.code === 'IPT_FOCUSED_READ')
    expect(info?.severity).toBe('info')
    expect(info?.message).toContain('ns1/svc1')
  })

  it('follows jumps into SEP chains that carry no comment (large-cluster mode)', async () => {
    const src = load('handmade-node-with-cni')
    const full = await read(src)
    const withEndpoints = full.services.find((s) => s.endpoints.length > 0 && s.name !== null)!
    const focused = await read(src, [`${withEndpoints.namespace}/${withEndpoints.name}`])
    const again = named(focused, withEndpoints.namespace, withEndpoints.name!)
    expect(again.flatMap((s) => s.endpoints)).toEqual(named(full, withEndpoints.namespace, withEndpoints.name!).flatMap((s) => s.endpoints))
    expect(again.flatMap((s) => s.endpoints).length).toBeGreaterThan(0)
  })

  it('skips the whole-dump checks: foreign rules are not listed', async () => {
    const src = load('handmade-node-with-cni')
    const full = await read(src)
    expect(full.foreign.length).toBeGreaterThan(0)
    const some = full.services.find((s) => s.name !== null)!
    expect((await read(src, [`${some.namespace}/${some.name}`])).foreign).toEqual([])
  })

  it('a needle nothing holds gives no service, and the node settings still', async () => {
    const src = load('upstream-overall')
    const full = await read(src)
    const focused = await read(src, ['no-such-ns/no-such-svc'])
    expect(focused.services).toEqual([])
    expect(focused.node).toEqual(full.node)
  })
})
