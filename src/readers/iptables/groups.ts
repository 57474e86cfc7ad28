/**
 * kube-proxy's iptables chains as the builder sorts them, and the drafts it fills per service
 * port: a group of per-service chains sharing one hash (KUBE-SVC/SVL/EXT/FW/XLB-<H16>) is one
 * service port, whose frontends, endpoints (KUBE-SEP chains) and cascades are gathered as read.
 */
import type {
  Diagnostic,
  ForeignObject,
  Frontend,
  FrontendType,
  NodeInfo,
  ServicePort,
  TrafficPolicy,
} from '../../model/types.js'
import {
  EXT_CHAIN_PREFIX,
  FW_CHAIN_PREFIX,
  KUBE_CHAIN_PREFIX,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FIREWALL,
  KUBE_FORWARD,
  KUBE_KUBELET_CANARY,
  KUBE_MARK_DROP,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_CANARY,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
  SEP_CHAIN_PREFIX,
  SVC_CHAIN_PREFIX,
  SVL_CHAIN_PREFIX,
  XLB_CHAIN_PREFIX,
} from '../../kube-proxy/iptables-names.js'
import {IPVS_ONLY_CHAINS, KUBE_LOOP_BACK} from '../../kube-proxy/ipvs-names.js'
import type {IptablesChain} from './ruleset.js'

export type ChainKind = 'svc' | 'svl' | 'ext' | 'fw' | 'xlb'

export const PER_SERVICE_PREFIXES: ReadonlyArray<[string, ChainKind]> = [
  [SVC_CHAIN_PREFIX, 'svc'],
  [SVL_CHAIN_PREFIX, 'svl'],
  [EXT_CHAIN_PREFIX, 'ext'],
  [FW_CHAIN_PREFIX, 'fw'],
  [XLB_CHAIN_PREFIX, 'xlb'],
]
export const SEP_PREFIX = SEP_CHAIN_PREFIX
/** Up to this many endpoints, a service port's SEP chains are found again by a scan: cheaper than a map per service port. */
export const SCANNED_ENDPOINTS = 16

/** The fixed chains kube-proxy's iptables mode (any generation) and kubelet write. */
export const KUBE_PROXY_CHAINS: ReadonlySet<string> = new Set([
  KUBE_SERVICES,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_MARK_MASQ,
  KUBE_MARK_DROP,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FORWARD,
  KUBE_PROXY_FIREWALL,
  KUBE_FIREWALL,
  KUBE_PROXY_CANARY,
  KUBE_KUBELET_CANARY,
])

/** Chains only IPVS mode writes (pkg/proxy/ipvs); in an iptables-mode dump they are leftovers. */
export const IPVS_MODE_CHAINS: ReadonlySet<string> = new Set([...IPVS_ONLY_CHAINS, KUBE_LOOP_BACK])

export function perServiceChain(name: string): {kind: ChainKind; hash: string} | null {
  for (const [prefix, kind] of PER_SERVICE_PREFIXES)
    if (name.startsWith(prefix)) return {kind, hash: name.slice(prefix.length)}
  return null
}

export function isPerServiceChain(name: string): boolean {
  for (const [prefix] of PER_SERVICE_PREFIXES) if (name.startsWith(prefix)) return true
  return false
}

export function isKubeProxyChain(name: string): boolean {
  // Every one of them starts with KUBE-: that decides the DNAT, MARK, ACCEPT targets of 100,000s
  // of rules at once. Then the SEP prefix decides the 100,000s of SEP chains, and one set lookup
  // the KUBE-MARK-MASQ targets of as many rules, before the five per-service prefixes.
  return (
    name.startsWith(KUBE_CHAIN_PREFIX) &&
    (name.startsWith(SEP_PREFIX) || KUBE_PROXY_CHAINS.has(name) || isPerServiceChain(name))
  )
}

export interface FrontendDraft extends Frontend {
  /** The per-service chain the nat rule jumps to (KUBE-FW- gets the source ranges). */
  via: ChainKind | null
}

/** One KUBE-SEP chain a group jumps to (once per group, however many rules jump to it). */
export interface EndpointDraft {
  sep: string
  /** The nat chain of that name, looked up once when the jump is first read (maybe deleted; undefined when never declared). */
  chain: IptablesChain | undefined
  ip: string
  port: number | null
  /** As written in --to-destination: the SEP hash input. Null until the DNAT is read, and when the chain gives no endpoint. */
  written: string | null
  /** Jumped to from KUBE-SVL / KUBE-XLB: a local endpoint under a Local policy. */
  inLocal: boolean
  /** Where it is in its group's endpoints. */
  index: number
}

/**
 * The KUBE-SEP jumps of one dispatch chain in the order it tries them: one entry per step in
 * each array (parallel arrays, not an object per step: a large node has 100,000s of steps).
 */
export interface Cascade {
  chain: string
  /** The conditional probability of each step; null for an unconditional rule. */
  probabilities: Array<number | null>
  /** The line of each step's rule (not the rule: a rule read from a chain is a view made for that read). */
  lines: number[]
  endpoints: EndpointDraft[]
}

/** One service port, as one group of per-service chains sharing a hash (or, with no nat chains, one name). */
export interface Group {
  hash: string | null
  spn: string | null
  protocol: string | null
  chains: Partial<Record<ChainKind, IptablesChain>>
  frontends: FrontendDraft[]
  /**
   * The line of every rule read for this service port, in the order read (the first is where its
   * diagnostics point); made into refs, in line order, when the port is assembled (sourceRefs).
   * A list, not a set: each rule is visited once per group (a chain belongs to one group, a SEP
   * chain is read once per group, a filter rule once), so none comes twice;
   * test/readers/iptables/build.test.ts checks that no ref repeats.
   */
  refLines: number[]
  etp: TrafficPolicy | null
  itp: TrafficPolicy | null
  affinitySeconds: number | null
  affinity: boolean
  healthCheckNodePort: number | null
  /** The KUBE-SVC cascade; null without a KUBE-SVC chain. */
  cascade: Cascade | null
  /** The SVL (or old XLB) cascade, when it has steps. */
  localCascade: Cascade | null
  /** In the order first jumped to; one per SEP chain name (a chain jumped to from two groups has a draft in each). */
  endpoints: EndpointDraft[]
  /** The endpoints by SEP chain name, once there are more than SCANNED_ENDPOINTS; null while a scan finds one sooner. */
  endpointBySep: Map<string, EndpointDraft> | null
  ranges: string[]
  /** ≤1.24 KUBE-FW: a source outside the ranges -> KUBE-MARK-DROP (nat mark only). */
  fwMarkDrop: boolean
  /** The 1.24 SVL / old XLB `has no local endpoints` -> KUBE-MARK-DROP. */
  localDrop: boolean
  /** KUBE-EXT (1.24+) or KUBE-XLB (≈1.15–1.23) sends a local source (`--src-type LOCAL`) to KUBE-SVC. */
  localSourceToCluster: boolean
  /** Jumps from one of the group's chains to another of its kinds (EXT -> SVL, FW -> XLB, ...), to find what a frontend's path needs. */
  jumps: Array<{from: ChainKind; to: ChainKind}>
  /**
   * The ClusterIP as the "C cluster IP" masquerade rule of the SVC/SVL chain writes it
   * (`-d VIP --dport P`): kube-proxy writes it with the KUBE-SERVICES jump, so it gives the
   * ClusterIP when a fragment lacks that jump.
   */
  clusterIpRule: {ip: string; port: number | null; via: 'svc' | 'svl'} | null
  /** Dispatch rules the service port needs that the input lacks (KUBE-SERVICES when its ClusterIP came from clusterIpRule). */
  missing: string[]
  /** The frontends by the keys they are looked up by (sameFrontendKey, addressKey, nodePortKey, typeKey), once there are more than SCANNED_FRONTENDS; null while a scan is as quick. */
  frontendIndex: Map<string, FrontendDraft> | null
}

export interface NodeEvidence {
  podCIDRs: Set<string>
  detector: NodeInfo['localDetector']
  localInterface: string | null
  masqueradeMark: string | null
  masqMatchedAll: boolean
  masqMatchedLocal: boolean
  sawInternalChain: boolean
  randomFully: boolean | null
  localhostNodePorts: boolean | null
  nodePortAddresses: string[] | null
  conntrackInvalidDrop: boolean | null
}

export interface FamilyResult {
  services: ServicePort[]
  foreign: ForeignObject[]
  diagnostics: Diagnostic[]
  node: NodeEvidence
}

export function emptyGroup(hash: string | null): Group {
  return {
    hash,
    spn: null,
    protocol: null,
    chains: {},
    frontends: [],
    refLines: [],
    etp: null,
    itp: null,
    affinitySeconds: null,
    affinity: false,
    healthCheckNodePort: null,
    cascade: null,
    localCascade: null,
    endpoints: [],
    endpointBySep: null,
    ranges: [],
    fwMarkDrop: false,
    localDrop: false,
    localSourceToCluster: false,
    jumps: [],
    clusterIpRule: null,
    missing: [],
    frontendIndex: null,
  }
}

/**
 * Up to this many frontends a group's are scanned; past it they are indexed (a service port with
 * 80,000 externalIPs made every lookup a scan: quadratic in the frontends).
 */
export const SCANNED_FRONTENDS = 16

/** The frontend itself; any frontend but a NodePort at this address and port; the NodePort of this port; any frontend of this type. */
export const sameFrontendKey = (type: string, ip: string | null, port: number | null): string =>
  `${type} ${ip} ${port}`
export const addressKey = (ip: string | null, port: number | null): string => `@ ${ip} ${port}`
export const nodePortKey = (port: number | null): string => `NodePort ${port}`
export const typeKey = (type: FrontendType): string => `type ${type}`

/** Indexes one frontend under each key it is looked up by; an earlier frontend keeps a key (as a scan finds the first). */
export function indexFrontend(index: Map<string, FrontendDraft>, f: FrontendDraft): void {
  for (const key of [
    sameFrontendKey(f.type, f.ip, f.port),
    f.type === 'NodePort' ? nodePortKey(f.port) : addressKey(f.ip, f.port),
    typeKey(f.type),
  ])
    if (!index.has(key)) index.set(key, f)
}

/** The group's first frontend under `key` (one of the keys above), scanning while the group is small. */
export function findFrontend(
  g: Group,
  key: string,
  matches: (f: FrontendDraft) => boolean,
): FrontendDraft | undefined {
  return g.frontendIndex !== null ? g.frontendIndex.get(key) : g.frontends.find(matches)
}

/** Each per-service kind's chain-name prefix (PER_SERVICE_PREFIXES the other way round). */
export const PREFIX_OF_KIND = Object.fromEntries(
  PER_SERVICE_PREFIXES.map(([prefix, kind]) => [kind, prefix]),
) as Record<ChainKind, string>

/**
 * The names of a group's chains, for its diagnostics. A group none of whose chains is in the dump
 * (a hand-cut dump; kube-proxy's restore input of a partial sync) is named by the chains its
 * KUBE-SERVICES and KUBE-NODEPORTS rules jump to: a message never names an empty list.
 */
export function chainNamesOf(g: Group): string[] {
  const names = Object.values(g.chains).map((c) => c.name)
  if (names.length > 0 || g.hash === null) return names
  for (const f of g.frontends) {
    if (f.via === null) continue
    const name = PREFIX_OF_KIND[f.via] + g.hash
    if (!names.includes(name)) names.push(name)
  }
  return names
}

/** The draft for `chain` among a group's drafts (a loop, not find: no closure per jump). */
export function findDraftOfChain(
  drafts: readonly EndpointDraft[],
  chain: IptablesChain,
): EndpointDraft | undefined {
  for (let i = 0; i < drafts.length; i++) if (drafts[i]!.chain === chain) return drafts[i]
  return undefined
}
