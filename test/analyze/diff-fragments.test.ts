/**
 * `kp diff` between a full dump and a fragment of it (issue 21 §2): what the fragment cannot
 * show is unknown, never a difference. The fragments are cut from shipped fixtures here.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import {formatDiff} from '../../src/cli/views/diff.js'
import type {ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import {ROOT} from '../helpers/run-cli.js'

const fixture = (path: string) => readFileSync(join(ROOT, path), 'utf8')
const read = (text: string, path: string): Promise<ProxyState> =>
  readState({sources: [{path, text}]})

const CNI = fixture('fixtures/iptables/handmade-node-with-cni/input.rules')
const NFT = fixture('fixtures/nft/upstream-overall/input.nft')

/** `grep -- '-A KUBE'` of the dump, without the lines `drop` picks. */
function grepRules(drop: (line: string) => boolean): string {
  return CNI.split('\n')
    .filter((l) => l.includes('-A KUBE'))
    .map((l) => l.replace(/^\[\d+:\d+\] /, ''))
    .filter((l) => !drop(l))
    .join('\n')
}

describe('kp diff: a full dump against a fragment of it', () => {
  it('iptables without KUBE-SVL: no locality difference, the NodePort is unknown', async () => {
    const full = await read(CNI, 'full.rules')
    const fragment = await read(
      grepRules((l) => l.startsWith('-A KUBE-SVL-')),
      'fragment.rules',
    )
    const result = diffStates(full, fragment)
    expect(result.services).toEqual([])
    expect(result.equal).toBe(false)
    expect(result.unknown).toEqual([
      {
        service: 'team/api:grpc/tcp',
        side: 'b',
        fields: [{field: 'frontends[NodePort *:31000].action', a: null, b: 'unknown'}],
        missing: ['KUBE-SVL-ZROLNW67U6B7G27Z'],
        collect: 'iptables-save -t nat',
      },
    ])
    const text = formatDiff(result, {color: false})
    expect(text).toContain('(unknown: KUBE-SVL-ZROLNW67U6B7G27Z not in b')
    expect(text).not.toMatch(/^\s+[-+] /m)
  })

  it('nftables grep of one service: the others are unknown in the fragment, not removed', async () => {
    const full = await read(NFT, 'full.nft')
    const grep = NFT.split('\n')
      .filter((l) => l.includes('ns2/svc2'))
      .join('\n')
    const result = diffStates(full, await read(grep, 'svc2.nft'))
    expect(result.services).toEqual([])
    expect(result.unknown.map((u) => [u.service, u.side])).toEqual([
      ['ns1/svc1:p80/tcp', 'b'],
      ['ns3/svc3:p80/tcp', 'b'],
      ['ns4/svc4:p80/tcp', 'b'],
      ['ns5/svc5:p80/tcp', 'b'],
      ['ns6/svc6:p80/tcp', 'b'],
    ])
  })

  it('nftables without an endpoint chain: the endpoint is unknown in the fragment (either order)', async () => {
    const ep = 'endpoint-UNZV3OEC-ns4/svc4/tcp/p80__10.180.0.4/80'
    const full = await read(NFT, 'full.nft')
    const fragment = await read(
      NFT.split('\n')
        .filter(
          (l) =>
            l !== `add chain ip kube-proxy ${ep}` && !l.startsWith(`add rule ip kube-proxy ${ep} `),
        )
        .join('\n'),
      'fragment.nft',
    )
    for (const [a, b, side] of [
      [full, fragment, 'b'],
      [fragment, full, 'a'],
    ] as const) {
      const result = diffStates(a, b)
      expect(result.services).toEqual([])
      expect(result.unknown).toHaveLength(1)
      expect(result.unknown[0]).toMatchObject({service: 'ns4/svc4:p80/tcp', side, missing: [ep]})
      expect(result.unknown[0]!.fields.map((f) => f.field)).toContain('endpoint')
    }
  })

  it('two complete dumps: nothing is unknown', async () => {
    const full = await read(NFT, 'full.nft')
    const result = diffStates(full, await read(NFT, 'again.nft'))
    expect(result).toMatchObject({equal: true, services: [], unknown: []})
  })
})
