/**
 * Small operations on the common model that every reader and analysis shares: empty values,
 * identity, display names and the deterministic order docs/model.md promises.
 */
import {joinHostPort} from './address.js'
import {REDACTED_SHOWN} from './redaction.js'
import type {
  Diagnostic,
  Endpoint,
  Frontend,
  Mode,
  NodeInfo,
  ProxyState,
  ServicePort,
  SourceRef,
} from '../model/types.js'
import type {DiagnosticCode} from '../catalog/diagnostics.js'

export function emptyNodeInfo(): NodeInfo {
  return {
    name: null,
    podCIDRs: [],
    localDetector: null,
    localInterface: null,
    masqueradeMark: null,
    masqueradeAll: null,
    randomFully: null,
    localhostNodePorts: null,
    nodePortAddresses: null,
    conntrackInvalidDrop: null,
    kernel: null,
    nftVersion: null,
    iptablesBackends: null,
  }
}

export function emptyState(mode: Mode): ProxyState {
  return {
    schemaVersion: 1,
    kind: 'ProxyState',
    mode,
    sources: [],
    node: emptyNodeInfo(),
    services: [],
    foreign: [],
    diagnostics: [],
  }
}

/** The ServicePortName string kube-proxy uses in comments: `ns/name:port`, or `ns/name` for an unnamed port. */
export function servicePortName(
  sp: Pick<ServicePort, 'namespace' | 'name' | 'portName'>,
): string | null {
  if (sp.namespace === null || sp.name === null) return null
  return sp.portName ? `${sp.namespace}/${sp.name}:${sp.portName}` : `${sp.namespace}/${sp.name}`
}

function clusterIpKey(sp: ServicePort): string {
  const fe = sp.frontends.find((f) => f.type === 'ClusterIP') ?? sp.frontends[0]
  if (!fe) return `?/${sp.protocol}`
  const port = fe.port ?? '?'
  // Bracketed by the service's family, like the key of every other frontend of it.
  if (fe.ip !== null) return `${joinHostPort(fe.ip, port, sp.family)}/${sp.protocol}`
  return `${joinHostPort(fe.redacted ? REDACTED_SHOWN : '*', port)}/${sp.protocol}`
}

/**
 * The identity of a service port (docs/model.md): names, protocol and family when known; otherwise
 * the first ClusterIP frontend as `ip:port/proto`.
 */
export function serviceKey(sp: ServicePort): string {
  const spn = servicePortName(sp)
  if (spn === null) return `${sp.family} ${clusterIpKey(sp)}`
  return `${sp.family} ${spn}/${sp.protocol}`
}

/** How a service port is shown to people: `ns/name:port/proto`, `ns/name/proto`, or `ip:port/proto`. */
export function displayName(sp: ServicePort): string {
  const spn = servicePortName(sp)
  if (spn === null) return clusterIpKey(sp)
  return `${spn}/${sp.protocol.toLowerCase()}`
}

const frontendOrder = {
  ClusterIP: 0,
  ExternalIP: 1,
  LoadBalancer: 2,
  External: 3,
  NodePort: 4,
} as const

function cmp(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0
  if (a === null) return -1
  if (b === null) return 1
  if (typeof a === 'number' && typeof b === 'number') return a - b
  return String(a) < String(b) ? -1 : 1
}

function cmpRef(a: SourceRef, b: SourceRef): number {
  return cmp(a.path, b.path) || a.line - b.line
}

function inOrder<T>(list: T[], compare: (a: T, b: T) => number): boolean {
  for (let i = 1; i < list.length; i++) if (compare(list[i - 1]!, list[i]!) > 0) return false
  return true
}

const cmpFrontend = (a: Frontend, b: Frontend): number =>
  frontendOrder[a.type] - frontendOrder[b.type] || cmp(a.ip, b.ip) || cmp(a.port, b.port)
const cmpEndpoint = (a: Endpoint, b: Endpoint): number => cmp(a.ip, b.ip) || cmp(a.port, b.port)

/** Sorts everything a state holds into the stable order of docs/model.md, in place, and returns it. */
export function sortState(state: ProxyState): ProxyState {
  for (const sp of state.services) {
    // Readers mostly give the lists in order already: checking costs less than sorting (the sort
    // is stable, so a list in order is left as it is either way).
    if (!inOrder(sp.frontends, cmpFrontend)) sp.frontends.sort(cmpFrontend)
    for (const fe of sp.frontends) {
      if (fe.sourceRanges.length > 1) fe.sourceRanges.sort()
      if (fe.endpoints && !inOrder(fe.endpoints, cmpEndpoint)) fe.endpoints.sort(cmpEndpoint)
    }
    if (!inOrder(sp.endpoints, cmpEndpoint)) sp.endpoints.sort(cmpEndpoint)
    if (!inOrder(sp.rules, cmpRef)) sp.rules.sort(cmpRef)
  }
  state.services.sort(
    (a, b) =>
      cmp(a.namespace, b.namespace) ||
      cmp(a.name, b.name) ||
      cmp(a.portName, b.portName) ||
      cmp(a.protocol, b.protocol) ||
      cmp(a.family, b.family) ||
      cmp(clusterIpKey(a), clusterIpKey(b)),
  )
  state.foreign.sort(
    (a, b) =>
      cmp(a.kind, b.kind) ||
      cmp(a.name, b.name) ||
      cmp(a.source?.path ?? null, b.source?.path ?? null) ||
      (a.source?.line ?? 0) - (b.source?.line ?? 0),
  )
  state.node.podCIDRs.sort()
  state.node.nodePortAddresses?.sort()
  return state
}

/** The refs in their first-seen order, each position once. */
export function uniqueSourceRefs(refs: SourceRef[]): SourceRef[] {
  const seen = new Set<string>()
  return refs.filter((r) => {
    const k = `${r.path}\u0000${r.line}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

export function diag(
  severity: Diagnostic['severity'],
  code: DiagnosticCode,
  message: string,
  source: SourceRef | null,
): Diagnostic {
  return {severity, code, message, source}
}
