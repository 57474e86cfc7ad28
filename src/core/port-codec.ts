/**
 * Service ports as one block of 16-bit codes: how `kp diff` gets B's ports from its worker thread
 * (src/readers/read-in-worker.ts) without JSON, and how it finds the ports A and B hold alike
 * without making B's objects (src/analyze/diff.ts diffEncoded).
 *
 * A port's codes are its fields in a fixed order, each tagged: two ports have the same codes
 * exactly when every field diff reads holds the same value (strings code unit by code unit,
 * numbers bit for bit). The codes also decode back to the port, so nothing else need be sent.
 * `rules` is not in them: diff does not compare positions in the sources (decoded ports have
 * none).
 *
 * Why not JSON: for the 10,000-service nft listing, copying in and parsing B's 13 MB of JSON on
 * the main thread, then comparing 10,000 equal pairs, took ~0.3–0.45 s after the main thread's
 * own read; encoding A's ports and comparing codes takes ~0.1 s (most of it reading A's
 * objects), and the codes cross threads without a copy (docs/benchmarks.md).
 */
import type {Endpoint, Frontend, ProxyState, ServicePort} from '../model/types.js'
import {serviceKey} from './state.js'

const NULL = 0
const STRING = 1
const SMALL_INT = 2
const NUMBER = 3
const TRUE = 4
const FALSE = 5

/** B's service ports as the worker sends them. */
export interface EncodedPorts {
  /** serviceKey of each port, in order. */
  keys: string[]
  /** Port i is codes[offsets[i]] up to codes[offsets[i + 1]]. */
  codes: Uint16Array<ArrayBuffer>
  offsets: Int32Array<ArrayBuffer>
}

/**
 * A state whose ports are still encoded, as `kp diff`'s worker thread sends B: `state.services`
 * is empty; the ports are in `ports`.
 */
export interface EncodedState {
  state: ProxyState
  ports: EncodedPorts
}

/** Thrown for a value of a type the model does not allow there (the state is not ProxyState-shaped). */
export class UnencodableValue extends Error {}

const float = new Float64Array(1)
const floatCodes = new Uint16Array(float.buffer)

/** Writes ports' codes into one growing buffer. */
export class PortEncoder {
  codes: Uint16Array<ArrayBuffer> = new Uint16Array(1 << 16)
  length = 0

  private room(n: number): Uint16Array<ArrayBuffer> {
    if (this.length + n > this.codes.length) {
      const grown = new Uint16Array(Math.max(this.codes.length * 2, this.length + n))
      grown.set(this.codes.subarray(0, this.length))
      this.codes = grown
    }
    return this.codes
  }

  private string(s: string | null): void {
    if (s === null) return this.tag(NULL)
    if (typeof s !== 'string') throw new UnencodableValue(`expected a string, found ${typeof s}`)
    const n = s.length
    const codes = this.room(n + 3)
    let at = this.length
    codes[at++] = STRING
    codes[at++] = n >>> 16
    codes[at++] = n & 0xffff
    for (let i = 0; i < n; i++) codes[at++] = s.charCodeAt(i)
    this.length = at
  }

  /** A string the model never leaves null. */
  private text(s: string): void {
    if (s === null) throw new UnencodableValue('expected a string, found null')
    this.string(s)
  }

  private number(v: number | null): void {
    if (v === null) return this.tag(NULL)
    if (typeof v !== 'number') throw new UnencodableValue(`expected a number, found ${typeof v}`)
    const codes = this.room(5)
    let at = this.length
    // Ports, counts and timeouts in one code; -0 is not 0 here (Object.is), as the bits would say.
    if ((v & 0xffff) === v && !Object.is(v, -0)) {
      codes[at++] = SMALL_INT
      codes[at++] = v
    } else {
      float[0] = v
      codes[at++] = NUMBER
      codes[at++] = floatCodes[0]!
      codes[at++] = floatCodes[1]!
      codes[at++] = floatCodes[2]!
      codes[at++] = floatCodes[3]!
    }
    this.length = at
  }

  private boolean(v: boolean | null): void {
    if (v === null) return this.tag(NULL)
    if (typeof v !== 'boolean')
      throw new UnencodableValue(`expected true or false, found ${typeof v}`)
    this.tag(v ? TRUE : FALSE)
  }

  private tag(code: number): void {
    this.room(1)[this.length++] = code
  }

  private frontend(f: Frontend): void {
    this.text(f.type)
    this.string(f.ip)
    this.number(f.port)
    this.number(f.sourceRanges.length)
    for (const r of f.sourceRanges) this.text(r)
    this.text(f.action)
  }

  private endpoint(e: Endpoint): void {
    this.text(e.ip)
    this.number(e.port)
    this.boolean(e.local)
    this.number(e.share)
    this.number(e.weight)
    this.string(e.state)
  }

  /** Appends one port's codes. Throws UnencodableValue (having written part of it) for a value of the wrong type. */
  port(sp: ServicePort): void {
    this.string(sp.namespace)
    this.string(sp.name)
    this.string(sp.portName)
    this.text(sp.protocol)
    this.text(sp.family)
    this.number(sp.frontends.length)
    for (const f of sp.frontends) this.frontend(f)
    this.number(sp.healthCheckNodePort)
    this.string(sp.internalTrafficPolicy)
    this.string(sp.externalTrafficPolicy)
    if (sp.sessionAffinity === null) this.tag(NULL)
    else {
      this.text(sp.sessionAffinity.type)
      this.number(sp.sessionAffinity.timeoutSeconds)
    }
    this.string(sp.scheduler)
    this.number(sp.endpoints.length)
    for (const e of sp.endpoints) this.endpoint(e)
  }

  /**
   * Whether `sp` has exactly the codes of port i of `encoded`: every field diff reads holds the
   * same value on both sides. A port that cannot be encoded matches nothing.
   */
  matches(sp: ServicePort, encoded: EncodedPorts, i: number): boolean {
    this.length = 0
    try {
      this.port(sp)
    } catch (error) {
      if (error instanceof UnencodableValue) return false
      throw error
    }
    const start = encoded.offsets[i]!
    const n = this.length
    if (encoded.offsets[i + 1]! - start !== n) return false
    const mine = this.codes
    const theirs = encoded.codes
    for (let k = 0; k < n; k++) if (mine[k] !== theirs[start + k]) return false
    return true
  }
}

/** Encodes ports, each with its serviceKey. Throws UnencodableValue for a port of the wrong shape. */
export function encodePorts(ports: readonly ServicePort[]): EncodedPorts {
  const encoder = new PortEncoder()
  const offsets = new Int32Array(ports.length + 1)
  const keys: string[] = []
  for (let i = 0; i < ports.length; i++) {
    const sp = ports[i]!
    keys.push(serviceKey(sp))
    encoder.port(sp)
    offsets[i + 1] = encoder.length
  }
  // Exactly the codes written: the buffer is handed to another thread whole.
  return {keys, codes: encoder.codes.slice(0, encoder.length), offsets}
}

/** The state as kp diff's worker sends it: its ports encoded, the rest as it is. */
export function encodeState(state: ProxyState): EncodedState {
  return {state: {...state, services: []}, ports: encodePorts(state.services)}
}

/** Reads port i back, with no rules. Throws a RangeError on codes that are not a port's. */
export function decodePort(encoded: EncodedPorts, i: number): ServicePort {
  const codes = encoded.codes
  let at = encoded.offsets[i]!
  const end = encoded.offsets[i + 1]!
  const next = (): number => {
    if (at >= end) throw new RangeError(`port ${i}: codes end early`)
    return codes[at++]!
  }
  const string = (): string | null => {
    const tag = next()
    if (tag === NULL) return null
    if (tag !== STRING) throw new RangeError(`port ${i}: expected a string, found code ${tag}`)
    return chars()
  }
  const text = (): string => {
    const tag = next()
    if (tag !== STRING) throw new RangeError(`port ${i}: expected a string, found code ${tag}`)
    return chars()
  }
  const chars = (): string => {
    const n = next() * 0x10000 + next()
    if (at + n > end) throw new RangeError(`port ${i}: string runs past the port`)
    let s = ''
    // In pieces: fromCharCode takes its codes as arguments.
    for (let from = at; from < at + n; from += 8192)
      s += String.fromCharCode.apply(
        null,
        codes.subarray(from, Math.min(at + n, from + 8192)) as unknown as number[],
      )
    at += n
    return s
  }
  const number = (): number | null => {
    const tag = next()
    if (tag === NULL) return null
    if (tag === SMALL_INT) return next()
    if (tag !== NUMBER) throw new RangeError(`port ${i}: expected a number, found code ${tag}`)
    for (let k = 0; k < 4; k++) floatCodes[k] = next()
    return float[0]!
  }
  const boolean = (): boolean | null => {
    const tag = next()
    if (tag === NULL) return null
    if (tag === TRUE || tag === FALSE) return tag === TRUE
    throw new RangeError(`port ${i}: expected true or false, found code ${tag}`)
  }
  const count = (): number => number() ?? 0
  // The model's unions are what the encoder was given: its own output is read back.
  const namespace = string()
  const name = string()
  const portName = string()
  const protocol = text() as ServicePort['protocol']
  const family = text() as ServicePort['family']
  const frontends: Frontend[] = []
  for (let n = count(); n > 0; n--) {
    const type = text() as Frontend['type']
    const ip = string()
    const port = number()
    const sourceRanges: string[] = []
    for (let r = count(); r > 0; r--) sourceRanges.push(text())
    frontends.push({type, ip, port, sourceRanges, action: text() as Frontend['action']})
  }
  const healthCheckNodePort = number()
  const internalTrafficPolicy = string() as ServicePort['internalTrafficPolicy']
  const externalTrafficPolicy = string() as ServicePort['externalTrafficPolicy']
  let sessionAffinity: ServicePort['sessionAffinity'] = null
  if (at < end && codes[at] === NULL) at++
  else sessionAffinity = {type: text() as 'ClientIP', timeoutSeconds: number()}
  const scheduler = string()
  const endpoints: Endpoint[] = []
  for (let n = count(); n > 0; n--) {
    endpoints.push({
      ip: text(),
      port: number(),
      local: boolean(),
      share: number(),
      weight: number(),
      state: string() as Endpoint['state'],
    })
  }
  if (at !== end) throw new RangeError(`port ${i}: ${end - at} codes left over`)
  return {
    namespace,
    name,
    portName,
    protocol,
    family,
    frontends,
    healthCheckNodePort,
    internalTrafficPolicy,
    externalTrafficPolicy,
    sessionAffinity,
    scheduler,
    endpoints,
    rules: [],
  }
}
