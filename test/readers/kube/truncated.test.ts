/**
 * Cluster objects cut off (issue 21 §1): a kubectl `-o yaml` or `-o json` List ends with
 * `kind: List` after its items, so one that stops inside them is cut. KUBE_TRUNCATED (error),
 * the whole items before the cut read, the one the cut falls in not.
 */
import {describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'
import {parseKube} from '../../../src/readers/kube/parse.js'
import {readState} from '../../../src/readers/read-state.js'
import {fixtureText} from './helpers.js'

const YAML_LIST = fixtureText('iptables-overall', 'cluster.yaml')
const JSON_LIST = JSON.stringify(parseYaml(YAML_LIST), null, 4) + '\n'

const errorCodes = (r: ReturnType<typeof parseKube>) =>
  r.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)
const names = (r: ReturnType<typeof parseKube>) => [
  ...r.data.services.map((s) => `svc ${s.namespace}/${s.name}`),
  ...r.data.slices.map((s) => `slice ${s.namespace}/${s.name}`),
]

/** The text up to `fraction` of it, `extra` characters into that line (0: at a line boundary). */
function cutAt(text: string, fraction: number, extra: number): string {
  const at = text.lastIndexOf('\n', Math.floor(text.length * fraction)) + 1
  return text.slice(0, at + extra)
}

describe('a kubectl List cut off', () => {
  const whole = parseKube({path: 'whole.yaml', text: YAML_LIST})

  for (const [form, text] of [
    ['YAML', YAML_LIST],
    ['JSON', JSON_LIST],
  ] as const) {
    for (const extra of [0, 9]) {
      it(`${form}, cut ${extra === 0 ? 'at a line boundary' : 'in the middle of a line'}: KUBE_TRUNCATED, the whole items before it read`, () => {
        const cut = cutAt(text, 0.6, extra)
        const r = parseKube({path: `cut.${form.toLowerCase()}`, text: cut})
        expect(errorCodes(r)).toEqual(['KUBE_TRUNCATED'])
        const d = r.diagnostics.find((x) => x.code === 'KUBE_TRUNCATED')!
        expect(d.source!.line).toBe(cut.trimEnd().split('\n').length)
        const read = names(r)
        expect(read.length).toBeGreaterThan(3)
        expect(read.length).toBeLessThan(names(whole).length)
        // What was read is what the whole List has, in order: the cut item is left out.
        expect(names(whole).slice(0, read.length).sort()).toEqual([...read].sort())
        expect(d.message).toContain(
          `${r.data.services.length + r.data.slices.length} whole item(s)`,
        )
      })
    }
  }

  it('the whole List, and the List without its last newline, are not cut', () => {
    expect(errorCodes(parseKube({path: 'a.yaml', text: YAML_LIST.trimEnd()}))).toEqual([])
    expect(errorCodes(parseKube({path: 'a.json', text: JSON_LIST.trimEnd()}))).toEqual([])
  })

  it('cut among the slices: a Service whose slices were not read has unknown endpoints, not none', async () => {
    const cut = YAML_LIST.slice(0, YAML_LIST.indexOf('name: svc2-1'))
    const state = await readState({sources: [{path: 'cut.yaml', text: cut}]}, {node: 'node-a'})
    const byName = (n: string) => state.services.find((sp) => sp.name === n)!
    expect(byName('svc1').incomplete).toBeUndefined()
    expect(byName('svc1').endpoints).toHaveLength(1)
    for (const n of ['svc2', 'svc3', 'svc6']) {
      expect(byName(n).incomplete?.missing, n).toEqual([
        `an EndpointSlice of Service ns${n.slice(3)}/${n}`,
      ])
      expect(byName(n).frontends.every((f) => f.incomplete !== undefined)).toBe(true)
    }
    // The whole List: no such mark (svc6 has no endpoints there, and says so).
    const whole = await readState({sources: [{path: 'a.yaml', text: YAML_LIST}]}, {node: 'node-a'})
    expect(whole.services.every((sp) => sp.incomplete === undefined)).toBe(true)
  })

  it('a List written by hand with its kind first is not taken for a cut one', () => {
    const byHand = `apiVersion: v1\nkind: List\n${YAML_LIST.slice(YAML_LIST.indexOf('items:'), YAML_LIST.indexOf('\nkind: List') + 1)}`
    const r = parseKube({path: 'a.yaml', text: byHand})
    expect(errorCodes(r)).toEqual([])
    expect(names(r)).toEqual(names(whole))
  })

  it('cut before its first whole item: the error alone, nothing read', () => {
    const r = parseKube({path: 'a.yaml', text: YAML_LIST.slice(0, 60)})
    expect(errorCodes(r)).toEqual(['KUBE_TRUNCATED'])
    expect(names(r)).toEqual([])
  })
})
