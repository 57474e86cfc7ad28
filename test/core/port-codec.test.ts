/**
 * Service ports as codes (src/core/port-codec.ts), how `kp diff`'s worker thread sends B: the
 * codes read back to the port, and two ports have the same codes only when every field diff
 * reads is the same (a field left out of the codes would make diffEncoded skip a difference).
 */
import {readdirSync, statSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {
  decodePort,
  encodePorts,
  PortEncoder,
  UnencodableValue,
  type EncodedPorts,
} from '../../src/core/port-codec.js'
import {serviceKey} from '../../src/core/state.js'
import type {ServicePort} from '../../src/model/types.js'
import {readFiles} from '../../src/readers/read-state.js'
import {ROOT} from '../helpers/run-cli.js'

const withoutRules = (sp: ServicePort): ServicePort => ({...sp, rules: []})
const encode = (ports: ServicePort[]): EncodedPorts => encodePorts(ports)
const matches = (sp: ServicePort, encoded: EncodedPorts, i = 0): boolean =>
  new PortEncoder().matches(sp, encoded, i)

function port(extra: Partial<ServicePort> = {}): ServicePort {
  return {
    namespace: 'ns1',
    name: 'svc1',
    portName: 'http',
    protocol: 'TCP',
    family: 'IPv4',
    frontends: [
      {
        type: 'LoadBalancer',
        ip: '192.0.2.7',
        port: 80,
        sourceRanges: ['203.0.113.0/24'],
        action: 'forward',
      },
    ],
    healthCheckNodePort: 30_123,
    internalTrafficPolicy: 'Cluster',
    externalTrafficPolicy: 'Local',
    sessionAffinity: {type: 'ClientIP', timeoutSeconds: 10_800},
    scheduler: 'rr',
    endpoints: [
      {ip: '10.244.1.5', port: 8080, local: true, share: 1 / 3, weight: 1, state: 'ready'},
    ],
    rules: [{path: 'x', line: 1}],
    ...extra,
  }
}

/** Every fixture input that reads into service ports. */
async function fixturePorts(): Promise<Array<{path: string; ports: ServicePort[]}>> {
  const inputs = readdirSync(`${ROOT}fixtures`, {recursive: true, encoding: 'utf8'})
    .map((p) => `fixtures/${p}`)
    .filter((p) => statSync(`${ROOT}${p}`).isFile() && !/\.md$|\.py$|expect/.test(p))
  const out: Array<{path: string; ports: ServicePort[]}> = []
  for (const path of inputs) {
    try {
      const {state} = await readFiles({files: [`${ROOT}${path}`]})
      if (state.services.length > 0) out.push({path, ports: state.services})
    } catch {
      // An input error: nothing to encode.
    }
  }
  return out
}

/** Each leaf of a port but its rules, changed to another value of its kind (a string, a number, true/false, or a value for a null). */
function* changedLeaves(sp: ServicePort): Generator<{path: string; port: ServicePort}> {
  const copy = (): ServicePort => structuredClone(sp)
  function* walk(value: unknown, path: Array<string | number>): Generator<Array<string | number>> {
    if (Array.isArray(value))
      for (let i = 0; i < value.length; i++) yield* walk(value[i], [...path, i])
    else if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) yield* walk(v, [...path, k])
    else yield path
  }
  for (const path of walk({...sp, rules: undefined}, [])) {
    if (path[0] === 'rules') continue
    const changed = copy()
    let holder = changed as unknown as Record<string | number, unknown>
    for (const k of path.slice(0, -1)) holder = holder[k] as Record<string | number, unknown>
    const last = path[path.length - 1]!
    const v = holder[last]
    holder[last] =
      typeof v === 'string'
        ? `${v}x`
        : typeof v === 'number'
          ? v + 1
          : typeof v === 'boolean'
            ? !v
            : typeof v === 'undefined'
              ? v
              : path.includes('endpoints') && last === 'local'
                ? true
                : 0
    if (typeof v === 'undefined') continue
    // A null string field gets a string, a null number a number; the codes tell null from both.
    if (
      v === null &&
      [
        'namespace',
        'name',
        'portName',
        'ip',
        'internalTrafficPolicy',
        'externalTrafficPolicy',
        'scheduler',
        'state',
      ].includes(String(last))
    )
      holder[last] = 'x'
    yield {path: path.join('.'), port: changed}
  }
  // Lists one longer.
  const longer = copy()
  longer.endpoints.push({
    ip: '10.0.0.1',
    port: 1,
    local: null,
    share: null,
    weight: null,
    state: null,
  })
  yield {path: 'endpoints+1', port: longer}
  const moreFrontends = copy()
  moreFrontends.frontends.push({
    type: 'ClusterIP',
    ip: '10.96.0.1',
    port: 1,
    sourceRanges: [],
    action: 'forward',
  })
  yield {path: 'frontends+1', port: moreFrontends}
  if (sp.frontends.length > 0) {
    const moreRanges = copy()
    moreRanges.frontends[0]!.sourceRanges.push('198.51.100.0/24')
    yield {path: 'frontends.0.sourceRanges+1', port: moreRanges}
  }
  const affinity = copy()
  affinity.sessionAffinity =
    sp.sessionAffinity === null ? {type: 'ClientIP', timeoutSeconds: null} : null
  yield {path: 'sessionAffinity', port: affinity}
}

describe('port codes', () => {
  it('read back to the port, without its rules, for every fixture input; and each port matches its own codes', async () => {
    const all = await fixturePorts()
    expect(all.length).toBeGreaterThan(50)
    for (const {path, ports} of all) {
      const encoded = encode(ports)
      expect(encoded.keys, path).toEqual(ports.map(serviceKey))
      expect(
        ports.map((_sp, i) => decodePort(encoded, i)),
        path,
      ).toStrictEqual(ports.map(withoutRules))
      const encoder = new PortEncoder()
      expect(
        ports.every((sp, i) => encoder.matches(sp, encoded, i)),
        path,
      ).toBe(true)
    }
  })

  it('differ when any field diff reads differs (every leaf of every fixture port, and lists one longer)', async () => {
    const failures: string[] = []
    let checked = 0
    for (const {path, ports} of await fixturePorts()) {
      const encoded = encode(ports)
      ports.forEach((sp, i) => {
        for (const changed of changedLeaves(sp)) {
          checked++
          if (matches(changed.port, encoded, i)) failures.push(`${path} port ${i}: ${changed.path}`)
        }
      })
    }
    expect(checked).toBeGreaterThan(1000)
    expect(failures).toEqual([])
  })

  it('cover every field of the model but rules (a made-up port with every field set)', () => {
    const sp = port()
    const encoded = encode([sp])
    expect(decodePort(encoded, 0)).toStrictEqual(withoutRules(sp))
    const fields = [...changedLeaves(sp)].map((c) => c.path)
    expect(fields).toEqual(
      expect.arrayContaining([
        'healthCheckNodePort',
        'scheduler',
        'sessionAffinity.timeoutSeconds',
        'endpoints.0.weight',
        'endpoints.0.state',
        'frontends.0.sourceRanges.0',
      ]),
    )
    for (const c of changedLeaves(sp)) expect(matches(c.port, encoded), c.path).toBe(false)
    // Rules are not compared by diff, and not in the codes.
    expect(matches({...sp, rules: []}, encoded)).toBe(true)
  })

  it('keep numbers bit for bit: -0, fractions, NaN, large and negative ports', () => {
    for (const share of [0, -0, 0.1, 1 / 3, Number.NaN, 1e-300]) {
      const sp = port({
        endpoints: [{ip: '10.0.0.1', port: 65_535, local: false, share, weight: -1, state: null}],
      })
      const encoded = encode([sp])
      expect(Object.is(decodePort(encoded, 0).endpoints[0]!.share, share), String(share)).toBe(true)
      expect(decodePort(encoded, 0).endpoints[0]!.weight).toBe(-1)
    }
    const zero = encode([port({healthCheckNodePort: 0})])
    expect(matches(port({healthCheckNodePort: -0}), zero)).toBe(false)
    expect(
      matches(port({healthCheckNodePort: 65_536}), encode([port({healthCheckNodePort: 65_535})])),
    ).toBe(false)
    expect(decodePort(encode([port({healthCheckNodePort: 70_000})]), 0).healthCheckNodePort).toBe(
      70_000,
    )
  })

  it('keep strings code unit by code unit, long ones and lone surrogates included', () => {
    const long = 'a'.repeat(70_000)
    for (const name of [long, '\ud800x', '😀', '']) {
      const sp = port({name})
      expect(decodePort(encode([sp]), 0).name).toBe(name)
    }
    expect(matches(port({name: 'svc'}), encode([port({name: null})]))).toBe(false)
    expect(matches(port({name: ''}), encode([port({name: null})]))).toBe(false)
  })

  it('refuse a value of the wrong type (UnencodableValue), and such a port matches nothing', () => {
    const bad = port({
      endpoints: [
        {
          ip: null as unknown as string,
          port: 1,
          local: null,
          share: null,
          weight: null,
          state: null,
        },
      ],
    })
    expect(() => encode([bad])).toThrow(UnencodableValue)
    expect(() => encode([port({healthCheckNodePort: '80' as unknown as number})])).toThrow(
      UnencodableValue,
    )
    expect(matches(bad, encode([port()]))).toBe(false)
  })

  it('decode garbled or cut codes as a RangeError, never a wrong port or a hang', () => {
    const encoded = encode([port(), port({name: 'svc2'})])
    const total = encoded.offsets[2]!
    let thrown = 0
    for (let cut = 0; cut < encoded.offsets[1]!; cut++) {
      expect(() => decodePort({...encoded, offsets: Int32Array.of(0, cut)}, 0)).toThrow(RangeError)
      thrown++
    }
    // Every code of the first port replaced by each tag and a large value: reads as some port or throws a RangeError.
    for (let at = 0; at < encoded.offsets[1]!; at++) {
      for (const v of [0, 1, 2, 3, 4, 5, 9, 0xffff]) {
        const codes = encoded.codes.slice()
        codes[at] = v
        try {
          decodePort({...encoded, codes}, 0)
        } catch (error) {
          expect(error).toBeInstanceOf(RangeError)
        }
      }
    }
    expect(thrown).toBeGreaterThan(0)
    expect(decodePort(encoded, 1).name).toBe('svc2')
    expect(total).toBe(encoded.codes.length)
  })
})
