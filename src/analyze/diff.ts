/**
 * `kp diff A B`: do two states proxy the same service ports the same way?
 *
 * Pure function over two ProxyStates, possibly of different modes (an iptables node against
 * the same node after a switch to nftables, a node against the cluster objects). Only what a
 * connection experiences is compared; how a mode writes it down (chain names, counters,
 * comments, rule order, positions in the sources) is not. A field one side cannot observe
 * (null in the model) is never a difference: "unknown" is not "different".
 */
import {isRedacted} from '../core/redaction.js'
import {endpointAddress, frontendAddress} from './addresses.js'
import type {DiagnosticCode} from '../catalog/diagnostics.js'
import {displayName, serviceKey} from '../core/state.js'
import {frontendPolicyLocal} from '../kube-proxy/endpoints.js'
import type {
  Endpoint,
  Frontend,
  Mode,
  NodeInfo,
  ProxyState,
  ServicePort,
  SourceInfo,
} from '../model/types.js'

/** One field that differs. `a`/`b` are null when the thing is absent on that side. */
export interface FieldDifference {
  field: string
  a: unknown
  b: unknown
}

export interface ServiceDiff {
  /** The service port as shown to people (the named side's name when only one side has names). */
  service: string
  /** added: only in B; removed: only in A; changed: in both, with differences. */
  change: 'added' | 'removed' | 'changed'
  differences: FieldDifference[]
}

/**
 * A service port whose comparison needs what one side's input does not contain (a fragment, docs/model.md
 * "incomplete"): these fields may or may not differ. Unknown is not a difference, nor a sameness.
 */
export interface UnknownDiff {
  service: string
  /** The side that lacks something: its service port is incomplete, or (a service port the other side alone has) it is a fragment. */
  side: 'a' | 'b'
  /** What could not be compared, as in `differences`. */
  fields: FieldDifference[]
  /** The names that side's input lacks, and the command that would collect them; [] and null when the side is a fragment that does not name them. */
  missing: string[]
  collect: string | null
  /** true when what cannot be compared is a value the side's input hid (a redacted source range). */
  redacted?: true
}

export interface DiffSide {
  sources: SourceInfo[]
  mode: Mode
  /** false when an error kept part of this side's input from being read (ProxyState.complete). */
  complete: boolean
}

export interface DiffResult {
  schemaVersion: 1
  kind: 'DiffResult'
  a: DiffSide
  b: DiffSide
  /** No known difference and nothing unknown. */
  equal: boolean
  services: ServiceDiff[]
  node: FieldDifference[]
  /** What one side cannot show (a fragment): neither a difference nor a sameness. */
  unknown: UnknownDiff[]
}

/** kube-proxy's iptables cascade is rounded by the kernel (docs/model.md): shares agree within this. */
const SHARE_TOLERANCE = 1e-6

// ---------------------------------------------------------------------------------------------
// Matching service ports

/** `family ip:port/PROTO` for each ClusterIP frontend: how a nameless service port (IPVS without cluster objects) is found. */
function clusterIpKeys(sp: ServicePort): string[] {
  return sp.frontends
    .filter((f) => f.type === 'ClusterIP' && f.ip !== null)
    .map((f) => `${sp.family} ${f.ip}:${f.port ?? '?'}/${sp.protocol}`)
}

const hasNames = (sp: ServicePort): boolean => sp.namespace !== null && sp.name !== null

interface Pair {
  a: ServicePort | null
  b: ServicePort | null
}

/**
 * Pairs the service ports of A and B by identity: serviceKey first (names, or the ClusterIP
 * when both sides lack names); then a nameless port on one side is matched to a named one on
 * the other by its ClusterIP frontend.
 */
export function matchServicePorts(a: ProxyState, b: ProxyState): Pair[] {
  const pairs: Pair[] = []
  const bByKey = new Map<string, ServicePort>()
  for (const sp of b.services) {
    const key = serviceKey(sp)
    if (!bByKey.has(key)) bByKey.set(key, sp)
  }
  const usedB = new Set<ServicePort>()
  const restA: ServicePort[] = []
  for (const sp of a.services) {
    const other = bByKey.get(serviceKey(sp))
    if (other && !usedB.has(other)) {
      usedB.add(other)
      pairs.push({a: sp, b: other})
    } else restA.push(sp)
  }
  const restB = b.services.filter((sp) => !usedB.has(sp))

  // Second pass: nameless on one side, named on the other, same ClusterIP frontend.
  const matchedLate = new Set<ServicePort>()
  const byClusterIp = (list: ServicePort[], named: boolean): Map<string, ServicePort> => {
    const m = new Map<string, ServicePort>()
    for (const sp of list)
      if (hasNames(sp) === named) for (const k of clusterIpKeys(sp)) if (!m.has(k)) m.set(k, sp)
    return m
  }
  // Each index is built only when the other side has a nameless port to look up in it.
  const namedB = restA.some((sp) => !hasNames(sp))
    ? byClusterIp(restB, true)
    : new Map<string, ServicePort>()
  const namedA = restB.some((sp) => !hasNames(sp))
    ? byClusterIp(restA, true)
    : new Map<string, ServicePort>()
  for (const sp of restA) {
    if (hasNames(sp)) continue
    const other = clusterIpKeys(sp)
      .map((k) => namedB.get(k))
      .find((x) => x !== undefined && !matchedLate.has(x))
    if (other) {
      matchedLate.add(sp).add(other)
      pairs.push({a: sp, b: other})
    }
  }
  for (const sp of restB) {
    if (hasNames(sp) || matchedLate.has(sp)) continue
    const other = clusterIpKeys(sp)
      .map((k) => namedA.get(k))
      .find((x) => x !== undefined && !matchedLate.has(x))
    if (other) {
      matchedLate.add(sp).add(other)
      pairs.push({a: other, b: sp})
    }
  }
  for (const sp of restA) if (!matchedLate.has(sp)) pairs.push({a: sp, b: null})
  for (const sp of restB) if (!matchedLate.has(sp)) pairs.push({a: null, b: sp})
  return pairs
}

// ---------------------------------------------------------------------------------------------
// Describing things as stable strings

export function describeFrontend(f: Frontend): string {
  return `${f.type} ${frontendAddress(f)}`
}

export function describeEndpoint(e: Endpoint): string {
  return endpointAddress(e)
}

/**
 * The service port as shown in a diff. displayName has no family, and a dual-stack Service has
 * one port per family, so a named IPv6 port says so (a nameless one shows its [IPv6] ClusterIP).
 */
function serviceLabel(sp: ServicePort): string {
  return hasNames(sp) && sp.family === 'IPv6' ? `${displayName(sp)} (IPv6)` : displayName(sp)
}

function describeAffinity(sp: ServicePort): string {
  if (!sp.sessionAffinity) return 'None'
  return sp.sessionAffinity.timeoutSeconds === null
    ? 'ClientIP'
    : `ClientIP ${sp.sessionAffinity.timeoutSeconds}s`
}

// ---------------------------------------------------------------------------------------------
// Frontends

/** `External` is what nftables shows for an externalIP or a LoadBalancer IP: it matches either. */
function typesMatch(x: Frontend['type'], y: Frontend['type']): boolean {
  if (x === y) return true
  const ext = (t: Frontend['type']) => t === 'ExternalIP' || t === 'LoadBalancer'
  return (x === 'External' && ext(y)) || (y === 'External' && ext(x))
}

/** Same frontend, allowing for what a side cannot show: an unknown port, or a NodePort on every node address. */
function frontendsMatch(x: Frontend, y: Frontend): boolean {
  if (!typesMatch(x.type, y.type)) return false
  if (x.port !== null && y.port !== null && x.port !== y.port) return false
  if (x.ip === y.ip) return true
  return x.type === 'NodePort' && y.type === 'NodePort' && (x.ip === null || y.ip === null)
}

function sameSet(x: string[], y: string[]): boolean {
  if (x.length !== y.length) return false
  const s = new Set(x)
  return y.every((v) => s.has(v))
}

/**
 * The endpoints (`ip:port`, not draining) a frontend sends new connections to: its own when it
 * has them (IPVS virtual servers that disagree, docs/model.md), else its service port's as its
 * traffic policy picks them. null when the source cannot tell: locality unknown under a Local
 * policy, or no local endpoint, where the modes differ (IPVS falls back to all, the others drop).
 */
function frontendEndpointKeys(sp: ServicePort, fe: Frontend): string[] | null {
  const live = (eps: Endpoint[]) =>
    eps
      .filter((e) => e.state !== 'draining')
      .map(describeEndpoint)
      .sort()
  if (fe.endpoints !== undefined) return live(fe.endpoints)
  if (!frontendPolicyLocal(sp, fe)) return live(sp.endpoints)
  if (sp.endpoints.some((e) => e.local === null)) return null
  const local = sp.endpoints.filter((e) => e.local === true)
  return local.length > 0 ? live(local) : null
}

/** Matched frontends of which one has its own endpoints: do both send to the same ones? */
function compareFrontendEndpoints(
  x: Frontend,
  y: Frontend,
  sides: {a: ServicePort; b: ServicePort},
  label: string,
  out: FieldDifference[],
): void {
  if (x.endpoints === undefined && y.endpoints === undefined) return
  const ka = frontendEndpointKeys(sides.a, x)
  const kb = frontendEndpointKeys(sides.b, y)
  if (ka !== null && kb !== null && !sameSet(ka, kb))
    out.push({field: `frontends[${label}].endpoints`, a: ka, b: kb})
}

function compareMatchedFrontends(
  x: Frontend,
  y: Frontend,
  out: FieldDifference[],
  sides: {a: ServicePort; b: ServicePort},
): void {
  const label = describeFrontend(x.type === 'External' || x.ip === null || x.port === null ? y : x)
  compareFrontendEndpoints(x, y, sides, label, out)
  // A frontend both sides reject rejects every client, whatever its source ranges; and kube-proxy's
  // iptables layout writes no KUBE-FW chain for a service without endpoints, so its rules cannot
  // show the ranges (a Service with ranges and no endpoint, against its own iptables rendering).
  const sameRanges =
    (x.action === 'reject' && y.action === 'reject') ||
    (sameSet(x.sourceRanges, y.sourceRanges) &&
      x.redactedSourceRanges === undefined &&
      y.redactedSourceRanges === undefined)
  if (x.action === y.action && sameRanges) return
  // Named after the more specific side, so the field reads the same whichever side is vaguer.
  if (x.action !== y.action)
    out.push({field: `frontends[${label}].action`, a: x.action, b: y.action})
  // A hidden range is shown as written (`x.x.x.x/25`): isUnknownDifference tells it apart.
  if (!sameRanges)
    out.push({
      field: `frontends[${label}].sourceRanges`,
      a: [...x.sourceRanges, ...(x.redactedSourceRanges ?? [])],
      b: [...y.sourceRanges, ...(y.redactedSourceRanges ?? [])],
    })
}

/**
 * Both sides list the same frontends (type, ip, port) in the same order: what the matching below
 * comes to then (its exact pass pairs them in order and leaves nothing for the rest), without
 * its two sets per service port. Sorted states (sortState) of the same service mostly do.
 */
function sameFrontendList(fa: Frontend[], fb: Frontend[]): boolean {
  if (fa.length !== fb.length) return false
  for (let i = 0; i < fa.length; i++) {
    const x = fa[i]!
    const y = fb[i]!
    if (x.type !== y.type || x.ip !== y.ip || x.port !== y.port) return false
  }
  return true
}

function compareFrontends(sides: {a: ServicePort; b: ServicePort}, out: FieldDifference[]): void {
  const fa = sides.a.frontends
  const fb = sides.b.frontends
  if (sameFrontendList(fa, fb)) {
    for (let i = 0; i < fa.length; i++) compareMatchedFrontends(fa[i]!, fb[i]!, out, sides)
    return
  }
  const matchedA = new Set<Frontend>()
  const matchedB = new Set<Frontend>()
  const compareMatched = (x: Frontend, y: Frontend): void =>
    compareMatchedFrontends(x, y, out, sides)
  // Pass 1: exact (type, ip, port); pass 2: the lenient rules of frontendsMatch.
  for (const exact of [true, false]) {
    for (const x of fa) {
      if (matchedA.has(x)) continue
      for (const y of fb) {
        if (matchedB.has(y)) continue
        const ok = exact
          ? x.type === y.type && x.ip === y.ip && x.port === y.port
          : frontendsMatch(x, y)
        if (!ok) continue
        matchedA.add(x)
        matchedB.add(y)
        compareMatched(x, y)
        break
      }
    }
  }
  // A NodePort on every address (ip null) covers the per-address NodePorts of the other side
  // (IPVS has one virtual server per node IP): those are the same frontend, not extra ones.
  const absorb = (
    wild: Frontend[],
    others: Frontend[],
    othersMatched: Set<Frontend>,
    wildIsA: boolean,
  ): void => {
    for (const w of wild) {
      if (w.type !== 'NodePort' || w.ip !== null) continue
      for (const o of others) {
        if (
          othersMatched.has(o) ||
          o.type !== 'NodePort' ||
          (w.port !== null && o.port !== null && w.port !== o.port)
        )
          continue
        othersMatched.add(o)
        if (wildIsA) compareMatched(w, o)
        else compareMatched(o, w)
      }
    }
  }
  absorb(fa, fb, matchedB, true)
  absorb(fb, fa, matchedA, false)
  for (const x of fa)
    if (!matchedA.has(x)) out.push({field: 'frontend', a: describeFrontend(x), b: null})
  for (const y of fb)
    if (!matchedB.has(y)) out.push({field: 'frontend', a: null, b: describeFrontend(y)})
}

// ---------------------------------------------------------------------------------------------
// Endpoints

/**
 * Endpoints as a set of ip:port. A draining IPVS real server (weight 0) takes no new
 * connections: it is left out of the set, as docs/ipvs-layouts.md a.6 says to do.
 */
function endpointIndex(eps: Endpoint[]): Map<string, Endpoint> {
  const m = new Map<string, Endpoint>()
  for (const e of eps) if (e.state !== 'draining') m.set(describeEndpoint(e), e)
  return m
}

function compareEndpoint(
  key: () => string,
  x: Endpoint,
  y: Endpoint,
  out: FieldDifference[],
): void {
  if (x.local !== null && y.local !== null && x.local !== y.local)
    out.push({field: `endpoints[${key()}].local`, a: x.local, b: y.local})
  if (x.share !== null && y.share !== null && Math.abs(x.share - y.share) > SHARE_TOLERANCE)
    out.push({field: `endpoints[${key()}].share`, a: x.share, b: y.share})
  if (x.weight !== null && y.weight !== null && x.weight !== y.weight)
    out.push({field: `endpoints[${key()}].weight`, a: x.weight, b: y.weight})
  if (x.state !== null && y.state !== null && x.state !== y.state)
    out.push({field: `endpoints[${key()}].state`, a: x.state, b: y.state})
}

function compareKey(x: string | number | null, y: string | number | null): number {
  if (x === y) return 0
  if (x === null) return -1
  if (y === null) return 1
  return x < y ? -1 : 1
}

/**
 * Both sides list the same endpoints in the same order, none draining, each once (strictly
 * increasing ip, port: sortState's order). Then the index comparison below comes down to
 * comparing the lists pair by pair, without building an ip:port key per endpoint.
 */
function sameEndpointList(ea: Endpoint[], eb: Endpoint[]): boolean {
  if (ea.length !== eb.length) return false
  for (let i = 0; i < ea.length; i++) {
    const x = ea[i]!
    const y = eb[i]!
    if (x.ip !== y.ip || x.port !== y.port || x.state === 'draining' || y.state === 'draining')
      return false
    if (i > 0) {
      const prev = ea[i - 1]!
      const order = compareKey(prev.ip, x.ip) || compareKey(prev.port, x.port)
      if (order >= 0) return false
    }
  }
  return true
}

function compareEndpoints(ea: Endpoint[], eb: Endpoint[], out: FieldDifference[]): void {
  if (sameEndpointList(ea, eb)) {
    for (let i = 0; i < ea.length; i++) {
      const x = ea[i]!
      compareEndpoint(() => describeEndpoint(x), x, eb[i]!, out)
    }
    return
  }
  const ia = endpointIndex(ea)
  const ib = endpointIndex(eb)
  for (const [key, x] of ia) {
    const y = ib.get(key)
    if (!y) {
      out.push({field: 'endpoint', a: key, b: null})
      continue
    }
    compareEndpoint(() => key, x, y, out)
  }
  for (const key of ib.keys()) if (!ia.has(key)) out.push({field: 'endpoint', a: null, b: key})
}

// ---------------------------------------------------------------------------------------------
// Service ports

function knownDiffers<T>(field: string, x: T | null, y: T | null, out: FieldDifference[]): void {
  if (x !== null && y !== null && x !== y) out.push({field, a: x, b: y})
}

export function compareServicePorts(x: ServicePort, y: ServicePort): FieldDifference[] {
  const out: FieldDifference[] = []
  compareFrontends({a: x, b: y}, out)
  compareEndpoints(x.endpoints, y.endpoints, out)
  knownDiffers('internalTrafficPolicy', x.internalTrafficPolicy, y.internalTrafficPolicy, out)
  knownDiffers('externalTrafficPolicy', x.externalTrafficPolicy, y.externalTrafficPolicy, out)
  // Affinity: None vs ClientIP counts, the timeout where both sides show it; and only where some
  // side has endpoints. iptables and nftables keep affinity on the endpoints' chains (`recent`,
  // the affinity sets), so their rules for a service port without endpoints show none; and with
  // no endpoint to stick to, it makes no difference.
  const ta = x.sessionAffinity?.timeoutSeconds ?? null
  const tb = y.sessionAffinity?.timeoutSeconds ?? null
  const affinityMatters = x.endpoints.length > 0 || y.endpoints.length > 0
  if (
    affinityMatters &&
    (Boolean(x.sessionAffinity) !== Boolean(y.sessionAffinity) ||
      (ta !== null && tb !== null && ta !== tb))
  ) {
    out.push({field: 'sessionAffinity', a: describeAffinity(x), b: describeAffinity(y)})
  }
  knownDiffers('healthCheckNodePort', x.healthCheckNodePort, y.healthCheckNodePort, out)
  knownDiffers('scheduler', x.scheduler, y.scheduler, out)
  return out
}

/** What an added or removed service port has, so the reader sees more than its name. */
function presentFields(sp: ServicePort, side: 'a' | 'b'): FieldDifference[] {
  const put = (field: string, v: string): FieldDifference =>
    side === 'a' ? {field, a: v, b: null} : {field, a: null, b: v}
  const fields: FieldDifference[] = []
  for (const f of sp.frontends) fields.push(put('frontend', describeFrontend(f)))
  for (const k of endpointIndex(sp.endpoints).keys()) fields.push(put('endpoint', k))
  return fields
}

// ---------------------------------------------------------------------------------------------
// Node-wide settings

/** Masquerade marks are written `0x4000` by the tests and `0x00004000` by real kube-proxy (docs/kube-proxy-layouts.md §1). */
function markValue(mark: string | null): string | null {
  if (mark === null) return null
  const n = Number.parseInt(mark, 16)
  return Number.isNaN(n) ? mark : `0x${n.toString(16)}`
}

function compareNodes(x: NodeInfo, y: NodeInfo): FieldDifference[] {
  const out: FieldDifference[] = []
  // The node's name, kernel and tool versions describe the machine, not how it proxies: not compared.
  knownDiffers('localDetector', x.localDetector, y.localDetector, out)
  knownDiffers('localInterface', x.localInterface, y.localInterface, out)
  const ma = markValue(x.masqueradeMark)
  const mb = markValue(y.masqueradeMark)
  if (ma !== null && mb !== null && ma !== mb)
    out.push({field: 'masqueradeMark', a: x.masqueradeMark, b: y.masqueradeMark})
  knownDiffers('masqueradeAll', x.masqueradeAll, y.masqueradeAll, out)
  knownDiffers('randomFully', x.randomFully, y.randomFully, out)
  knownDiffers('localhostNodePorts', x.localhostNodePorts, y.localhostNodePorts, out)
  knownDiffers('conntrackInvalidDrop', x.conntrackInvalidDrop, y.conntrackInvalidDrop, out)
  if (
    x.nodePortAddresses !== null &&
    y.nodePortAddresses !== null &&
    !sameSet(x.nodePortAddresses, y.nodePortAddresses)
  ) {
    out.push({field: 'nodePortAddresses', a: x.nodePortAddresses, b: y.nodePortAddresses})
  }
  // An empty list is what a source that does not show pod CIDRs gives: only compare two known lists.
  if (x.podCIDRs.length > 0 && y.podCIDRs.length > 0 && !sameSet(x.podCIDRs, y.podCIDRs)) {
    out.push({field: 'podCIDRs', a: x.podCIDRs, b: y.podCIDRs})
  }
  return out
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Fragments: what one side cannot show

/** Diagnostics that say a source is a fragment of a dump: its absent service ports are unknown, not removed. */
const FRAGMENT_CODES: ReadonlySet<string> = new Set<DiagnosticCode>([
  'IPT_UNDECLARED_CHAIN',
  'IPT_MISSING_CHAIN',
  'NFT_MISSING_CHAIN',
  'NFT_MISSING_SET',
  'NFT_UNDECLARED',
])

function isFragment(state: ProxyState): boolean {
  return (
    state.services.some((sp) => sp.incomplete !== undefined) ||
    state.diagnostics.some((d) => FRAGMENT_CODES.has(d.code))
  )
}

/** The label a frontend field of a difference carries (compareMatchedFrontends names it so). */
function frontendField(field: string): string | null {
  const m = /^frontends\[(.*)\]\./.exec(field)
  return m ? m[1]! : null
}

/**
 * Which of a pair's differences one side cannot show: a frontend field of a frontend whose
 * answer is unknown there; a frontend or endpoint only the complete side lists; the locality,
 * share or affinity read from what an incomplete side lacks.
 */
function isUnknownDifference(x: ServicePort, y: ServicePort, d: FieldDifference): 'a' | 'b' | null {
  const unknownFrontends = (sp: ServicePort) =>
    new Set(sp.frontends.filter((f) => f.incomplete !== undefined).map(describeFrontend))
  const label = frontendField(d.field)
  if (label !== null && d.field.endsWith('.sourceRanges')) {
    const hidden = redactedRangesSide(d)
    if (hidden !== null) return hidden
  }
  if (label !== null) {
    if (unknownFrontends(x).has(label)) return 'a'
    if (unknownFrontends(y).has(label)) return 'b'
    return null
  }
  const lacking: 'a' | 'b' | null =
    d.a === null ? 'a' : d.b === null ? 'b' : x.incomplete ? 'a' : y.incomplete ? 'b' : null
  if (lacking === null) return null
  const sp = lacking === 'a' ? x : y
  if (sp.incomplete === undefined) return null
  return d.field === 'frontend' ||
    d.field === 'endpoint' ||
    d.field.startsWith('endpoints[') ||
    d.field === 'sessionAffinity'
    ? lacking
    : null
}

/**
 * Source ranges of which a side hid some (`x.x.x.x/25`, Frontend.redactedSourceRanges): unknown
 * when that side's known ranges are all on the other side, since the hidden ones may be the
 * rest; a known range the other side lacks is a difference whatever is hidden.
 */
function redactedRangesSide(d: FieldDifference): 'a' | 'b' | null {
  const a = (d.a ?? []) as string[]
  const b = (d.b ?? []) as string[]
  for (const [side, mine, theirs] of [
    ['a', a, b],
    ['b', b, a],
  ] as const) {
    if (!mine.some(isRedacted)) continue
    const other = new Set(theirs.filter((r) => !isRedacted(r)))
    if (mine.every((r) => isRedacted(r) || other.has(r))) return side
  }
  return null
}

/** The fields of a side's unknown frontends that no difference names yet: `frontends[NodePort *:31000].action` is `unknown` there. */
function withUnknownFrontends(
  fields: FieldDifference[],
  sp: ServicePort,
  side: 'a' | 'b',
): FieldDifference[] {
  const out = [...fields]
  for (const f of sp.frontends) {
    if (f.incomplete === undefined) continue
    const field = `frontends[${describeFrontend(f)}].action`
    if (out.some((d) => d.field === field)) continue
    out.push(side === 'a' ? {field, a: 'unknown', b: null} : {field, a: null, b: 'unknown'})
  }
  return out
}

function unknownOf(
  service: string,
  side: 'a' | 'b',
  sp: ServicePort | null,
  fields: FieldDifference[],
): UnknownDiff {
  const hid = (v: unknown) => Array.isArray(v) && v.some((r) => isRedacted(String(r)))
  const redacted = fields.some(
    (f) => f.field.endsWith('.sourceRanges') && hid(side === 'a' ? f.a : f.b),
  )
  return {
    service,
    side,
    fields,
    missing: sp?.incomplete?.missing ?? [],
    collect: sp?.incomplete?.collect ?? null,
    ...(redacted ? {redacted: true as const} : {}),
  }
}

// ---------------------------------------------------------------------------------------------

/** Compares two states service port by service port (docs/model.md identity), then the node-wide settings. */
export function diffStates(a: ProxyState, b: ProxyState): DiffResult {
  const services: ServiceDiff[] = []
  const unknown: UnknownDiff[] = []
  const aFragment = isFragment(a)
  const bFragment = isFragment(b)
  for (const pair of matchServicePorts(a, b)) {
    if (pair.a && pair.b) {
      const sides = {a: pair.a, b: pair.b}
      const differences = compareServicePorts(pair.a, pair.b)
      if (differences.length === 0 && !pair.a.incomplete && !pair.b.incomplete) continue
      const named = hasNames(pair.a) || !hasNames(pair.b) ? pair.a : pair.b
      const known: FieldDifference[] = []
      const bySide: Record<'a' | 'b', FieldDifference[]> = {a: [], b: []}
      for (const d of differences) {
        const side = isUnknownDifference(pair.a, pair.b, d)
        if (side === null) known.push(d)
        else bySide[side].push(d)
      }
      const label = serviceLabel(named)
      if (known.length > 0) services.push({service: label, change: 'changed', differences: known})
      for (const side of ['a', 'b'] as const) {
        const sp = sides[side]
        // An incomplete side is reported even where nothing differs: it cannot show that its
        // unknown frontends do what the other side's do.
        if (bySide[side].length > 0 || sp.incomplete !== undefined)
          unknown.push(unknownOf(label, side, sp, withUnknownFrontends(bySide[side], sp, side)))
      }
    } else if (pair.a) {
      const fields = presentFields(pair.a, 'a')
      // Only in A, and B is a fragment: B may simply not show it.
      if (bFragment) unknown.push(unknownOf(serviceLabel(pair.a), 'b', null, fields))
      else services.push({service: serviceLabel(pair.a), change: 'removed', differences: fields})
    } else if (pair.b) {
      const fields = presentFields(pair.b, 'b')
      if (aFragment) unknown.push(unknownOf(serviceLabel(pair.b), 'a', null, fields))
      else services.push({service: serviceLabel(pair.b), change: 'added', differences: fields})
    }
  }
  const byService = (p: {service: string}, q: {service: string}) =>
    p.service < q.service ? -1 : p.service > q.service ? 1 : 0
  services.sort(byService)
  unknown.sort((p, q) => byService(p, q) || (p.side < q.side ? -1 : p.side > q.side ? 1 : 0))
  const node = compareNodes(a.node, b.node)
  return {
    schemaVersion: 1,
    kind: 'DiffResult',
    a: {sources: a.sources, mode: a.mode, complete: a.complete !== false},
    b: {sources: b.sources, mode: b.mode, complete: b.complete !== false},
    equal: services.length === 0 && node.length === 0 && unknown.length === 0,
    services,
    node,
    unknown,
  }
}
