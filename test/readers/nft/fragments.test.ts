/**
 * Fragments of an nftables listing (issue 21 §2): a chain, set or map the table names but the
 * input lacks makes what depends on it unknown, never "no endpoints" or a verdict. Each fragment
 * is cut here from kube-proxy's own overall ruleset (fixtures/nft/upstream-overall), in the
 * transaction text form and in `nft -j` JSON.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {displayName} from '../../../src/core/state.js'
import type {ProxyState, ServicePort} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const TEXT = readFileSync(join(ROOT, 'fixtures/nft/upstream-overall/input.nft'), 'utf8')
const JSON_DOC = JSON.parse(
  readFileSync(join(ROOT, 'fixtures/nft-json/upstream-overall/input.json'), 'utf8'),
) as {nftables: Array<Record<string, any>>}
const COLLECT = 'nft list table ip kube-proxy'
const EP4 = 'endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80'
const SVC4 = 'service-LAUZTJTB-ns4/svc4/tcp/p80'

function read(text: string, path: string): Promise<ProxyState> {
  return readState({sources: [{path, text}]})
}
const readText = (drop: (line: string) => boolean) =>
  read(
    TEXT.split('\n')
      .filter((l) => !drop(l))
      .join('\n'),
    'fragment.nft',
  )
/** The JSON listing without the objects `drop` picks (a chain and its rules, a map with its elements). */
const readJson = (drop: (obj: Record<string, any>) => boolean) =>
  read(JSON.stringify({nftables: JSON_DOC.nftables.filter((o) => !drop(o))}), 'fragment.json')

function service(state: ProxyState, name: string): ServicePort {
  const sp = state.services.find((s) => displayName(s) === name)
  if (!sp) throw new Error(`no ${name}: ${state.services.map(displayName).join(', ')}`)
  return sp
}
const incompleteOf = (sp: ServicePort) =>
  sp.frontends.map((f) => [f.type, f.incomplete?.missing ?? null])

/** Objects of the JSON listing that are the chain `name` or its rules. */
const chainObject = (name: string) => (o: Record<string, any>) =>
  o.chain?.name === name || o.rule?.chain === name

describe('an nft fragment without an endpoint chain its service chain picks', () => {
  const cases: Array<[string, () => Promise<ProxyState>]> = [
    [
      'text',
      () =>
        readText(
          (l) =>
            l === `add chain ip kube-proxy ${EP4}` ||
            l.startsWith(`add rule ip kube-proxy ${EP4} `),
        ),
    ],
    ['json', () => readJson(chainObject(EP4))],
  ]
  for (const [form, load] of cases) {
    it(`${form}: the frontends through it are unknown, and the endpoint is not taken as gone`, async () => {
      const full = service(await read(TEXT, 'full.nft'), 'ns4/svc4:p80/tcp')
      expect(full.incomplete).toBeUndefined()
      const sp = service(await load(), 'ns4/svc4:p80/tcp')
      expect(sp.incomplete).toEqual({missing: [EP4], collect: COLLECT})
      expect(incompleteOf(sp)).toEqual([
        ['ClusterIP', [EP4]],
        ['External', [EP4]],
      ])
    })
  }
})

describe('an nft fragment without the service chain', () => {
  it('text: the ClusterIP is unknown, not "no endpoint is programmed"', async () => {
    const sp = service(
      await readText(
        (l) =>
          l === `add chain ip kube-proxy ${SVC4}` ||
          l.startsWith(`add rule ip kube-proxy ${SVC4} `),
      ),
      'ns4/svc4:p80/tcp',
    )
    expect(incompleteOf(sp)).toEqual([
      ['ClusterIP', [SVC4]],
      ['External', [SVC4]],
    ])
    expect(sp.incomplete?.missing).toEqual([SVC4])
  })
  it('json: the same', async () => {
    const sp = service(await readJson(chainObject(SVC4)), 'ns4/svc4:p80/tcp')
    expect(sp.incomplete?.missing).toEqual([SVC4])
  })
})

describe('an nft fragment without the external chain', () => {
  it('the externalTrafficPolicy is not shown (null), and the external frontends are unknown', async () => {
    const ext = 'external-LAUZTJTB-ns4/svc4/tcp/p80'
    const sp = service(
      await readText(
        (l) =>
          l === `add chain ip kube-proxy ${ext}` || l.startsWith(`add rule ip kube-proxy ${ext} `),
      ),
      'ns4/svc4:p80/tcp',
    )
    expect(sp.externalTrafficPolicy).toBeNull()
    expect(incompleteOf(sp)).toEqual([
      ['ClusterIP', null],
      ['External', [ext]],
    ])
  })
})

describe('an nft fragment without a map the table names', () => {
  it('text: no-endpoint-services missing makes the Local-policy external frontends unknown, and says so', async () => {
    const state = await readText((l) =>
      /^add (map|element) ip kube-proxy no-endpoint-services /.test(l),
    )
    const sp = service(state, 'ns2/svc2:p80/tcp')
    expect(sp.externalTrafficPolicy).toBe('Local')
    expect(incompleteOf(sp)).toEqual([
      ['ClusterIP', null],
      ['External', ['no-endpoint-services']],
      ['External', ['no-endpoint-services']],
      ['NodePort', null],
    ])
    // ETP=Cluster with endpoints: the no-endpoint maps never hold it.
    expect(service(state, 'ns4/svc4:p80/tcp').incomplete).toBeUndefined()
    expect(state.diagnostics.filter((d) => d.code === 'NFT_MISSING_SET').length).toBe(1)
  })
  it('json: service-ips missing marks every service port read from the other maps', async () => {
    const state = await readJson((o) => o.map?.name === 'service-ips')
    expect(state.services.length).toBeGreaterThan(0)
    for (const sp of state.services) expect(sp.incomplete?.missing).toContain('service-ips')
    expect(state.diagnostics.map((d) => d.code)).toContain('NFT_MISSING_SET')
  })
})
