/**
 * Fragments of a dump (issue 21 §2): what a grep of `iptables-save` lacks is unknown, never "no".
 * Each fragment is cut from a shipped fixture here, the way an operator's grep cuts it, and the
 * full dump says what the answer is when nothing is missing.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {explainService, type ExplainResult} from '../../../src/analyze/explain.js'
import {parseServiceQuery} from '../../../src/analyze/explain-query.js'
import {ROOT} from '../../helpers/run-cli.js'
import {readText, service} from './helpers.js'

const CNI = readFileSync(
  join(ROOT, 'fixtures/iptables/handmade-node-with-cni/input.rules'),
  'utf8',
).split('\n')
const HASH = 'ZROLNW67U6B7G27Z'
const NAME = 'team/api:grpc/tcp'

/** `iptables-save | grep -- '-A KUBE'`: only the rules, no table headers, no declarations. */
function grepRules(lines: string[], drop: (line: string) => boolean = () => false): string {
  return lines
    .filter((l) => l.includes('-A KUBE'))
    .map((l) => l.replace(/^\[\d+:\d+\] /, ''))
    .filter((l) => !drop(l))
    .join('\n')
}

async function explain(text: string, query: string): Promise<ExplainResult> {
  const state = await readText(text)
  const q = parseServiceQuery(query, undefined)
  if ('invalid' in q) throw new Error(q.invalid)
  const result = explainService(state, q)
  if (result.kind !== 'ExplainResult') throw new Error(`no match for ${query}`)
  return result
}

describe('an iptables fragment without the KUBE-SVL chain', () => {
  const fragment = grepRules(CNI, (l) => l.startsWith(`-A KUBE-SVL-${HASH}`))

  it('the full grep reads two local endpoints; without KUBE-SVL locality is unknown, not "remote"', async () => {
    const full = service(await readText(grepRules(CNI)), NAME)
    expect(full.endpoints.filter((e) => e.local === true).map((e) => e.ip)).toEqual([
      '10.244.2.10',
      '10.244.3.10',
    ])
    expect(full.incomplete).toBeUndefined()
    const sp = service(await readText(fragment), NAME)
    expect(sp.endpoints.map((e) => e.local)).toEqual([null, null, null, null, null])
    expect(sp.incomplete).toEqual({
      missing: [`KUBE-SVL-${HASH}`],
      collect: 'iptables-save -t nat',
    })
  })

  it('the NodePort (ETP=Local) is unknown; the ClusterIP, whose chain is all there, is still answered', async () => {
    const sp = service(await readText(fragment), NAME)
    const byType = Object.fromEntries(sp.frontends.map((f) => [f.type, f]))
    expect(byType.NodePort!.incomplete?.missing).toEqual([`KUBE-SVL-${HASH}`])
    expect(byType.ClusterIP!.incomplete).toBeUndefined()
    const [m] = (await explain(fragment, 'team/api')).matches
    const nodePort = m!.frontends.find((f) => f.type === 'NodePort')!
    expect(nodePort.verdict).toBe(
      `Unknown: KUBE-SVL-${HASH} is not in the input; collect with \`iptables-save -t nat\`.`,
    )
    expect(nodePort.verdict).not.toMatch(/fail|no endpoint/)
    expect(nodePort.reaches).toEqual([])
    expect(m!.frontends.find((f) => f.type === 'ClusterIP')!.verdict).toBe(
      'Forwarded (DNAT) to one of 5 endpoints.',
    )
    expect(m!.incomplete?.missing).toEqual([`KUBE-SVL-${HASH}`])
    expect(m!.notes[0]).toMatch(/^Read from a fragment: KUBE-SVL-/)
  })
})

describe('an iptables fragment without a KUBE-SEP chain', () => {
  it('names the missing endpoint chain; the paths through it are unknown', async () => {
    const sep = 'KUBE-SEP-OBUM6BR4M4X7GIKK' // on both the cluster and the local path
    const sp = service(await readText(grepRules(CNI, (l) => l.startsWith(`-A ${sep} `))), NAME)
    expect(sp.incomplete?.missing).toEqual([sep])
    expect(sp.endpoints.map((e) => e.ip)).not.toContain('10.244.2.10')
    expect(sp.frontends.map((f) => [f.type, f.incomplete?.missing ?? null])).toEqual([
      ['ClusterIP', [sep]],
      ['NodePort', [sep]],
    ])
  })
})

describe('an iptables fragment without the KUBE-SERVICES lines', () => {
  const fragment = grepRules(CNI, (l) => l.startsWith('-A KUBE-SERVICES'))

  it('takes the ClusterIP from the "cluster IP" masquerade rule of the KUBE-SVC chain', async () => {
    const state = await readText(fragment)
    const sp = service(state, NAME)
    expect(sp.frontends[0]).toEqual({
      type: 'ClusterIP',
      ip: '10.96.5.5',
      port: 9000,
      sourceRanges: [],
      action: 'forward',
    })
    expect(sp.internalTrafficPolicy).toBe('Cluster')
    expect(sp.incomplete?.missing).toEqual(['KUBE-SERVICES'])
    expect(state.diagnostics.map((d) => d.code)).not.toContain('IPT_ORPHAN_CHAIN')
  })

  it('without --dport as well, the port is unknown (null), never 0', async () => {
    const sp = service(
      await readText(
        grepRules(CNI, (l) => l.startsWith('-A KUBE-SERVICES')).replace(/ --dport 9000/g, ''),
      ),
      NAME,
    )
    expect(sp.frontends[0]).toMatchObject({type: 'ClusterIP', ip: '10.96.5.5', port: null})
  })

  it('a dump that declares KUBE-SERVICES shows all of it: no ClusterIP is made up', async () => {
    const declared = `*nat\n:KUBE-SERVICES - [0:0]\n${fragment}\nCOMMIT\n`
    const sp = service(await readText(declared), NAME)
    expect(sp.frontends.map((f) => f.type)).toEqual(['NodePort'])
  })
})

describe('a grep of both tables', () => {
  it('reads the health check ACCEPT of KUBE-NODEPORTS as filter, not as a nat rule it does not understand', async () => {
    const state = await readText(grepRules(CNI))
    expect(service(state, NAME).healthCheckNodePort).toBe(32000)
    expect(state.diagnostics.map((d) => d.code)).not.toContain('IPT_UNKNOWN_RULE')
  })
})
