/**
 * kube-proxy 1.37's localhost NodePorts in nftables mode (alpha gate
 * KubeProxyNFTablesLocalhostNodePorts): a NodePort named in `localhost-nodeport-reject-ports` is
 * rejected on 127.0.0.1 (Frontend.localhostRejected), in both the command form and `nft list`.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import type {ProxyState} from '../../../src/model/types.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

const text = (rel: string) => readFileSync(`${ROOT}fixtures/${rel}`, 'utf8')
const read = (t: string, path = 'ruleset.nft') => readState({sources: [{path, text: t}]})
/** `name protocol port` of every NodePort the state marks rejected on localhost. */
const rejected = (s: ProxyState) =>
  s.services.flatMap((sp) =>
    sp.frontends
      .filter((f) => f.type === 'NodePort' && f.localhostRejected === true)
      .map((f) => `${sp.name} ${sp.protocol} ${f.port}`),
  )

describe('localhost NodePorts rejected by kube-proxy 1.37 (nftables)', () => {
  const fixture = text('verify/nft-localhost-reject/ruleset.nft')

  it('marks the NodePorts the reject map names, TCP and UDP, and no other', async () => {
    const s = await read(fixture)
    expect(rejected(s).sort()).toEqual(['api TCP 30443', 'dns UDP 30053'])
    expect(s.services.find((sp) => sp.name === 'shop')!.frontends).not.toContainEqual(
      expect.objectContaining({localhostRejected: true}),
    )
  })

  it('marks nothing when no rule of nodeport-endpoints-check looks the map up for 127.0.0.0/8', async () => {
    const rule =
      'add rule ip kube-proxy nodeport-endpoints-check ip daddr 127.0.0.0/8 meta l4proto . th dport vmap @localhost-nodeport-reject-ports\n'
    expect(fixture).toContain(rule)
    expect(rejected(await read(fixture.replace(rule, '')))).toEqual([])
  })

  it('marks nothing for a port whose verdict chain does not reject', async () => {
    const reject =
      'add rule ip kube-proxy localhost-nodeport-reject-tcp counter name "localhost-nodeport-rejected-tcp" reject\n'
    expect(fixture).toContain(reject)
    expect(rejected(await read(fixture.replace(reject, '')))).toEqual(['dns UDP 30053'])
  })

  it('kube-proxy-1.37 names only a UDP port no service has: nothing is marked', async () => {
    const s = await read(text('nft/kube-proxy-1.37/input.nft'))
    expect(s.services.some((sp) => sp.frontends.some((f) => f.type === 'NodePort'))).toBe(true)
    expect(rejected(s)).toEqual([])
  })
})
