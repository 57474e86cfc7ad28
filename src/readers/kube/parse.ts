/**
 * Stage 1 of the cluster-objects reader: Kubernetes YAML or JSON (a `List` or `*List` with
 * `items`, a multi-document YAML stream, or single objects) -> the Service, EndpointSlice and
 * legacy Endpoints fields kube-proxy reads (docs/ipvs-layouts.md c.1-c.4), each
 * with the line of the object it came from. JSON goes through JSON.parse plus a one-pass scan
 * for the items' lines; JSON that JSON.parse refuses falls through to the YAML parser (JSON is
 * YAML 1.2), which positions the error. Never throws: what it cannot read is a KUBE_* diagnostic.
 *
 * src/readers/kube/ is the only place that imports `yaml` (docs/architecture.md).
 */
import {LineCounter, isMap, isScalar, isSeq, parseAllDocuments, parseDocument} from 'yaml'
import type {Document, Node as YamlNode} from 'yaml'
import {diag} from '../../core/state.js'
import {isBlank} from '../../core/text.js'
import type {Diagnostic, Protocol, Severity, SourceRef} from '../../model/types.js'
import type {ParsedSource, SourceText} from '../types.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {cutJsonList, cutYamlList, type CutList} from './truncated.js'

import type {
  KubeServicePort,
  KubeLoadBalancerIngress,
  KubeSlicePort,
  KubeSliceEndpoint,
  KubeLegacyEndpoints,
  KubeObjects,
} from './objects.js'

export type {
  KubeServicePort,
  KubeLoadBalancerIngress,
  KubeService,
  KubeSlicePort,
  KubeSliceEndpoint,
  KubeEndpointSlice,
  KubeLegacyEndpoints,
  KubeObjects,
} from './objects.js'

// ---------------------------------------------------------------------------------------------
// Small typed accessors over toJS() output; each problem becomes a diagnostic at the object's line.

type Json = unknown
type Obj = Record<string, Json>

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

class ObjectReader {
  constructor(
    private readonly out: Diagnostic[],
    readonly ref: SourceRef,
    readonly what: string,
  ) {}

  report(severity: Severity, code: DiagnosticCode, message: string): void {
    this.out.push(diag(severity, code, `${this.what}: ${message}`, this.ref))
  }

  obj(v: Json, field: string): Obj {
    if (v === undefined || v === null) return {}
    if (isObj(v)) return v
    this.report('warning', 'KUBE_BAD_FIELD', `${field} is not a mapping; ignored`)
    return {}
  }

  list(v: Json, field: string): Json[] {
    if (v === undefined || v === null) return []
    if (Array.isArray(v)) return v
    this.report('warning', 'KUBE_BAD_FIELD', `${field} is not a list; ignored`)
    return []
  }

  str(v: Json, field: string): string | null {
    if (v === undefined || v === null) return null
    if (typeof v === 'string') return v
    // YAML turns unquoted 1.2 or true into numbers and booleans; Kubernetes would have quoted them.
    if (typeof v === 'number' || typeof v === 'boolean') return String(v)
    this.report('warning', 'KUBE_BAD_FIELD', `${field} is not a string; ignored`)
    return null
  }

  strings(v: Json, field: string): string[] {
    const out: string[] = []
    for (const [i, x] of this.list(v, field).entries()) {
      const s = this.str(x, `${field}[${i}]`)
      if (s !== null) out.push(s)
    }
    return out
  }

  labels(v: Json): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [k, x] of Object.entries(this.obj(v, 'metadata.labels')))
      out[k] = this.str(x, `label ${k}`) ?? ''
    return out
  }

  /** An integer in 0..65535, or null when absent or invalid (invalid is reported). */
  port(v: Json, field: string): number | null {
    if (v === undefined || v === null) return null
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 65535) return v
    this.report(
      'warning',
      'KUBE_BAD_PORT',
      `${field} ${JSON.stringify(v)} is not a port number; ignored`,
    )
    return null
  }

  bool(v: Json, field: string): boolean | null {
    if (v === undefined || v === null) return null
    if (typeof v === 'boolean') return v
    this.report(
      'warning',
      'KUBE_BAD_FIELD',
      `${field} ${JSON.stringify(v)} is not true or false; treated as absent`,
    )
    return null
  }

  protocol(v: Json, field: string): Protocol | null {
    // The API defaults an absent protocol to TCP (Service ports and EndpointSlice ports alike).
    if (v === undefined || v === null) return 'TCP'
    if (v === 'TCP' || v === 'UDP' || v === 'SCTP') return v
    this.report(
      'warning',
      'KUBE_BAD_PROTOCOL',
      `${field} ${JSON.stringify(v)} is not TCP, UDP or SCTP; port ignored`,
    )
    return null
  }
}

// ---------------------------------------------------------------------------------------------
// Object readers.

function readService(o: Obj, r: ObjectReader, meta: Obj, out: KubeObjects): void {
  const spec = r.obj(o.spec, 'spec')
  const status = r.obj(o.status, 'status')
  const ports: KubeServicePort[] = []
  for (const [i, p] of r.list(spec.ports, 'spec.ports').entries()) {
    const po = r.obj(p, `spec.ports[${i}]`)
    const protocol = r.protocol(po.protocol, `spec.ports[${i}].protocol`)
    const port = r.port(po.port, `spec.ports[${i}].port`)
    if (protocol === null) continue
    if (port === null || port === 0) {
      r.report('warning', 'KUBE_BAD_PORT', `spec.ports[${i}] has no port; ignored`)
      continue
    }
    ports.push({
      name: r.str(po.name, `spec.ports[${i}].name`) ?? '',
      protocol,
      port,
      nodePort: r.port(po.nodePort, `spec.ports[${i}].nodePort`) ?? 0,
    })
  }
  const clusterIP = r.str(spec.clusterIP, 'spec.clusterIP')
  let clusterIPs = r.strings(spec.clusterIPs, 'spec.clusterIPs')
  if (clusterIPs.length === 0 && clusterIP !== null && clusterIP !== '') clusterIPs = [clusterIP]
  const lb = r.obj(status.loadBalancer, 'status.loadBalancer')
  const ingress: KubeLoadBalancerIngress[] = []
  for (const [i, x] of r.list(lb.ingress, 'status.loadBalancer.ingress').entries()) {
    const io = r.obj(x, `status.loadBalancer.ingress[${i}]`)
    const ip = r.str(io.ip, `status.loadBalancer.ingress[${i}].ip`)
    // Hostname-only ingress entries (AWS ELB) have no ip; kube-proxy skips them.
    if (ip) ingress.push({ip, ipMode: r.str(io.ipMode, `status.loadBalancer.ingress[${i}].ipMode`)})
  }
  const affinity = r.obj(
    r.obj(spec.sessionAffinityConfig, 'spec.sessionAffinityConfig').clientIP,
    'spec.sessionAffinityConfig.clientIP',
  )
  const timeout = affinity.timeoutSeconds
  let affinityTimeoutSeconds: number | null = null
  if (typeof timeout === 'number' && Number.isInteger(timeout) && timeout > 0)
    affinityTimeoutSeconds = timeout
  else if (timeout !== undefined && timeout !== null)
    r.report(
      'warning',
      'KUBE_BAD_FIELD',
      `sessionAffinityConfig.clientIP.timeoutSeconds ${JSON.stringify(timeout)} is not a positive integer; the default 10800 is used`,
    )
  out.services.push({
    ref: r.ref,
    namespace: r.str(meta.namespace, 'metadata.namespace') ?? 'default',
    name: r.str(meta.name, 'metadata.name') ?? '',
    labels: r.labels(meta.labels),
    type: r.str(spec.type, 'spec.type') ?? 'ClusterIP',
    clusterIPs,
    ports,
    externalIPs: r.strings(spec.externalIPs, 'spec.externalIPs'),
    loadBalancerIngress: ingress,
    loadBalancerSourceRanges: r.strings(
      spec.loadBalancerSourceRanges,
      'spec.loadBalancerSourceRanges',
    ),
    externalTrafficPolicy: r.str(spec.externalTrafficPolicy, 'spec.externalTrafficPolicy'),
    internalTrafficPolicy: r.str(spec.internalTrafficPolicy, 'spec.internalTrafficPolicy'),
    healthCheckNodePort: r.port(spec.healthCheckNodePort, 'spec.healthCheckNodePort') ?? 0,
    sessionAffinity: r.str(spec.sessionAffinity, 'spec.sessionAffinity') ?? 'None',
    affinityTimeoutSeconds,
  })
}

function readSlicePorts(r: ObjectReader, v: Json, field: string): KubeSlicePort[] {
  const ports: KubeSlicePort[] = []
  for (const [i, p] of r.list(v, field).entries()) {
    const po = r.obj(p, `${field}[${i}]`)
    const protocol = r.protocol(po.protocol, `${field}[${i}].protocol`)
    if (protocol === null) continue
    const port = r.port(po.port, `${field}[${i}].port`)
    ports.push({
      name: r.str(po.name, `${field}[${i}].name`),
      protocol,
      port: port === 0 ? null : port,
    })
  }
  return ports
}

function hintNames(r: ObjectReader, v: Json, field: string): string[] {
  const names: string[] = []
  for (const [i, h] of r.list(v, field).entries()) {
    const n = r.str(r.obj(h, `${field}[${i}]`).name, `${field}[${i}].name`)
    if (n !== null) names.push(n)
  }
  return names
}

function readEndpointSlice(o: Obj, r: ObjectReader, meta: Obj, out: KubeObjects): void {
  const endpoints: KubeSliceEndpoint[] = []
  for (const [i, e] of r.list(o.endpoints, 'endpoints').entries()) {
    const eo = r.obj(e, `endpoints[${i}]`)
    const cond = r.obj(eo.conditions, `endpoints[${i}].conditions`)
    const hints = r.obj(eo.hints, `endpoints[${i}].hints`)
    endpoints.push({
      addresses: r.strings(eo.addresses, `endpoints[${i}].addresses`),
      ready: r.bool(cond.ready, `endpoints[${i}].conditions.ready`),
      serving: r.bool(cond.serving, `endpoints[${i}].conditions.serving`),
      terminating: r.bool(cond.terminating, `endpoints[${i}].conditions.terminating`),
      nodeName: r.str(eo.nodeName, `endpoints[${i}].nodeName`),
      zone: r.str(eo.zone, `endpoints[${i}].zone`),
      zoneHints: hintNames(r, hints.forZones, `endpoints[${i}].hints.forZones`),
      nodeHints: hintNames(r, hints.forNodes, `endpoints[${i}].hints.forNodes`),
    })
  }
  out.slices.push({
    ref: r.ref,
    namespace: r.str(meta.namespace, 'metadata.namespace') ?? 'default',
    name: r.str(meta.name, 'metadata.name') ?? '',
    labels: r.labels(meta.labels),
    addressType: r.str(o.addressType, 'addressType') ?? '',
    ports: readSlicePorts(r, o.ports, 'ports'),
    endpoints,
    synthesizedFrom: null,
  })
}

function readLegacyEndpoints(o: Obj, r: ObjectReader, meta: Obj, out: KubeObjects): void {
  const subsets: KubeLegacyEndpoints['subsets'] = []
  const addresses = (v: Json, field: string) => {
    const list: Array<{ip: string; nodeName: string | null}> = []
    for (const [i, a] of r.list(v, field).entries()) {
      const ao = r.obj(a, `${field}[${i}]`)
      const ip = r.str(ao.ip, `${field}[${i}].ip`)
      if (ip) list.push({ip, nodeName: r.str(ao.nodeName, `${field}[${i}].nodeName`)})
    }
    return list
  }
  for (const [i, s] of r.list(o.subsets, 'subsets').entries()) {
    const so = r.obj(s, `subsets[${i}]`)
    subsets.push({
      addresses: addresses(so.addresses, `subsets[${i}].addresses`),
      notReadyAddresses: addresses(so.notReadyAddresses, `subsets[${i}].notReadyAddresses`),
      // Endpoints ports have an optional name; an absent one means the single unnamed port "".
      ports: readSlicePorts(r, so.ports, `subsets[${i}].ports`).map((p) => ({
        ...p,
        name: p.name ?? '',
      })),
    })
  }
  out.legacyEndpoints.push({
    ref: r.ref,
    namespace: r.str(meta.namespace, 'metadata.namespace') ?? 'default',
    name: r.str(meta.name, 'metadata.name') ?? '',
    labels: r.labels(meta.labels),
    subsets,
  })
}

// ---------------------------------------------------------------------------------------------
// Walking the YAML documents.

interface WalkContext {
  path: string
  lines: LineCounter
  doc: Document.Parsed
  diagnostics: Diagnostic[]
  out: KubeObjects
}

function lineOf(ctx: WalkContext, node: YamlNode | null | undefined): number {
  const offset = node?.range?.[0]
  return offset === undefined ? 1 : ctx.lines.linePos(offset).line
}

function describeValue(v: Json): string {
  if (v === null || v === undefined) return 'an empty document'
  if (Array.isArray(v)) return 'a list'
  return `a ${typeof v}`
}

/** Reads one object that is not a List (already converted to plain values). */
function readObject(
  diagnostics: Diagnostic[],
  out: KubeObjects,
  value: Json,
  ref: SourceRef,
): void {
  if (!isObj(value)) {
    diagnostics.push(
      diag(
        'error',
        'KUBE_NOT_AN_OBJECT',
        `expected a Kubernetes object (a mapping with apiVersion and kind), found ${describeValue(value)}`,
        ref,
      ),
    )
    return
  }
  const o = value
  const kind = typeof o.kind === 'string' ? o.kind : null
  // An empty List as some clients write it (`items: null`): nothing to read, nothing to report.
  if (kind !== null && kind.endsWith('List') && (o.items === null || o.items === undefined)) return
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : null
  const meta = isObj(o.metadata) ? o.metadata : {}
  const ns = typeof meta.namespace === 'string' ? meta.namespace : 'default'
  const name = typeof meta.name === 'string' ? meta.name : '?'
  const r = new ObjectReader(diagnostics, ref, `${kind ?? '(no kind)'} ${ns}/${name}`)
  if (kind === null) {
    diagnostics.push(
      diag(
        'error',
        'KUBE_NO_KIND',
        `an object without kind${apiVersion ? ` (apiVersion ${apiVersion})` : ''}; kp cannot tell what it is`,
        ref,
      ),
    )
    return
  }
  if (typeof meta.name !== 'string' || meta.name === '') {
    r.report('warning', 'KUBE_NO_NAME', 'metadata.name is missing; the object is ignored')
    return
  }
  if (kind === 'Service' && (apiVersion === 'v1' || apiVersion === null))
    readService(o, r, meta, out)
  else if (kind === 'EndpointSlice' && apiVersion === 'discovery.k8s.io/v1')
    readEndpointSlice(o, r, meta, out)
  else if (kind === 'EndpointSlice') {
    // v1beta1 carried topology differently and kube-proxy has read only v1 since 1.21.
    r.report(
      'warning',
      'KUBE_UNSUPPORTED_VERSION',
      `apiVersion ${apiVersion ?? '(none)'} is not discovery.k8s.io/v1, which kube-proxy reads; ignored`,
    )
  } else if (kind === 'Endpoints' && (apiVersion === 'v1' || apiVersion === null))
    readLegacyEndpoints(o, r, meta, out)
  else
    r.report(
      'info',
      'KUBE_IGNORED_KIND',
      `${apiVersion ?? ''} ${kind} is not a Service, EndpointSlice or Endpoints; kube-proxy does not read it`.trim(),
    )
}

/** kind: List, ServiceList, EndpointSliceList, ... or no kind at all, with an items list (docs/ipvs-layouts.md c.1). */
const isListKind = (kind: Json) =>
  kind === undefined || kind === null || (typeof kind === 'string' && kind.endsWith('List'))

/** kubectl never nests Lists; stop at a sane depth rather than recurse without bound. */
const MAX_LIST_DEPTH = 8

function tooDeep(diagnostics: Diagnostic[], depth: number, ref: SourceRef): boolean {
  if (depth <= MAX_LIST_DEPTH) return false
  diagnostics.push(
    diag(
      'error',
      'KUBE_NESTING',
      `Lists nested more than ${MAX_LIST_DEPTH} deep; the inner ones were not read`,
      ref,
    ),
  )
  return true
}

/** One YAML node: a List (or a bare sequence) is walked item by item, each keeping its own line. */
function walkNode(ctx: WalkContext, node: YamlNode | null, listDepth: number): void {
  const ref: SourceRef = {path: ctx.path, line: lineOf(ctx, node)}
  const items = isSeq(node)
    ? node
    : isMap(node) && isListKind(node.get('kind'))
      ? node.get('items', true)
      : null
  if (isSeq(items)) {
    if (tooDeep(ctx.diagnostics, listDepth, ref)) return
    for (const item of items.items) walkNode(ctx, item as YamlNode, listDepth + 1)
    return
  }
  let value: Json
  try {
    // maxAliasCount guards against alias bombs ("billion laughs"); a throw here is bad input.
    value = node === null ? null : node.toJS(ctx.doc, {maxAliasCount: 1000})
  } catch (e) {
    ctx.diagnostics.push(
      diag('error', 'KUBE_BAD_YAML', `cannot read this object: ${(e as Error).message}`, ref),
    )
    return
  }
  readObject(ctx.diagnostics, ctx.out, value, ref)
}

/**
 * The lines where the items of the top-level list start: the elements of the root's "items"
 * array, or of the root array. One linear pass over the text that knows only strings, brackets
 * and the root's keys; it runs only on text JSON.parse accepted.
 */
function jsonItemLines(text: string): number[] {
  const lines: number[] = []
  // Per open container: is it an object, and is it the list whose elements we want?
  const stack: Array<{object: boolean; items: boolean}> = []
  let line = 1
  let lastRootKey: string | null = null
  let expectingKey = false
  // True right after the items list's "[" or one of its ",": the next token starts an element.
  let elementStart = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x0a) {
      line++
      continue
    }
    if (c === 0x20 || c === 0x09 || c === 0x0d) continue
    if (elementStart && c !== 0x5d) lines.push(line)
    elementStart = false
    if (c === 0x22) {
      // A string: find its end, honouring backslash escapes (JSON strings hold no raw newlines).
      let j = i + 1
      while (j < text.length && text.charCodeAt(j) !== 0x22)
        j += text.charCodeAt(j) === 0x5c ? 2 : 1
      if (expectingKey && stack.length === 1) lastRootKey = text.slice(i + 1, j)
      expectingKey = false
      i = j
    } else if (c === 0x7b || c === 0x5b) {
      const top = stack[stack.length - 1]
      const isItems =
        c === 0x5b &&
        (stack.length === 0 ||
          (stack.length === 1 && top?.object === true && lastRootKey === 'items'))
      // A repeated root "items" key: JSON.parse keeps the last one, so do we.
      if (isItems) lines.length = 0
      stack.push({object: c === 0x7b, items: isItems})
      expectingKey = c === 0x7b
      elementStart = isItems
    } else if (c === 0x7d || c === 0x5d) stack.pop()
    else if (c === 0x2c) {
      const top = stack[stack.length - 1]
      expectingKey = top?.object === true
      elementStart = top?.items === true
    }
  }
  return lines
}

/**
 * The fast path for JSON (`kubectl get -o json`): JSON.parse, with the item lines from
 * jsonItemLines. Returns false when the text is not plain JSON, so the YAML path reads it
 * (and positions any syntax error).
 */
function readJson(
  path: string,
  text: string,
  diagnostics: Diagnostic[],
  out: KubeObjects,
): boolean {
  let root: Json
  try {
    root = JSON.parse(text)
  } catch {
    return false
  }
  const firstLine = text.slice(0, text.search(/\S/)).split('\n').length
  const topItems = Array.isArray(root)
    ? root
    : isObj(root) && isListKind(root.kind) && Array.isArray(root.items)
      ? root.items
      : null
  if (!topItems) {
    readObject(diagnostics, out, root, {path, line: firstLine})
    return true
  }
  const itemLines = jsonItemLines(text)
  // Nested Lists inside the items (not written by kubectl) keep the line of their outer item.
  const walk = (value: Json, ref: SourceRef, depth: number): void => {
    const items = Array.isArray(value)
      ? value
      : isObj(value) && isListKind(value.kind) && Array.isArray(value.items)
        ? value.items
        : null
    if (!items) return readObject(diagnostics, out, value, ref)
    if (tooDeep(diagnostics, depth, ref)) return
    for (const item of items) walk(item, ref, depth + 1)
  }
  for (const [i, item] of topItems.entries()) walk(item, {path, line: itemLines[i] ?? firstLine}, 1)
  return true
}

export function emptyKubeObjects(): KubeObjects {
  return {services: [], slices: [], legacyEndpoints: []}
}

const MAX_YAML_ERRORS = 5

/** Beyond this the YAML parser is slow enough to mention `-o json`, which goes through JSON.parse. */
const LARGE_YAML_CHARS = 4_000_000

/**
 * kubectl's `get ... -o yaml`: one `kind: List` document whose items each start with `- ` in the
 * first column. Each item is parsed on its own, its ref the line of its `- ` (the line walkNode
 * gives it), so the parser's memory is one item's, not the whole List's.
 * Returns false, having changed nothing, for any other shape (several documents, directives,
 * items indented, nested Lists) and whenever the YAML parser has anything to say about a part:
 * the whole text is then parsed as one document, which reports it.
 */
export function readKubectlList(
  path: string,
  text: string,
  diagnostics: Diagnostic[],
  out: KubeObjects,
): boolean {
  /** The List's own lines (everything but the items), and each item's text and first line. */
  let skeleton = ''
  const items: Array<{line: number; text: string}> = []
  let inItems = false
  let sawItems = false
  let itemStart = -1
  let itemLine = 0
  const closeItem = (end: number): void => {
    if (itemStart >= 0) items.push({line: itemLine, text: text.slice(itemStart, end)})
    itemStart = -1
  }
  let line = 1
  for (let pos = 0; pos < text.length; line++) {
    const nl = text.indexOf('\n', pos)
    const end = nl < 0 ? text.length : nl + 1
    const c = text.charCodeAt(pos)
    // A document marker or a directive: not one plain document.
    if (c === 37 /* % */ || text.startsWith('---', pos) || text.startsWith('...', pos)) return false
    const firstColumn = c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 35 /* # */
    if (firstColumn && inItems && text.startsWith('- ', pos)) {
      closeItem(pos)
      itemStart = pos
      itemLine = line
    } else if (firstColumn) {
      closeItem(pos)
      inItems = false
      if (text.startsWith('items:', pos)) {
        if (sawItems || text.slice(pos, end).trim() !== 'items:') return false
        inItems = sawItems = true
      } else {
        skeleton += text.slice(pos, end)
      }
    } else if (!inItems) {
      skeleton += text.slice(pos, end)
    } else if (itemStart < 0 && text.slice(pos, end).trim() !== '') {
      return false // indented items (`  - `), or something else between `items:` and the first one
    }
    pos = end
  }
  closeItem(text.length)
  if (items.length === 0) return false
  const top = parseDocument(skeleton, {prettyErrors: false})
  if (top.errors.length > 0 || top.warnings.length > 0) return false
  const list: Json = top.toJS()
  if (!isObj(list) || !isListKind(list.kind)) return false
  const values: Json[] = []
  for (const item of items) {
    const doc = parseDocument(item.text, {prettyErrors: false})
    if (doc.errors.length > 0 || doc.warnings.length > 0) return false
    let seq: Json
    try {
      seq = doc.toJS({maxAliasCount: 1000})
    } catch {
      return false
    }
    if (!Array.isArray(seq) || seq.length !== 1) return false
    const value: Json = seq[0]
    // A List inside an item: walkNode gives its items lines of their own.
    if (
      Array.isArray(value) ||
      (isObj(value) && isListKind(value.kind) && Array.isArray(value.items))
    )
      return false
    values.push(value)
  }
  values.forEach((value, i) => readObject(diagnostics, out, value, {path, line: items[i]!.line}))
  return true
}

/** Parses one kube source. Never throws. `oneDocument`: never readKubectlList (for the tests that compare the two). */
export function parseKube(
  src: SourceText,
  {oneDocument = false}: {oneDocument?: boolean} = {},
): ParsedSource<KubeObjects> {
  const diagnostics: Diagnostic[] = []
  const out = emptyKubeObjects()
  const result: ParsedSource<KubeObjects> = {
    format: 'kube',
    source: {path: src.path, format: 'kube', tool: src.tool ?? null},
    data: out,
    diagnostics,
  }
  // A UTF-8 byte-order mark is not part of the YAML; kubectl never writes one, editors sometimes do.
  let text = src.text.charCodeAt(0) === 0xfeff ? src.text.slice(1) : src.text
  const truncated = (cut: CutList, form: string): void => {
    diagnostics.push(
      diag(
        'error',
        'KUBE_TRUNCATED',
        `the ${form} List ends inside its items (kubectl prints \`kind: List\` after them): it is cut off; the ${cut.items} whole item(s) before the cut are read, the one the cut falls in may be partial and is not read, and the objects after it are missing`,
        {path: src.path, line: cut.line},
      ),
    )
  }
  if (isBlank(text)) {
    diagnostics.push(
      diag('error', 'KUBE_EMPTY', 'empty input: no Kubernetes objects', {path: src.path, line: 1}),
    )
    return result
  }
  // kubectl -o json of a large cluster is many megabytes; JSON.parse reads it far faster than a YAML parser.
  const head = text.trimStart().charCodeAt(0)
  if ((head === 0x7b || head === 0x5b) && readJson(src.path, text, diagnostics, out)) return result
  if (head === 0x7b) {
    const cut = cutJsonList(text)
    if (cut && cut.items > 0 && readJson(src.path, cut.text, diagnostics, out)) {
      truncated(cut, 'JSON')
      return result
    }
  } else {
    const cut = cutYamlList(text)
    if (cut) {
      truncated(cut, 'YAML')
      if (cut.items === 0) return result
      text = cut.text
    }
  }
  if (text.length > LARGE_YAML_CHARS) {
    diagnostics.push(
      diag(
        'info',
        'KUBE_LARGE_YAML',
        `${Math.round(text.length / 1e6)} MB of YAML; \`kubectl get ... -o json\` of the same objects reads several times faster`,
        {path: src.path, line: 1},
      ),
    )
  }
  if (!oneDocument && readKubectlList(src.path, text, diagnostics, out)) return result
  const lines = new LineCounter()
  let docs: Document.Parsed[]
  try {
    docs = parseAllDocuments(text, {lineCounter: lines, prettyErrors: false}) as Document.Parsed[]
  } catch (e) {
    diagnostics.push(
      diag('error', 'KUBE_BAD_YAML', `cannot parse YAML: ${(e as Error).message}`, {
        path: src.path,
        line: 1,
      }),
    )
    return result
  }
  let documentsRead = 0
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      // The first errors say where; the parser's follow-on errors add little, so they are counted.
      for (const err of doc.errors.slice(0, MAX_YAML_ERRORS)) {
        const line = lines.linePos(err.pos[0]).line
        const message = err.message.split('\n', 1)[0] ?? err.code
        diagnostics.push(
          diag('error', 'KUBE_BAD_YAML', `malformed YAML: ${message}`, {path: src.path, line}),
        )
      }
      const more = doc.errors.length - MAX_YAML_ERRORS
      if (more > 0)
        diagnostics.push(
          diag('error', 'KUBE_BAD_YAML', `${more} more YAML error(s) in this document`, {
            path: src.path,
            line: lines.linePos(doc.errors[MAX_YAML_ERRORS]!.pos[0]).line,
          }),
        )
      continue
    }
    for (const w of doc.warnings) {
      diagnostics.push(
        diag('info', 'KUBE_YAML_WARNING', w.message.split('\n', 1)[0] ?? w.code, {
          path: src.path,
          line: lines.linePos(w.pos[0]).line,
        }),
      )
    }
    // An empty document (a stray `---`, or only comments) is normal in a stream.
    // After `---` with nothing below it the parser gives a null scalar rather than no contents.
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) continue
    documentsRead++
    walkNode({path: src.path, lines, doc, diagnostics, out}, doc.contents as YamlNode, 0)
  }
  if (documentsRead === 0 && !diagnostics.some((d) => d.severity === 'error')) {
    diagnostics.push(
      diag(
        'error',
        'KUBE_EMPTY',
        'no Kubernetes objects in this input (only comments or empty documents)',
        {path: src.path, line: 1},
      ),
    )
  }
  return result
}

/** The FormatModule entry point (src/readers/registry.ts). */
export function parse(src: SourceText): ParsedSource {
  return parseKube(src)
}
