/**
 * A ProxyState saved by `kp ... --json`, read back so output can be piped into kp again
 * (docs/model.md). Checked field by field against src/model/types.ts, never trusted: a missing
 * field, a wrong type or an unknown enum value is an error at its line; nothing is filled in.
 * Members the model does not have are reported as warnings and left out. A valid state costs
 * one JSON.parse and one walk; lines are worked out (../json-lines.ts) only when there is a
 * problem to report.
 */
import {isCidr, isIp, isIpOrCidr} from '../../core/address.js'
import {isRedacted} from '../../core/redaction.js'
import type {Diagnostic, Endpoint, ProxyState} from '../../model/types.js'
import type {ParsedSource, SourceText} from '../types.js'
import {parseJsonWithLines} from '../json-lines.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {SEVERITIES} from '../../catalog/severity.js'

/**
 * Where a value sits: a chain of member names and indexes from the root. Labels and lines are
 * worked out only for values that have a problem, so a large valid state costs one JSON.parse
 * and one walk.
 */
interface At {
  parent: At | null
  key: string | number
}

/** A field reader returns the checked value, or BAD after recording why. */
const BAD = Symbol('bad')
type Reader<T> = (value: unknown, at: At, ctx: Context) => T | typeof BAD

interface Problem {
  severity: 'error' | 'warning'
  code: DiagnosticCode
  at: At
  message: string
  /** A missing member is reported at the line of the object that lacks it. */
  missing: boolean
}

interface Context {
  problems: Problem[]
}

function child(parent: At, key: string | number): At {
  return {parent, key}
}

function keysOf(at: At): Array<string | number> {
  const keys: Array<string | number> = []
  for (let a: At | null = at; a !== null && a.parent !== null; a = a.parent) keys.push(a.key)
  return keys.reverse()
}

/** `services[2].frontends[0].port` */
function labelOf(keys: Array<string | number>): string {
  return keys.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('')
}

function problem(
  ctx: Context,
  severity: Problem['severity'],
  code: DiagnosticCode,
  at: At,
  message: string,
  missing = false,
): void {
  ctx.problems.push({severity, code, at, message, missing})
}

/** A value as JSON for a message; one nested too deep for JSON.stringify (a RangeError) is only named. */
function shown(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Array.isArray(value)
      ? 'an array nested too deep to show'
      : 'an object nested too deep to show'
  }
}

function bad(ctx: Context, at: At, expected: string, value: unknown): typeof BAD {
  problem(ctx, 'error', 'KPJSON_BAD_FIELD', at, `expected ${expected}, found ${shown(value)}`)
  return BAD
}

const str: Reader<string> = (v, at, ctx) =>
  typeof v === 'string' ? v : bad(ctx, at, 'a string', v)
const bool: Reader<boolean> = (v, at, ctx) =>
  typeof v === 'boolean' ? v : bad(ctx, at, 'true or false', v)
/** A flag written only when set (`redacted: true`). */
const isTrue: Reader<true> = (v, at, ctx) => (v === true ? true : bad(ctx, at, 'true', v))

function int(min: number, max: number): Reader<number> {
  return (v, at, ctx) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? v
      : bad(ctx, at, `an integer from ${min} to ${max}`, v)
}

const probability: Reader<number> = (v, at, ctx) =>
  typeof v === 'number' && v >= 0 && v <= 1 ? v : bad(ctx, at, 'a number from 0 to 1', v)

function oneOf<T extends string>(...options: T[]): Reader<T> {
  return (v, at, ctx) =>
    options.includes(v as T)
      ? (v as T)
      : bad(ctx, at, `one of ${options.map((o) => JSON.stringify(o)).join(', ')}`, v)
}

function literal<T extends string | number>(
  expected: T,
  code: DiagnosticCode,
  message: string,
): Reader<T> {
  return (v, at, ctx) => {
    if (v === expected) return expected
    problem(ctx, 'error', code, at, `${message} (found ${shown(v)})`)
    return BAD
  }
}

function nullable<T>(read: Reader<T>): Reader<T | null> {
  return (v, at, ctx) => (v === null ? null : read(v, at, ctx))
}

/**
 * A member added to schemaVersion 1 after its first release (docs/model.md marks them): states
 * saved before it lack it, so a missing one is left out, not an error.
 */
const OPTIONAL = new WeakSet<Reader<unknown>>()
function optional<T>(read: Reader<T>): Reader<T | undefined> {
  const reader: Reader<T | undefined> = (v, at, ctx) => read(v, at, ctx)
  OPTIONAL.add(reader)
  return reader
}

function list<T>(read: Reader<T>): Reader<T[]> {
  return (v, at, ctx) => {
    if (!Array.isArray(v)) return bad(ctx, at, 'an array', v)
    const out: T[] = []
    let failed = false
    for (let i = 0; i < v.length; i++) {
      const r = read(v[i], child(at, i), ctx)
      if (r === BAD) failed = true
      else out.push(r)
    }
    return failed ? BAD : out
  }
}

/**
 * A list whose bad items are left out (each problem is still reported): one damaged service port
 * of a saved state leaves the others readable, and the state is marked incomplete.
 */
function listKeepingGood<T>(read: Reader<T>): Reader<T[]> {
  return (v, at, ctx) => {
    if (!Array.isArray(v)) return bad(ctx, at, 'an array', v)
    const out: T[] = []
    for (let i = 0; i < v.length; i++) {
      const r = read(v[i], child(at, i), ctx)
      if (r !== BAD) out.push(r)
    }
    return out
  }
}

type Shape<T> = {[K in keyof T]-?: Reader<T[K]>}

/** An object with exactly these members: missing ones are errors, unknown ones warnings. */
function object<T>(shape: Shape<T>): Reader<T> {
  const expected = Object.keys(shape) as Array<keyof T & string>
  return (v, at, ctx) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad(ctx, at, 'an object', v)
    const given = v as Record<string, unknown>
    const out: Record<string, unknown> = {}
    let failed = false
    for (const key of expected) {
      if (!Object.hasOwn(given, key)) {
        if (OPTIONAL.has(shape[key] as Reader<unknown>)) continue
        problem(
          ctx,
          'error',
          'KPJSON_MISSING_FIELD',
          child(at, key),
          'missing (every field of the model is required; null where a value is unknown)',
          true,
        )
        failed = true
        continue
      }
      const r = (shape[key] as Reader<unknown>)(given[key], child(at, key), ctx)
      if (r === BAD) failed = true
      else out[key] = r
    }
    for (const key of Object.keys(given)) {
      if (!Object.hasOwn(shape, key))
        problem(
          ctx,
          'warning',
          'KPJSON_UNKNOWN_FIELD',
          child(at, key),
          'not part of the ProxyState model; ignored',
        )
    }
    return failed ? BAD : (out as T)
  }
}

const ip: Reader<string> = (v, at, ctx) =>
  typeof v === 'string' && isIp(v) ? v : bad(ctx, at, 'an IP address', v)

/**
 * A frontend's or endpoint's address: an IP, null, or a redaction placeholder put in by hand
 * before the state was shared (`x.x.x.x`, src/core/redaction.ts), read as null with a warning.
 */
const ipOrRedacted: Reader<string | null> = (v, at, ctx) => {
  if (v === null) return null
  if (typeof v === 'string' && !isIp(v) && isRedacted(v)) {
    problem(ctx, 'warning', 'INPUT_REDACTED', at, `${shown(v)} is redacted; read as null`)
    return null
  }
  return ip(v, at, ctx)
}

/** Marks `redacted` the objects whose address a placeholder hid (ipOrRedacted made it null). */
function withRedaction<T extends {ip: string | null; redacted?: true}>(read: Reader<T>): Reader<T> {
  return (v, at, ctx) => {
    const r = read(v, at, ctx)
    if (r === BAD || r.ip !== null) return r
    const given = (v as {ip?: unknown}).ip
    return typeof given === 'string' ? {...r, redacted: true} : r
  }
}

/** `10.0.0.0/8`, `fd00::/64`; with `bare` also a plain address (nodePortAddresses holds both). */
function cidr(bare: boolean): Reader<string> {
  return (v, at, ctx) =>
    typeof v === 'string' && (bare ? isIpOrCidr(v) : isCidr(v))
      ? v
      : bad(ctx, at, bare ? 'an IP address or CIDR' : 'a CIDR', v)
}

const port = int(0, 65535)
const incomplete = optional(object({missing: list(str), collect: str}))
const sourceRef = object({path: str, line: int(1, Number.MAX_SAFE_INTEGER)})

const endpoint = withRedaction(
  object<Endpoint>({
    // null only for an address the input redacted.
    ip: ipOrRedacted,
    port: nullable(port),
    local: nullable(bool),
    share: nullable(probability),
    weight: nullable(int(0, Number.MAX_SAFE_INTEGER)),
    state: nullable(oneOf('ready', 'serving-terminating', 'draining')),
    redacted: optional(isTrue),
  }),
)

const readState: Reader<ProxyState> = object<ProxyState>({
  schemaVersion: literal(1, 'KPJSON_SCHEMA_VERSION', 'unsupported schemaVersion; this kp reads 1'),
  kind: literal('ProxyState', 'KPJSON_NOT_STATE', 'not a kp ProxyState'),
  mode: oneOf('iptables', 'ipvs', 'nftables', 'cluster'),
  sources: list(object({path: str, format: str, tool: nullable(str)})),
  node: object({
    name: nullable(str),
    podCIDRs: list(cidr(false)),
    localDetector: nullable(oneOf('cidr', 'interface', 'interface-prefix', 'none')),
    localInterface: nullable(str),
    masqueradeMark: nullable(str),
    masqueradeAll: nullable(bool),
    randomFully: nullable(bool),
    localhostNodePorts: nullable(bool),
    nodePortAddresses: nullable(list(cidr(true))),
    conntrackInvalidDrop: nullable(bool),
    kernel: nullable(str),
    nftVersion: nullable(str),
    iptablesBackends: nullable(list(str)),
    otherTables: optional(nullable(list(str))),
    otherChains: optional(nullable(list(str))),
    view: optional(oneOf('node', 'cluster-wide')),
    kubeProxyLayouts: optional(list(str)),
  }),
  services: listKeepingGood(
    object({
      namespace: nullable(str),
      name: nullable(str),
      portName: nullable(str),
      protocol: oneOf('TCP', 'UDP', 'SCTP'),
      family: oneOf('IPv4', 'IPv6'),
      frontends: list(
        withRedaction(
          object({
            type: oneOf('ClusterIP', 'NodePort', 'ExternalIP', 'LoadBalancer', 'External'),
            ip: ipOrRedacted,
            port: nullable(port),
            sourceRanges: list(cidr(false)),
            redactedSourceRanges: optional(list(str)),
            action: oneOf('forward', 'reject', 'drop'),
            redacted: optional(isTrue),
            nodeSourceExcluded: optional(bool),
            outsideRangesMarkedForDrop: optional(bool),
            noLocalMarkedForDrop: optional(bool),
            localhostRejected: optional(isTrue),
            forwardedOnNodes: optional(list(str)),
            endpoints: optional(list(endpoint)),
            incomplete,
          }),
        ),
      ),
      healthCheckNodePort: nullable(port),
      internalTrafficPolicy: nullable(oneOf('Cluster', 'Local')),
      externalTrafficPolicy: nullable(oneOf('Cluster', 'Local')),
      sessionAffinity: nullable(
        object({
          type: oneOf('ClientIP'),
          timeoutSeconds: nullable(int(0, Number.MAX_SAFE_INTEGER)),
        }),
      ),
      scheduler: nullable(str),
      externalFromNode: optional(oneOf('cluster', 'policy')),
      endpoints: list(endpoint),
      rules: list(sourceRef),
      incomplete,
    }),
  ),
  foreign: list(object({kind: str, name: str, reason: str, source: nullable(sourceRef)})),
  diagnostics: list(
    object({
      severity: oneOf(...SEVERITIES),
      code: str,
      message: str,
      source: nullable(sourceRef),
    }),
  ),
  complete: optional(bool),
})

/**
 * The line of each problem, from a second, position-keeping parse of the same text: the line
 * of the member (or of the object that lacks it).
 */
function locate(text: string, problems: Problem[], path: string): Diagnostic[] {
  const parsed = parseJsonWithLines(text)
  const linesOf = (keys: Array<string | number>, missing: boolean): number => {
    if (!parsed.ok || keys.length === 0) return 1
    let container: unknown = parsed.value
    for (const key of keys.slice(0, -1))
      container = (container as Record<string | number, unknown>)[key]
    const info =
      typeof container === 'object' && container !== null ? parsed.lines.get(container) : undefined
    if (!info) return 1
    if (missing) return info.line
    const last = keys[keys.length - 1]!
    return (
      (Object.hasOwn(info.members, last)
        ? (info.members as Record<string | number, number>)[last]
        : undefined) ?? info.line
    )
  }
  return problems.map((p) => {
    const keys = keysOf(p.at)
    return {
      severity: p.severity,
      code: p.code,
      message: `${labelOf(keys)}: ${p.message}`,
      source: {path, line: linesOf(keys, p.missing)},
    }
  })
}

/**
 * Reads a saved ProxyState; `data` is null when any error was found outside a service port (every
 * error is reported, with its line). A bad service port is left out and the rest is read.
 */
export function parse(src: SourceText): ParsedSource<ProxyState | null> {
  const source = {path: src.path, format: 'kp-json', tool: src.tool ?? null}
  const failed = (diagnostics: Diagnostic[]): ParsedSource<null> => ({
    format: 'kp-json',
    source,
    data: null,
    diagnostics,
  })
  // A UTF-8 byte-order mark is not JSON, but editors write one; it changes no line.
  const text = src.text.charCodeAt(0) === 0xfeff ? src.text.slice(1) : src.text
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    // JSON.parse's messages differ between Node versions and give offsets; ours give lines.
    const located = parseJsonWithLines(text)
    const message = located.ok ? 'not valid JSON' : `not valid JSON: ${located.message}`
    return failed([
      {
        severity: 'error',
        code: 'KPJSON_SYNTAX',
        message,
        source: {path: src.path, line: located.ok ? 1 : located.line},
      },
    ])
  }
  const root: At = {parent: null, key: ''}
  const ctx: Context = {problems: []}
  const record = value as Record<string, unknown> | null
  // Say "not a ProxyState" once instead of a wall of missing fields for some other JSON.
  if (
    typeof record !== 'object' ||
    record === null ||
    Array.isArray(record) ||
    record.kind !== 'ProxyState'
  ) {
    const kind =
      typeof record === 'object' && record !== null && !Array.isArray(record)
        ? (record.kind ?? null)
        : null
    problem(
      ctx,
      'error',
      'KPJSON_NOT_STATE',
      child(root, 'kind'),
      `not a kp ProxyState (kind is ${shown(kind)}, expected "ProxyState")`,
      kind === null,
    )
    return failed(locate(text, ctx.problems, src.path))
  }
  const state = readState(record, root, ctx)
  const diagnostics = ctx.problems.length > 0 ? locate(text, ctx.problems, src.path) : []
  if (state === BAD) return failed(diagnostics)
  return {format: 'kp-json', source, data: state, diagnostics}
}
