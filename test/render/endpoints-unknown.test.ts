/**
 * A service port whose traffic the source forwards, but none of whose endpoints could be read
 * (`nft -j list ruleset` of an iptables-nft node hides each DNAT in an `xt target`): the renderers
 * write it as kube-proxy writes a port without endpoints, a reject. That used to come with only
 * an info finding that the input was incomplete, so a migration would cut those services off
 * without an error; now each such port is a RENDER_ENDPOINTS_UNKNOWN error.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {readState} from '../../src/readers/read-state.js'
import {renderIptables} from '../../src/render/iptables/render.js'
import {renderNftables} from '../../src/render/nftables/render.js'

const read = async (path: string) =>
  readState({sources: [{path, text: readFileSync(path, 'utf8')}]})

describe('endpoints the source uses but does not show', () => {
  it('each port forwarded today without a known endpoint is an error finding of every renderer', async () => {
    const state = await read('fixtures/nft-json/iptables-nft-multipleservices-older/input.json')
    const hidden = state.services.filter(
      (sp) => sp.endpoints.length === 0 && sp.frontends.some((f) => f.action === 'forward'),
    )
    expect(hidden.length).toBeGreaterThan(0)
    for (const render of [renderNftables, renderIptables]) {
      const found = render(state, {}).findings.filter((f) => f.id === 'RENDER_ENDPOINTS_UNKNOWN')
      expect(found).toHaveLength(hidden.length)
      expect(found.every((f) => f.severity === 'error')).toBe(true)
    }
  })

  it('a port without endpoints that the source rejects is no such finding', async () => {
    // upstream-overall's ns6/svc6 has no endpoints and a REJECT rule: nothing is hidden.
    const state = await read('fixtures/iptables/upstream-overall/input.rules')
    expect(state.services.find((sp) => sp.name === 'svc6')).toMatchObject({endpoints: []})
    expect(renderNftables(state, {}).findings.map((f) => f.id)).not.toContain(
      'RENDER_ENDPOINTS_UNKNOWN',
    )
  })
})
