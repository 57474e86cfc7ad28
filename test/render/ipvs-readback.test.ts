/**
 * The IPVS renderer's files read back as one IPVS node (this kernel has no IPVS, so they cannot be
 * loaded as the iptables and nftables outputs are in test/roundtrip): the ipvsadm-restore input
 * as `ipvsadm -Sn`, the ipset restore input (create, flush, add) as `ipset save`, the
 * kube-ipvs0.sh commands (`ip addr add IP/32 dev kube-ipvs0`) as `ip addr`, and the companion
 * iptables-restore files. Rendering an IPVS state into IPVS and reading the files back gives the
 * same service ports and node settings. Before, the ipset reader warned on every `flush` line
 * and kube-ipvs0.sh was of no known format, so `kp diff STATE OUT-DIR` failed with exit 3.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {diffStates} from '../../src/analyze/diff.js'
import type {ProxyState} from '../../src/model/types.js'
import {readState} from '../../src/readers/read-state.js'
import {renderIpvs} from '../../src/render/ipvs/render.js'

describe.each([
  'fixtures/migrate/ipvs-node-a/state.json',
  'fixtures/migrate/ipvs-keepalived/state.json',
])('%s rendered into IPVS mode', (path) => {
  it('reads back from the rendered files with no difference', async () => {
    const state = await readState({sources: [{path, text: readFileSync(path, 'utf8')}]})
    expect(state.mode).toBe('ipvs')
    const rendered = renderIpvs(state as ProxyState, {})
    expect(rendered.files.map((f) => f.name)).toEqual(
      expect.arrayContaining(['ipvsadm-restore.txt', 'ipset-restore.txt', 'kube-ipvs0.sh']),
    )
    const back = await readState({
      sources: rendered.files.map((f) => ({path: f.name, text: f.text})),
    })
    expect(back.mode).toBe('ipvs')
    expect(
      back.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.message}`),
    ).toEqual([])
    const diff = diffStates(state, back)
    expect(diff.services).toEqual([])
    expect(diff.node).toEqual([])
    expect(diff.equal).toBe(true)
  })
})
