/**
 * Stage 2 of the iptables reader: the parsed iptables-save sources of one node (an IPv4 and
 * an IPv6 dump, say) -> one ProxyState in mode 'iptables'.
 *
 * How a service port is recovered (spec §2, §5), without scanning the dump per service:
 * 1. index the nat chains by name; per-service chains (KUBE-SVC/SVL/EXT/FW/XLB-<H16>) are
 *    grouped by their shared hash H16, so one group is one service port;
 * 2-3. walk nat KUBE-SERVICES and KUBE-NODEPORTS once: each jump into a group is a frontend,
 *    and its comment (`C cluster IP`, ...) names the group;
 * 4. walk each group's own chains once: policies (EXT short-circuits, ->SVL, XLB), the
 *    affinity and the probability cascade to KUBE-SEP chains, whose DNAT gives the endpoints;
 * 5. walk the filter table once: REJECT/DROP for no (local) endpoints, health check ports,
 *    firewall drops — joined to the groups by the name in their comment; then the node
 *    settings from the fixed chains;
 * 6. assemble the service ports (shares, locality, hash checks);
 * 7. one pass over every rule for foreign rules and chains that touch kube-proxy's.
 * Names come from whichever comment has them (large clusters drop the SEP and SVC->SEP
 * comments, fixtures/iptables/handmade-node-with-cni; old releases wrote other words,
 * fixtures/iptables/legacy-k8s-1.1), and every chain name is checked against the hash
 * recomputed from that name.
 *
 * Policies in the model are null when the dump cannot show them (an ETP without any external
 * frontend; an ITP when the ClusterIP is only REJECTed). The corpus writes "Cluster" for that;
 * test/readers/iptables/conformance.test.ts maps null to "Cluster" explicitly.
 */
import {diag, emptyNodeInfo, emptyState} from '../../core/state.js'
import {toCidr} from '../../core/ipaddr.js'
import type {
  Diagnostic,
  Endpoint,
  ForeignObject,
  Frontend,
  FrontendType,
  NodeInfo,
  Protocol,
  ProxyState,
  ServicePort,
  SourceRef,
  TrafficPolicy,
} from '../../model/types.js'
import type {ParsedSource, ReadOptions} from '../types.js'
import {parseServiceComment, splitServicePortName, type ServiceComment} from './comments.js'
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
  endpointString,
  iptablesChainHash,
  iptablesEndpointHash,
} from '../../kube-proxy/iptables-names.js'
import {normaliseAddress} from './parse.js'
import {countRuleCopy, reportRuleCopies, type RuleCopies} from './repeated-rules.js'
import {
  BUILTIN_CHAINS,
  findMatch,
  findMatchValue,
  findTargetOption,
  findTargetValue,
  type IptablesChain,
  type IptablesRule,
  type IptablesRuleset,
  type IptablesTable,
} from './ruleset.js'
import {effectiveShares, SHARE_SUM_TOLERANCE} from '../../kube-proxy/shares.js'
import {IPVS_ONLY_CHAINS, KUBE_IPVS_PREFIX, KUBE_LOOP_BACK} from '../../kube-proxy/ipvs-names.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

type ChainKind = 'svc' | 'svl' | 'ext' | 'fw' | 'xlb'

const PER_SERVICE_PREFIXES: ReadonlyArray<[string, ChainKind]> = [
  [SVC_CHAIN_PREFIX, 'svc'],
  [SVL_CHAIN_PREFIX, 'svl'],
  [EXT_CHAIN_PREFIX, 'ext'],
  [FW_CHAIN_PREFIX, 'fw'],
  [XLB_CHAIN_PREFIX, 'xlb'],
]
const SEP_PREFIX = SEP_CHAIN_PREFIX
/** Up to this many endpoints, a service port's SEP chains are found again by a scan: cheaper than a map per service port. */
const SCANNED_ENDPOINTS = 16

/** The fixed chains kube-proxy's iptables mode (any generation) and kubelet write. */
const KUBE_PROXY_CHAINS: ReadonlySet<string> = new Set([
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
const IPVS_MODE_CHAINS: ReadonlySet<string> = new Set([...IPVS_ONLY_CHAINS, KUBE_LOOP_BACK])

/**
 * kube-proxy's (and kubelet's) own jumps from built-in chains, spec §2.2: table/chain/target ->
 * the comment kube-proxy's EnsureRule writes (null: kubelet's uncommented KUBE-FIREWALL jump).
 * The same jump without that comment was added by someone else.
 */
const OWN_BUILTIN_JUMPS: ReadonlyMap<string, string | null> = new Map([
  ['filter/INPUT/KUBE-EXTERNAL-SERVICES', 'kubernetes externally-visible service portals'],
  ['filter/FORWARD/KUBE-EXTERNAL-SERVICES', 'kubernetes externally-visible service portals'],
  ['filter/INPUT/KUBE-NODEPORTS', 'kubernetes health check service ports'],
  ['filter/FORWARD/KUBE-SERVICES', 'kubernetes service portals'],
  ['filter/OUTPUT/KUBE-SERVICES', 'kubernetes service portals'],
  ['filter/INPUT/KUBE-SERVICES', 'kubernetes service portals'], // ≤1.2x
  ['filter/FORWARD/KUBE-FORWARD', 'kubernetes forwarding rules'],
  ['filter/INPUT/KUBE-PROXY-FIREWALL', 'kubernetes load balancer firewall'],
  ['filter/OUTPUT/KUBE-PROXY-FIREWALL', 'kubernetes load balancer firewall'],
  ['filter/FORWARD/KUBE-PROXY-FIREWALL', 'kubernetes load balancer firewall'],
  ['filter/INPUT/KUBE-FIREWALL', null],
  ['filter/OUTPUT/KUBE-FIREWALL', null],
  ['nat/OUTPUT/KUBE-SERVICES', 'kubernetes service portals'],
  ['nat/PREROUTING/KUBE-SERVICES', 'kubernetes service portals'],
  ['nat/POSTROUTING/KUBE-POSTROUTING', 'kubernetes postrouting rules'],
])

const PROTOCOLS: Readonly<Record<string, Protocol>> = {tcp: 'TCP', udp: 'UDP', sctp: 'SCTP'}
const LOCALHOST_V4 = '127.0.0.0/8'

function perServiceChain(name: string): {kind: ChainKind; hash: string} | null {
  for (const [prefix, kind] of PER_SERVICE_PREFIXES)
    if (name.startsWith(prefix)) return {kind, hash: name.slice(prefix.length)}
  return null
}

function isPerServiceChain(name: string): boolean {
  for (const [prefix] of PER_SERVICE_PREFIXES) if (name.startsWith(prefix)) return true
  return false
}

function isKubeProxyChain(name: string): boolean {
  // Every one of them starts with KUBE-: that decides the DNAT, MARK, ACCEPT targets of 100,000s
  // of rules at once. Then the SEP prefix decides the 100,000s of SEP chains, and one set lookup
  // the KUBE-MARK-MASQ targets of as many rules, before the five per-service prefixes.
  return (
    name.startsWith(KUBE_CHAIN_PREFIX) &&
    (name.startsWith(SEP_PREFIX) || KUBE_PROXY_CHAINS.has(name) || isPerServiceChain(name))
  )
}

interface FrontendDraft extends Frontend {
  /** The per-service chain the nat rule jumps to (KUBE-FW- gets the source ranges). */
  via: ChainKind | null
}

/** One KUBE-SEP chain a group jumps to (once per group, however many rules jump to it). */
interface EndpointDraft {
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
interface Cascade {
  chain: string
  /** The conditional probability of each step; null for an unconditional rule. */
  probabilities: Array<number | null>
  /** The line of each step's rule (not the rule: a rule read from a chain is a view made for that read). */
  lines: number[]
  endpoints: EndpointDraft[]
}

/** One service port, as one group of per-service chains sharing a hash (or, with no nat chains, one name). */
interface Group {
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
  /** The 1.24 SVL / old XLB `has no local endpoints` -> KUBE-MARK-DROP. */
  localDrop: boolean
  /** The frontends by the keys they are looked up by (sameFrontendKey, addressKey, nodePortKey, typeKey), once there are more than SCANNED_FRONTENDS; null while a scan is as quick. */
  frontendIndex: Map<string, FrontendDraft> | null
}

interface NodeEvidence {
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

interface FamilyResult {
  services: ServicePort[]
  foreign: ForeignObject[]
  diagnostics: Diagnostic[]
  node: NodeEvidence
}

function emptyGroup(hash: string | null): Group {
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
    localDrop: false,
    frontendIndex: null,
  }
}

/**
 * Up to this many frontends a group's are scanned; past it they are indexed (a service port with
 * 80,000 externalIPs made every lookup a scan: a dump of that shape took 23 s, quadratically).
 */
const SCANNED_FRONTENDS = 16

/** The last IptablesChain.passMark a build pass took: each takes a new one, so marks of an earlier build of the same ruleset mean nothing. */
let lastPassMark = 0

/** The frontend itself; any frontend but a NodePort at this address and port; the NodePort of this port; any frontend of this type. */
const sameFrontendKey = (type: string, ip: string | null, port: number | null): string =>
  `${type} ${ip} ${port}`
const addressKey = (ip: string | null, port: number | null): string => `@ ${ip} ${port}`
const nodePortKey = (port: number | null): string => `NodePort ${port}`
const typeKey = (type: FrontendType): string => `type ${type}`

/** Indexes one frontend under each key it is looked up by; an earlier frontend keeps a key (as a scan finds the first). */
function indexFrontend(index: Map<string, FrontendDraft>, f: FrontendDraft): void {
  for (const key of [
    sameFrontendKey(f.type, f.ip, f.port),
    f.type === 'NodePort' ? nodePortKey(f.port) : addressKey(f.ip, f.port),
    typeKey(f.type),
  ])
    if (!index.has(key)) index.set(key, f)
}

/** The group's first frontend under `key` (one of the keys above), scanning while the group is small. */
function findFrontend(
  g: Group,
  key: string,
  matches: (f: FrontendDraft) => boolean,
): FrontendDraft | undefined {
  return g.frontendIndex !== null ? g.frontendIndex.get(key) : g.frontends.find(matches)
}

/** Each per-service kind's chain-name prefix (PER_SERVICE_PREFIXES the other way round). */
const PREFIX_OF_KIND = Object.fromEntries(
  PER_SERVICE_PREFIXES.map(([prefix, kind]) => [kind, prefix]),
) as Record<ChainKind, string>

/**
 * The names of a group's chains, for its diagnostics. A group none of whose chains is in the dump
 * (a hand-cut dump; kube-proxy's restore input of a partial sync) is named by the chains its
 * KUBE-SERVICES and KUBE-NODEPORTS rules jump to: a message never names an empty list.
 */
function chainNamesOf(g: Group): string[] {
  const names = Object.values(g.chains).map((c) => c.name)
  if (names.length > 0 || g.hash === null) return names
  for (const f of g.frontends) {
    if (f.via === null) continue
    const name = PREFIX_OF_KIND[f.via] + g.hash
    if (!names.includes(name)) names.push(name)
  }
  return names
}

function parsePort(value: string | undefined): number | null {
  if (value === undefined) return null
  const n = Number(value)
  return Number.isInteger(n) && n >= 0 && n <= 65535 ? n : null
}

/** `80-90` -> `80`: the first port of a range. */
function beforeDash(text: string): string {
  const dash = text.indexOf('-')
  return dash < 0 ? text : text.slice(0, dash)
}

/** The draft for `chain` among a group's drafts (a loop, not find: no closure per jump). */
function findDraftOfChain(
  drafts: readonly EndpointDraft[],
  chain: IptablesChain,
): EndpointDraft | undefined {
  for (let i = 0; i < drafts.length; i++) if (drafts[i]!.chain === chain) return drafts[i]
  return undefined
}

/** `10.1.2.3:80`, `[fd00::1]:80`, `10.1.2.3` -> ip and port (null when absent). */
function splitHostPort(text: string): {ip: string; port: number | null} | null {
  if (text.startsWith('[')) {
    const close = text.indexOf(']')
    if (close < 0) return null
    const ip = text.slice(1, close)
    const rest = text.slice(close + 1)
    if (rest === '') return {ip: normaliseAddress(ip), port: null}
    if (!rest.startsWith(':')) return null
    return {ip: normaliseAddress(ip), port: parsePort(beforeDash(rest.slice(1)))}
  }
  const colon = text.indexOf(':')
  if (colon < 0) return {ip: text, port: null}
  if (text.indexOf(':', colon + 1) >= 0) return {ip: normaliseAddress(text), port: null} // a bare IPv6 address
  return {ip: text.slice(0, colon), port: parsePort(beforeDash(text.slice(colon + 1)))}
}

/** The mark value as written before any `/mask`: `0x4000/0x4000` -> `0x4000`. */
function markValue(text: string): string {
  const slash = text.indexOf('/')
  return slash < 0 ? text : text.slice(0, slash)
}

/**
 * A rule that marks a packet for masquerading: `-j KUBE-MARK-MASQ`, or (2015, before that chain
 * existed) `-j MARK --set-xmark 0x4d415351/0xffffffff` written straight into the service rules.
 */
function isMasqueradeMarking(rule: IptablesRule): boolean {
  return (
    rule.target === KUBE_MARK_MASQ ||
    (rule.target === 'MARK' &&
      (findTargetOption(rule, '--set-xmark') ?? findTargetOption(rule, '--or-mark')) !== undefined)
  )
}

/** kube-proxy's own MASQUERADE rule: in KUBE-POSTROUTING, or (2015) appended to nat POSTROUTING itself. */
const SNAT_COMMENT = 'kubernetes service traffic requiring SNAT'

/** Up to this many lines, sourceRefs sorts by insertion. */
const INSERTION_SORT_MAX = 64

/**
 * The refs of a service port's rules, in line order: sortState then finds them sorted and leaves
 * them (a comparator sort of 320,000 refs in 10,000 lists took ~50 ms; numbers sort natively).
 * Only the first `keep` (ReadOptions.refsPerPort) are made.
 */
function sourceRefs(path: string, lines: readonly number[], keep: number): SourceRef[] {
  // A service port with many endpoints has a long list: sorted natively (no quadratic case).
  if (lines.length > INSERTION_SORT_MAX) {
    const sorted = Int32Array.from(lines).sort()
    return Array.from(
      keep < sorted.length ? sorted.subarray(0, Math.max(0, keep)) : sorted,
      (line) => ({path, line}),
    )
  }
  // Insertion sort into the refs themselves: ~30 lines per service port, mostly in runs already.
  // (An Int32Array per port to sort natively is memory outside the heap, 10,000 times.) Once
  // `keep` are made, a line after the last kept one is left out (most are: the lines come mostly
  // in order), and an earlier one takes the last one's place.
  const refs: SourceRef[] = []
  if (keep <= 0) return refs
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    let j = refs.length
    if (j === keep) {
      if (refs[j - 1]!.line <= line) continue
      j--
    }
    while (j > 0 && refs[j - 1]!.line > line) {
      refs[j] = refs[j - 1]!
      j--
    }
    refs[j] = {path, line}
  }
  return refs
}

/**
 * Reads one family's ruleset. `servicesOnly`: ReadOptions.servicesOnly (no rule references, no
 * foreign pass); `refsPerPort`: ReadOptions.refsPerPort (Infinity when not set).
 */
function buildFamily(
  ruleset: IptablesRuleset,
  path: string,
  family: 'IPv4' | 'IPv6',
  servicesOnly: boolean,
  refsPerPort: number,
): FamilyResult {
  /** A focused read (src/readers/iptables/focus.ts) holds only some services: skip the checks about the others. */
  const focused = ruleset.focused === true
  const diagnostics: Diagnostic[] = []
  const foreign: ForeignObject[] = []
  const at = (line: number): SourceRef => ({path, line})
  const warn = (
    code: DiagnosticCode,
    message: string,
    line: number | null,
    severity: Diagnostic['severity'] = 'warning',
  ): void => {
    diagnostics.push(diag(severity, code, message, line === null ? null : at(line)))
  }
  const node: NodeEvidence = {
    podCIDRs: new Set(),
    detector: null,
    localInterface: null,
    masqueradeMark: null,
    masqMatchedAll: false,
    masqMatchedLocal: false,
    sawInternalChain: false,
    randomFully: null,
    localhostNodePorts: null,
    nodePortAddresses: null,
    conntrackInvalidDrop: null,
  }
  /** Comments repeat on a service's rules (and are one interned string each): each is parsed once. */
  const parsedComments = new Map<string, ServiceComment | null>()
  const commentOf = (rule: IptablesRule): ServiceComment | null => {
    const text = rule.comment
    if (text === null) return null
    let parsed = parsedComments.get(text)
    if (parsed === undefined) {
      parsed = parseServiceComment(text)
      parsedComments.set(text, parsed)
    }
    return parsed
  }
  const nat = ruleset.tables.get('nat')
  const filter = ruleset.tables.get('filter')
  const natChains = nat?.chains ?? new Map<string, IptablesChain>()

  // ---- 1. index: live per-service chains grouped by hash; SEP chains by name.
  const groups = new Map<string, Group>()
  const groupOf = (hash: string): Group => {
    let g = groups.get(hash)
    if (!g) {
      g = emptyGroup(hash)
      groups.set(hash, g)
    }
    return g
  }
  /** Compared with the live SEP chains the groups jump to: when they are as many, no SEP chain is an orphan. */
  let liveSepChains = 0
  // Loops over every chain or endpoint run in callbacks, not in buildFamily's own body: V8
  // optimises a callback after a few calls, while a for-of here runs unoptimised for long and
  // makes an iterator result per step (about 25 MB of garbage on a 10,000-service dump).
  natChains.forEach((chain) => {
    // SEP first: ten times as many as the per-service chains.
    const sep = chain.name.startsWith(SEP_PREFIX)
    if (chain.deletedLine !== null) {
      // Restore input of a resync declares stale chains and deletes them (fixtures/iptables/upstream-syncrepeated-fullresync).
      if (sep || isPerServiceChain(chain.name)) {
        warn(
          'IPT_DELETED_CHAIN',
          `${chain.name} is deleted by -X on line ${chain.deletedLine} (a stale chain of a removed service); not read as a service`,
          chain.deletedLine,
          'info',
        )
      }
      return
    }
    if (sep) {
      liveSepChains++
      return
    }
    const ps = perServiceChain(chain.name)
    if (ps) groupOf(ps.hash).chains[ps.kind] = chain
  })
  /**
   * A rule read for group g: its line is one of the port's rule references. A servicesOnly read
   * makes no references and needs only the first line (where the port's diagnostics point), so
   * it does not look up the line of each of the ~430,000 rules of a 10,000-service dump.
   */
  const noteRef = (g: Group, rule: IptablesRule): void => {
    if (!servicesOnly || g.refLines.length === 0) g.refLines.push(rule.line)
  }
  const liveTarget = (target: string | null): IptablesChain | undefined => {
    if (target === null) return undefined
    const c = natChains.get(target)
    return c && c.deletedLine === null ? c : undefined
  }

  /** The first rule that tells names the group; comments are only parsed while the name is unknown. */
  const nameGroup = (g: Group, rule: IptablesRule): void => {
    if (g.spn === null) {
      const spn = commentOf(rule)?.spn
      if (spn) g.spn = spn
    }
    if (g.protocol === null && rule.protocol && !rule.protocol.negated)
      g.protocol = rule.protocol.value
  }
  const addFrontend = (g: Group, fe: FrontendDraft): FrontendDraft => {
    const same = findFrontend(
      g,
      sameFrontendKey(fe.type, fe.ip, fe.port),
      (f) => f.type === fe.type && f.ip === fe.ip && f.port === fe.port,
    )
    if (same) return same
    g.frontends.push(fe)
    if (g.frontendIndex !== null) indexFrontend(g.frontendIndex, fe)
    else if (g.frontends.length > SCANNED_FRONTENDS) {
      g.frontendIndex = new Map()
      for (const f of g.frontends) indexFrontend(g.frontendIndex, f)
    }
    return fe
  }
  /** Rules attributed by name only (old masquerade rules in KUBE-SERVICES / KUBE-NODEPORTS), joined after naming. */
  const byNameLater: Array<{spn: string; protocol: string | null; rule: IptablesRule}> = []

  const noteInternalMasquerade = (rule: IptablesRule): void => {
    if (rule.source?.negated) {
      node.masqMatchedLocal = true
      node.podCIDRs.add(rule.source.value)
      node.detector ??= 'cidr'
    } else if (rule.inInterface?.negated) {
      node.masqMatchedLocal = true
      noteInterface(rule.inInterface.value)
    } else if (!rule.source && !rule.inInterface) {
      node.masqMatchedAll = true
    }
  }
  const noteMarkTarget = (rule: IptablesRule): void => {
    const mark =
      findTargetOption(rule, '--or-mark') ??
      findTargetOption(rule, '--set-xmark') ??
      findTargetOption(rule, '--set-mark')
    if (mark?.values[0]) node.masqueradeMark ??= markValue(mark.values[0])
  }
  const noteInterface = (iface: string): void => {
    // `-i veth+` is the interface-prefix detector; a plain name is the bridge detector.
    if (iface.endsWith('+')) {
      node.detector ??= 'interface-prefix'
      node.localInterface ??= iface.slice(0, -1)
    } else {
      node.detector ??= 'interface'
      node.localInterface ??= iface
    }
  }

  /** A rule in one of kube-proxy's dispatch chains that is none of its shapes. A jump to a foreign chain is listed in `foreign` instead (step 7). */
  const notUnderstood = (rule: IptablesRule): void => {
    const foreignJump =
      rule.target !== null && natChains.has(rule.target) && !isKubeProxyChain(rule.target)
    if (!foreignJump)
      warn(
        'IPT_UNKNOWN_RULE',
        `rule in ${rule.table} ${rule.chain} not understood (target ${rule.target ?? 'none'}); kept out of the service model`,
        rule.line,
      )
  }

  // ---- 2. nat KUBE-SERVICES: frontends and the jump to KUBE-NODEPORTS.
  const natServices = liveTarget(KUBE_SERVICES)
  for (const rule of natServices?.rules ?? []) {
    const comment = commentOf(rule)
    const ps = rule.target ? perServiceChain(rule.target) : null
    if (ps) {
      const g = groupOf(ps.hash)
      noteRef(g, rule)
      nameGroup(g, rule)
      const type: FrontendType =
        comment?.kind === 'cluster-ip'
          ? 'ClusterIP'
          : comment?.kind === 'external-ip'
            ? 'ExternalIP'
            : comment?.kind === 'loadbalancer-ip'
              ? 'LoadBalancer'
              : ps.kind === 'svc' || ps.kind === 'svl'
                ? 'ClusterIP'
                : ps.kind === 'fw'
                  ? 'LoadBalancer'
                  : 'External'
      if (!comment)
        warn(
          'IPT_NO_COMMENT',
          `KUBE-SERVICES rule into ${rule.target} has no service comment; read as a ${type} frontend from its target`,
          rule.line,
          'info',
        )
      addFrontend(g, {
        type,
        ip: rule.destination?.value ?? null,
        port: parsePort(rule.dport?.value),
        sourceRanges: [],
        action: 'forward',
        via: ps.kind,
      })
      if (type === 'ClusterIP') {
        if (ps.kind === 'svl') g.itp = 'Local'
        else if (ps.kind === 'svc') g.itp ??= 'Cluster'
      } else if (ps.kind === 'svc') {
        // ≤1.23 sent external traffic straight to KUBE-SVC unless ETP=Local (which went through KUBE-XLB).
        g.etp ??= 'Cluster'
      }
      continue
    }
    if (isMasqueradeMarking(rule) && comment?.spn) {
      // ≤1.23: masquerade rules sat in KUBE-SERVICES before the jump (spec §2.7, fixtures/iptables/handmade-legacy-xlb);
      // in 2015 they set the mark directly.
      if (rule.target === 'MARK') noteMarkTarget(rule)
      if (comment.kind === 'cluster-ip') noteInternalMasquerade(rule)
      byNameLater.push({spn: comment.spn, protocol: rule.protocol?.value ?? null, rule})
      continue
    }
    if (rule.target === KUBE_NODEPORTS) {
      // The last rule: `--dst-type LOCAL` for every address, or one `-d NODEIP` per address (spec §2.3).
      const dstType = findMatch(rule, '--dst-type')
      if (rule.destination && !rule.destination.negated) {
        ;(node.nodePortAddresses ??= []).push(rule.destination.value)
      } else if (dstType && !dstType.negated && dstType.values[0] === 'LOCAL') {
        node.nodePortAddresses ??= []
        if (family === 'IPv4')
          node.localhostNodePorts =
            rule.destination?.negated && rule.destination.value === LOCALHOST_V4
              ? false
              : (node.localhostNodePorts ?? true)
      }
      continue
    }
    notUnderstood(rule)
  }

  // ---- 3. nat KUBE-NODEPORTS: NodePort frontends.
  for (const rule of liveTarget(KUBE_NODEPORTS)?.rules ?? []) {
    const comment = commentOf(rule)
    const ps = rule.target ? perServiceChain(rule.target) : null
    if (ps) {
      const g = groupOf(ps.hash)
      noteRef(g, rule)
      nameGroup(g, rule)
      if (ps.kind === 'xlb') g.etp = 'Local'
      else if (ps.kind === 'svc') g.etp ??= 'Cluster' // ≤1.23: KUBE-MARK-MASQ, then straight to KUBE-SVC
      if (
        rule.destination &&
        !rule.destination.negated &&
        rule.destination.value === LOCALHOST_V4
      ) {
        // The localhost copy of a NodePort (spec §2.4, fixtures/iptables/upstream-overall) is a node setting, not another frontend.
        node.localhostNodePorts = true
        continue
      }
      addFrontend(g, {
        type: 'NodePort',
        ip: rule.destination && !rule.destination.negated ? rule.destination.value : null,
        port: parsePort(rule.dport?.value),
        sourceRanges: [],
        action: 'forward',
        via: ps.kind,
      })
      continue
    }
    if (isMasqueradeMarking(rule) && comment?.spn) {
      if (rule.target === 'MARK') noteMarkTarget(rule)
      byNameLater.push({spn: comment.spn, protocol: rule.protocol?.value ?? null, rule})
      continue
    }
    notUnderstood(rule)
  }

  // ---- 4. each group's chains, once.
  /** The live SEP chains some group jumps to carry this in passMark; when they are all of them, no SEP chain is an orphan. */
  const jumpedMark = ++lastPassMark
  let jumpedSeps = 0
  /** Reported once the filter table says whether the service has endpoints at all. */
  const emptyDispatchChains: Array<{g: Group; chain: IptablesChain}> = []
  const noteSepJump = (g: Group, sep: string, local: boolean): EndpointDraft => {
    // Affinity and SVL rules jump to the chains the SVC rules do: the group's draft is found again.
    // The chain is looked up first: a draft is then found again by its chain, one pointer compared
    // per draft, not by its name (the names are cut from the dump, and comparing two of them reads
    // both places in the text: ~50 ms of a 10,000-service read).
    const chain = natChains.get(sep)
    let ep: EndpointDraft | undefined
    if (g.endpointBySep !== null) ep = g.endpointBySep.get(sep)
    else if (chain !== undefined) ep = findDraftOfChain(g.endpoints, chain)
    else ep = g.endpoints.find((e) => e.chain === undefined && e.sep === sep)
    if (ep === undefined) {
      if (chain !== undefined && chain.deletedLine === null && chain.passMark !== jumpedMark) {
        chain.passMark = jumpedMark
        jumpedSeps++
      }
      ep = {
        sep,
        chain,
        ip: '',
        port: null,
        written: null,
        inLocal: false,
        index: g.endpoints.length,
      }
      g.endpoints.push(ep)
      if (g.endpointBySep !== null) g.endpointBySep.set(sep, ep)
      else if (g.endpoints.length > SCANNED_ENDPOINTS)
        g.endpointBySep = new Map(g.endpoints.map((e) => [e.sep, e]))
    }
    if (local) ep.inLocal = true
    return ep
  }
  const readDispatchChain = (g: Group, chain: IptablesChain, kind: 'svc' | 'svl' | 'xlb'): void => {
    const local = kind !== 'svc'
    if (kind === 'xlb') g.etp = 'Local'
    // Only the ClusterIP's own chain says something about the detector: kube-proxy writes the
    // "! -s podCIDR" masquerade rule into it. A KUBE-SVC chain reached only from KUBE-EXT (ITP=Local
    // without local endpoints, and an externalIP or NodePort) has none whatever the detector, and
    // taking it for evidence read a node's dump of such services as localDetector "none".
    else if (g.frontends.some((f) => f.type === 'ClusterIP' && f.via === kind))
      node.sawInternalChain = true
    let cascade: Cascade | null = null
    for (let i = 0, n = chain.ruleCount; i < n; i++) {
      const rule = chain.ruleAt(i)
      noteRef(g, rule)
      nameGroup(g, rule)
      const target = rule.target ?? ''
      if (isMasqueradeMarking(rule)) {
        if (target === 'MARK') noteMarkTarget(rule)
        if (commentOf(rule)?.kind === 'cluster-ip') noteInternalMasquerade(rule)
        else if (kind === 'xlb' && rule.source && !rule.source.negated)
          node.podCIDRs.add(rule.source.value)
        continue
      }
      if (target === KUBE_MARK_DROP) {
        g.localDrop = true
        continue
      }
      if (target.startsWith(SEP_PREFIX)) {
        const ep = noteSepJump(g, target, local)
        if (findMatch(rule, '--rcheck')) {
          g.affinity = true
          const seconds = parsePort(findMatch(rule, '--seconds')?.values[0])
          if (seconds !== null) g.affinitySeconds = seconds
          continue
        }
        const p = findMatchValue(rule, '--probability')
        let probability: number | null = null
        if (p !== undefined) {
          probability = Number(p)
          if (!Number.isFinite(probability) || probability < 0 || probability > 1) {
            warn(
              'IPT_BAD_PROBABILITY',
              `--probability ${p} is not a number between 0 and 1; the rule is read as unconditional`,
              rule.line,
            )
            probability = null
          }
        }
        cascade ??= {chain: chain.name, probabilities: [], lines: [], endpoints: []}
        cascade.probabilities.push(probability)
        cascade.lines.push(rule.line)
        cascade.endpoints.push(ep)
        continue
      }
      const into = perServiceChain(target)
      if (kind === 'xlb' && into?.kind === 'svc') {
        // ≤1.23 KUBE-XLB short-circuits pod and LOCAL traffic to the cluster chain (fixtures/iptables/fragment-grep-xlb).
        if (rule.source && !rule.source.negated) {
          node.podCIDRs.add(rule.source.value)
          node.detector ??= 'cidr'
        } else if (rule.inInterface && !rule.inInterface.negated)
          noteInterface(rule.inInterface.value)
        continue
      }
      warn(
        'IPT_UNKNOWN_RULE',
        `rule in ${chain.name} not understood (target ${target || 'none'}); kept out of the service model`,
        rule.line,
      )
    }
    if (chain.ruleCount === 0) emptyDispatchChains.push({g, chain})
    if (kind === 'svc') g.cascade = cascade
    else if (cascade !== null) g.localCascade = cascade
  }

  // The work per group (per chain, per endpoint) is a closure called for each, not a loop body in
  // buildFamily: V8 optimises a closure after a few calls, while a loop in this once-called
  // function runs unoptimised until on-stack replacement, and again after each deopt as the next
  // stage meets code it has no type feedback for.
  const readGroupChains = (g: Group): void => {
    const {svc, svl, ext, fw, xlb} = g.chains
    if (svc) readDispatchChain(g, svc, 'svc')
    if (svl) readDispatchChain(g, svl, 'svl')
    if (xlb) readDispatchChain(g, xlb, 'xlb')
    if (ext) {
      for (const rule of ext.rules) {
        noteRef(g, rule)
        const comment = commentOf(rule)
        nameGroup(g, rule)
        const into = rule.target ? perServiceChain(rule.target) : null
        const srcTypeLocal = findMatch(rule, '--src-type')?.values[0] === 'LOCAL'
        if (rule.target === KUBE_MARK_MASQ) {
          if (comment?.kind === 'ext-masquerade' && !srcTypeLocal) g.etp ??= 'Cluster'
          else if (srcTypeLocal || comment?.kind === 'ext-local-masquerade') g.etp = 'Local'
        } else if (into?.kind === 'svl') {
          g.etp = 'Local'
        } else if (into?.kind === 'svc') {
          if (rule.source && !rule.source.negated) {
            // "pod traffic for C external destinations": the short-circuit of ETP=Local (spec §2.4).
            g.etp = 'Local'
            node.podCIDRs.add(rule.source.value)
            node.detector ??= 'cidr'
          } else if (rule.inInterface && !rule.inInterface.negated) {
            g.etp = 'Local'
            noteInterface(rule.inInterface.value)
          } else if (srcTypeLocal) {
            g.etp = 'Local'
          } else {
            g.etp ??= 'Cluster'
          }
        } else {
          warn(
            'IPT_UNKNOWN_RULE',
            `rule in ${ext.name} not understood (target ${rule.target ?? 'none'}); kept out of the service model`,
            rule.line,
          )
        }
      }
      if (ext.ruleCount === 0)
        warn('IPT_EMPTY_CHAIN', `${ext.name} is declared but has no rules`, ext.line)
    }
    if (fw) {
      for (const rule of fw.rules) {
        noteRef(g, rule)
        nameGroup(g, rule)
        const into = rule.target ? perServiceChain(rule.target) : null
        // `-s 198.51.100.7/32` is read as the address (rule.source drops /32): a range is a CIDR.
        if (into && into.kind !== 'fw' && rule.source && !rule.source.negated)
          g.ranges.push(toCidr(rule.source.value))
        if (into?.kind === 'xlb') g.etp = 'Local'
        else if (into?.kind === 'svc') g.etp ??= 'Cluster'
      }
    }
  }
  for (const g of groups.values()) readGroupChains(g)

  // SEP chains: the DNAT gives the endpoint.
  const readSepChain = (g: Group, ep: EndpointDraft): void => {
    const chain = ep.chain
    if (chain === undefined || chain.deletedLine !== null) {
      warn(
        'IPT_MISSING_CHAIN',
        `${ep.sep} is jumped to but ${chain ? 'deleted by -X' : 'never declared'}; no endpoint is read for it`,
        g.chains.svc?.line ?? g.chains.svl?.line ?? null,
      )
      return
    }
    let dnat: IptablesRule | null = null
    for (let i = 0, n = chain.ruleCount; i < n; i++) {
      const rule = chain.ruleAt(i)
      noteRef(g, rule)
      nameGroup(g, rule)
      if (rule.target === 'DNAT') dnat ??= rule
      else if (rule.target === 'MARK' && isMasqueradeMarking(rule))
        noteMarkTarget(rule) // 2015 hairpin: MARK, not KUBE-MARK-MASQ (fixtures/iptables/legacy-k8s-1.1)
      else if (rule.target !== KUBE_MARK_MASQ)
        warn(
          'IPT_UNKNOWN_RULE',
          `rule in ${chain.name} not understood (target ${rule.target ?? 'none'})`,
          rule.line,
        )
    }
    const to = dnat ? findTargetValue(dnat, '--to-destination') : undefined
    const hostPort = to ? splitHostPort(to) : null
    if (!dnat || !to || !hostPort) {
      warn(
        chain.ruleCount === 0 ? 'IPT_EMPTY_CHAIN' : 'IPT_SEP_NO_DNAT',
        chain.ruleCount === 0
          ? `${chain.name} is declared but has no rules; it is not an endpoint`
          : `${chain.name} has no DNAT --to-destination; it is not an endpoint`,
        chain.line,
      )
      return
    }
    ep.ip = hostPort.ip
    ep.port = hostPort.port
    ep.written = to
  }
  groups.forEach((g) => {
    const endpoints = g.endpoints
    for (let i = 0; i < endpoints.length; i++) readSepChain(g, endpoints[i]!)
  })
  // As many live SEP chains jumped to as there are: none is an orphan, and the nat chains need no second pass.
  for (const chain of focused || jumpedSeps === liveSepChains ? [] : natChains.values()) {
    if (
      chain.deletedLine === null &&
      chain.name.startsWith(SEP_PREFIX) &&
      chain.passMark !== jumpedMark
    ) {
      warn(
        'IPT_ORPHAN_CHAIN',
        `${chain.name} is not jumped to by any service chain; not read as an endpoint`,
        chain.line,
      )
    }
  }

  // ---- 5. filter: no-endpoint REJECT / no-local-endpoint DROP, health checks, firewall.
  const bySpn = new Map<string, Group>()
  for (const g of groups.values())
    if (g.spn !== null && g.protocol !== null) bySpn.set(`${g.spn}|${g.protocol}`, g)
  const groupBySpn = (spn: string, protocol: string): Group => {
    const key = `${spn}|${protocol}`
    let g = bySpn.get(key)
    if (!g) {
      g = emptyGroup(null)
      g.spn = spn
      g.protocol = protocol
      bySpn.set(key, g)
      groups.set(`name:${key}`, g)
    }
    return g
  }
  for (const {spn, protocol, rule} of byNameLater) {
    const g = protocol ? bySpn.get(`${spn}|${protocol}`) : undefined
    if (g) noteRef(g, rule)
    else if (!focused)
      warn(
        'IPT_UNATTRIBUTED_RULE',
        `masquerade rule for ${spn}, but no other rule of that service port; not read as a service`,
        rule.line,
        'info',
      )
  }
  const healthChecks: Array<{spn: string; port: number | null; rule: IptablesRule}> = []
  const filterChains = filter?.chains ?? new Map<string, IptablesChain>()
  for (const chainName of [KUBE_SERVICES, KUBE_EXTERNAL_SERVICES]) {
    const chain = filterChains.get(chainName)
    for (const rule of chain?.rules ?? []) {
      const comment = commentOf(rule)
      const action = rule.target === 'REJECT' ? 'reject' : rule.target === 'DROP' ? 'drop' : null
      if (
        !comment?.spn ||
        action === null ||
        (comment.kind !== 'no-endpoints' && comment.kind !== 'no-local-endpoints')
      ) {
        warn(
          'IPT_UNKNOWN_RULE',
          `rule in filter ${chainName} not understood; kept out of the service model`,
          rule.line,
        )
        continue
      }
      const protocol = rule.protocol?.value ?? null
      if (protocol === null) {
        warn(
          'IPT_UNKNOWN_RULE',
          `"${rule.comment}" rule has no -p; cannot tell which service port it is for`,
          rule.line,
        )
        continue
      }
      const g = groupBySpn(comment.spn, protocol)
      noteRef(g, rule)
      const port = parsePort(rule.dport?.value)
      const nodePort = !rule.destination && findMatch(rule, '--dst-type')?.values[0] === 'LOCAL'
      const ip = rule.destination && !rule.destination.negated ? rule.destination.value : null
      let fe = nodePort
        ? findFrontend(g, nodePortKey(port), (f) => f.type === 'NodePort' && f.port === port)
        : findFrontend(
            g,
            addressKey(ip, port),
            (f) => f.type !== 'NodePort' && f.ip === ip && f.port === port,
          )
      if (!fe) {
        // No nat rule names this address: a service without endpoints has no nat chains (spec §2.4).
        // In filter KUBE-SERVICES it is the ClusterIP (≤1.2x also put externalIPs there, so only the
        // first address is taken as the ClusterIP); in KUBE-EXTERNAL-SERVICES an externalIP and a
        // LoadBalancer IP look the same, hence "External".
        const type: FrontendType = nodePort
          ? 'NodePort'
          : chainName === KUBE_SERVICES &&
              findFrontend(g, typeKey('ClusterIP'), (f) => f.type === 'ClusterIP') === undefined
            ? 'ClusterIP'
            : 'External'
        fe = addFrontend(g, {
          type,
          ip: nodePort ? null : ip,
          port,
          sourceRanges: [],
          action,
          via: null,
        })
      }
      fe.action = action
      if (comment.kind === 'no-local-endpoints') {
        if (fe.type === 'ClusterIP') g.itp = 'Local'
        else g.etp = 'Local'
      }
    }
  }
  for (const rule of filterChains.get(KUBE_NODEPORTS)?.rules ?? []) {
    const comment = commentOf(rule)
    if (comment?.kind === 'health-check' && comment.spn && rule.target === 'ACCEPT') {
      healthChecks.push({spn: comment.spn, port: parsePort(rule.dport?.value), rule})
    } else {
      warn(
        'IPT_UNKNOWN_RULE',
        'rule in filter KUBE-NODEPORTS not understood; kept out of the service model',
        rule.line,
      )
    }
  }
  const spnGroups = new Map<string, Group[]>()
  for (const g of groups.values()) {
    if (!g.spn) continue
    const list = spnGroups.get(g.spn)
    if (list) list.push(g)
    else spnGroups.set(g.spn, [g])
  }
  for (const hc of healthChecks) {
    const gs = (spnGroups.get(hc.spn) ?? []).filter((g) => g.frontends.length > 0)
    if (gs.length === 0) {
      warn(
        'IPT_HEALTH_CHECK_ONLY',
        `health check node port ${hc.port ?? '?'} for ${hc.spn}, but no other rule of that service; not read as a service`,
        hc.rule.line,
        'info',
      )
      continue
    }
    // The health check is always tcp (spec §2.4) and belongs to every protocol of that port name.
    // A health check alone is not a service (fixtures/iptables/upstream-parse-basic: ns2/svc2).
    for (const g of gs) {
      g.healthCheckNodePort = hc.port
      noteRef(g, hc.rule)
    }
  }
  for (const rule of filterChains.get(KUBE_PROXY_FIREWALL)?.rules ?? []) {
    const comment = commentOf(rule)
    const gs = comment?.spn ? spnGroups.get(comment.spn) : undefined
    if (gs) for (const g of gs) noteRef(g, rule)
    else
      warn(
        'IPT_UNKNOWN_RULE',
        'rule in filter KUBE-PROXY-FIREWALL names no service kp knows; kept out of the service model',
        rule.line,
      )
  }
  for (const rule of filterChains.get(KUBE_FORWARD)?.rules ?? []) {
    const ct = findMatch(rule, '--ctstate')
    if (ct && !ct.negated && ct.values[0] === 'INVALID' && rule.target === 'DROP')
      node.conntrackInvalidDrop = true
  }
  if (filterChains.has(KUBE_FORWARD)) node.conntrackInvalidDrop ??= false
  for (const rule of filterChains.get(KUBE_FIREWALL)?.rules ?? []) {
    // kube-proxy adds "block incoming localnet connections" only for IPv4 with localhost NodePorts on (spec §2.3).
    if (family === 'IPv4' && rule.comment === 'block incoming localnet connections')
      node.localhostNodePorts ??= true
  }

  // ---- node settings from the fixed nat chains.
  for (const rule of liveTarget(KUBE_MARK_MASQ)?.rules ?? []) {
    if (rule.target === 'MARK') noteMarkTarget(rule)
  }
  const postrouting = [
    ...(liveTarget(KUBE_POSTROUTING)?.rules ?? []),
    ...(natChains.get('POSTROUTING')?.rules.filter((r) => r.comment === SNAT_COMMENT) ?? []),
  ]
  for (const rule of postrouting) {
    if (rule.target === 'MASQUERADE')
      node.randomFully =
        findTargetOption(rule, '--random-fully') !== undefined || (node.randomFully ?? false)
    const mark = findMatch(rule, '--mark')
    if (mark?.values[0] && rule.target === 'MASQUERADE')
      node.masqueradeMark ??= markValue(mark.values[0]) // 2015-era: mark tested on the MASQUERADE rule itself
  }

  for (const {g, chain} of emptyDispatchChains) {
    if (focused && g.frontends.length === 0) continue
    // ≤1.2x still jumped into an empty KUBE-SVC for a service without endpoints (the filter REJECT
    // did the work): expected there, suspicious anywhere else.
    const rejected = g.frontends.some((f) => f.action === 'reject')
    warn(
      'IPT_EMPTY_CHAIN',
      `${chain.name} is declared but has no rules; no endpoints are read from it${rejected ? ' (the service has no endpoints: its traffic is rejected in the filter table)' : ''}`,
      chain.line,
      rejected ? 'info' : 'warning',
    )
  }

  // ---- 6. service ports.
  const servicePortOf = (g: Group): ServicePort | null => {
    if (g.frontends.length === 0) {
      const chainNames = chainNamesOf(g)
      if (chainNames.length > 0 && !focused)
        warn(
          'IPT_ORPHAN_CHAIN',
          `${chainNames.join(', ')} ${chainNames.length > 1 ? 'are' : 'is'} not reached from KUBE-SERVICES or KUBE-NODEPORTS; not read as a service`,
          Object.values(g.chains)[0]?.line ?? null,
        )
      return null
    }
    let protocol = g.protocol
    if (protocol === null && g.hash !== null && g.spn !== null) {
      // No rule carries -p (hand-trimmed dump): the hash tells which protocol the chains were made for.
      protocol = Object.keys(PROTOCOLS).find((p) => iptablesChainHash(g.spn!, p) === g.hash) ?? null
    }
    const firstLine = g.refLines[0] ?? null
    if (protocol === null || PROTOCOLS[protocol] === undefined) {
      warn(
        'IPT_UNKNOWN_PROTOCOL',
        `cannot tell the protocol of ${g.spn ?? chainNamesOf(g).join(', ')}${protocol ? ` ("${protocol}")` : ''}; read as TCP`,
        firstLine,
      )
    }
    const proto = PROTOCOLS[protocol ?? 'tcp'] ?? 'TCP'
    const names = g.spn !== null ? splitServicePortName(g.spn) : null
    if (g.spn !== null && g.hash !== null) {
      const expected = iptablesChainHash(g.spn, proto)
      if (expected !== g.hash) {
        const names = chainNamesOf(g)
        warn(
          'IPT_HASH_MISMATCH',
          `${names.length === 1 ? `${names[0]} does` : `chains ${names.join(', ')} do`} not carry the hash of "${g.spn}" ${proto.toLowerCase()} (expected ${expected}): hand-edited or corrupted dump?`,
          Object.values(g.chains)[0]?.line ?? firstLine,
        )
      }
    }
    if (g.spn === null)
      warn(
        'IPT_NO_NAME',
        `no comment names the service port of ${chainNamesOf(g).join(', ') || 'these rules'}; it is identified by its ClusterIP`,
        firstLine,
        'info',
      )

    // Endpoints and shares. The cluster path is the chain a ClusterIP connection goes to.
    const cluster = g.frontends.find((f) => f.type === 'ClusterIP' && f.action === 'forward')
    const local = g.localCascade
    const useLocal = (cluster?.via === 'svl' || g.cascade === null) && local !== null
    const steps = useLocal ? local : g.cascade
    /**
     * By endpoint index: the sum of the shares of the steps into each SEP chain. Not a field of the
     * drafts: a field that first holds 0 and then a fraction makes V8 change the shape of every draft.
     */
    const shares = steps !== null ? new Array<number>(g.endpoints.length).fill(0) : null
    if (steps !== null && shares !== null) {
      const result = effectiveShares(steps.probabilities)
      for (let i = 0; i < result.shares.length; i++)
        shares[steps.endpoints[i]!.index]! += result.shares[i]!
      if (result.unreachableFrom !== null) {
        const line = steps.lines[result.unreachableFrom]!
        warn(
          'IPT_UNREACHABLE_RULE',
          `${steps.chain}: the rule on line ${line} follows an unconditional one and is never reached`,
          line,
        )
      }
      if (Math.abs(result.total - 1) > SHARE_SUM_TOLERANCE) {
        warn(
          'IPT_SHARES_SUM',
          `the endpoint shares of ${steps.chain} sum to ${result.total.toFixed(9)}, not 1: the last rule of the cascade is not unconditional (cut-off or hand-edited chain?)`,
          steps.lines[steps.lines.length - 1]!,
        )
      }
    }
    const localPolicy = g.etp === 'Local' || g.itp === 'Local'
    const endpoints: Endpoint[] = []
    /** The addresses so far, once there are more than SCANNED_ENDPOINTS drafts; until then the endpoints are scanned (a set per service port cost more). */
    const seenIps = g.endpoints.length > SCANNED_ENDPOINTS ? new Set<string>() : null
    const seenIp = (ip: string): boolean => {
      if (seenIps !== null) return seenIps.has(ip)
      for (let i = 0; i < endpoints.length; i++) if (endpoints[i]!.ip === ip) return true
      return false
    }
    /** The ip:port of each endpoint, made once an address comes twice (endpointString is one-to-one: one ip:port is one ip and one port). */
    let seenEndpoints: Set<string> | null = null
    // A local endpoint on the local chain but not on a cluster chain that has endpoints is the
    // serving-terminating fallback (see markTerminatingFallbacks in ../nft/kube-proxy-table.ts).
    const clusterMembers =
      g.localCascade !== null && g.cascade !== null && g.cascade.endpoints.length > 0
        ? new Set(g.cascade.endpoints)
        : null
    for (const ep of g.endpoints) {
      if (ep.written === null) continue // the SEP chain is missing or has no DNAT (reported above)
      if (g.spn !== null) {
        const expected = iptablesEndpointHash(g.spn, proto, ep.written)
        if (ep.sep.length !== SEP_PREFIX.length + expected.length || !ep.sep.endsWith(expected)) {
          warn(
            'IPT_HASH_MISMATCH',
            `${ep.sep} does not carry the hash of "${g.spn}" ${proto.toLowerCase()} ${ep.written} (expected ${SEP_PREFIX}${expected}): hand-edited or corrupted dump?`,
            ep.chain?.line ?? null,
          )
        }
      }
      // Two SEP chains for one ip:port (a hand-edited dump) give one endpoint; the hash check above names the odd one.
      // A new address is a new endpoint: the ip:port strings are only made for an address seen before.
      if (seenIp(ep.ip)) {
        seenEndpoints ??= new Set(endpoints.map((e) => endpointString(e.ip, e.port)))
        const key = endpointString(ep.ip, ep.port)
        if (seenEndpoints.has(key)) continue
        seenEndpoints.add(key)
      } else {
        seenIps?.add(ep.ip)
        seenEndpoints?.add(endpointString(ep.ip, ep.port))
      }
      endpoints.push({
        ip: ep.ip,
        port: ep.port,
        // Locality is only visible under a Local policy: the SVL/XLB members are this node's.
        local: localPolicy ? ep.inLocal : null,
        // An endpoint that is not on the cluster path (only in SVL) gets no new connection from it.
        share: shares !== null ? shares[ep.index]! : null,
        weight: null,
        state:
          clusterMembers !== null && ep.inLocal && !clusterMembers.has(ep)
            ? 'serving-terminating'
            : null,
      })
    }
    if (g.localDrop) {
      // 1.24 SVL / ≤1.23 XLB "has no local endpoints" -> KUBE-MARK-DROP: external traffic is dropped.
      for (const fe of g.frontends)
        if (fe.type !== 'ClusterIP' && (fe.via === 'xlb' || fe.via === 'ext' || fe.via === 'fw'))
          fe.action = 'drop'
    }
    // kube-proxy also lets the LB IPs themselves through (`-s LBIP`): they are not ranges.
    const lbCidrs = new Set<string>()
    for (const f of g.frontends)
      if (f.type === 'LoadBalancer' && f.ip !== null) lbCidrs.add(toCidr(f.ip))
    const rangesFromFw = g.ranges.filter((r) => !lbCidrs.has(r))
    const frontends: Frontend[] = g.frontends.map((f) => ({
      type: f.type,
      ip: f.ip,
      port: f.port,
      sourceRanges: f.via === 'fw' ? [...rangesFromFw] : [],
      action: f.action,
    }))
    const externallyVisible = g.frontends.some((f) => f.type !== 'ClusterIP')
    return {
      namespace: names?.namespace ?? null,
      name: names?.name ?? null,
      portName: names?.portName ?? null,
      protocol: proto,
      family,
      frontends,
      healthCheckNodePort: g.healthCheckNodePort,
      internalTrafficPolicy: g.itp,
      externalTrafficPolicy: externallyVisible ? g.etp : null,
      sessionAffinity: g.affinity ? {type: 'ClientIP', timeoutSeconds: g.affinitySeconds} : null,
      scheduler: null,
      endpoints,
      rules: servicesOnly ? [] : sourceRefs(path, g.refLines, refsPerPort),
    }
  }
  const services: ServicePort[] = []
  /** By service: the line of the first rule read for it, where its diagnostics point (not rules[0]: refs are in line order). */
  const firstLines: Array<number | null> = []
  for (const g of groups.values()) {
    const sp = servicePortOf(g)
    if (sp) {
      services.push(sp)
      firstLines.push(g.refLines[0] ?? null)
    }
  }

  // Two service ports on one address:port/protocol: kube-proxy never writes that, so the dump was
  // edited or mixes syncs (fixtures/iptables/upstream-sortrules-transition: 192.168.99.22).
  const owners = new Map<string, string>()
  services.forEach((sp, i) => {
    const who = `${sp.namespace ?? '?'}/${sp.name ?? '?'}:${sp.portName ?? '?'}`
    for (const fe of sp.frontends) {
      const where = `${fe.type === 'NodePort' ? `NodePort ${fe.ip ?? '*'}` : fe.ip}:${fe.port ?? '?'}/${sp.protocol}`
      const other = owners.get(where)
      if (other !== undefined && other !== who)
        warn(
          'IPT_FRONTEND_CONFLICT',
          `${where} belongs to both ${other} and ${who}`,
          firstLines[i] ?? null,
        )
      else owners.set(where, who)
    }
  })

  // ---- 7. foreign rules and chains, in one pass over every rule.
  const masqMark = node.masqueradeMark
  const noteForeign = (table: IptablesTable, chain: IptablesChain): void => {
    if (chain.deletedLine !== null) return
    const ownChain = isKubeProxyChain(chain.name)
    if (!ownChain && chain.name.startsWith(KUBE_CHAIN_PREFIX)) {
      const ipvs = IPVS_MODE_CHAINS.has(chain.name) || chain.name.startsWith(KUBE_IPVS_PREFIX)
      foreign.push({
        kind: ipvs ? 'leftover' : 'iptables-chain',
        name: `${table.name}/${chain.name}`,
        reason: ipvs
          ? "a chain of kube-proxy's IPVS mode, left over in an iptables-mode dump"
          : "a KUBE-* chain that kube-proxy's iptables mode does not write",
        source: at(chain.line),
      })
    }
    // Exact copies of one rule are checked for in every chain but the per-service ones (~95 % of a
    // dump's rules, which kube-proxy rewrites whole on each sync): thousands of copies of one jump
    // or DROP are how a node with two iptables versions or backends shows (test/readers/iptables/repeated-rules.test.ts).
    const copies: RuleCopies | null =
      chain.ruleCount > 1 && !chain.name.startsWith(SEP_PREFIX) && !isPerServiceChain(chain.name)
        ? new Map()
        : null
    for (let i = 0, n = chain.ruleCount; i < n; i++) {
      const rule = chain.ruleAt(i)
      if (copies !== null) countRuleCopy(copies, rule)
      const target = rule.target
      if (!ownChain) {
        if (target && isKubeProxyChain(target)) {
          const own = OWN_BUILTIN_JUMPS.get(`${table.name}/${chain.name}/${target}`)
          if (chain.builtin && own !== undefined && (own === null || rule.comment === own)) continue
          foreign.push({
            kind: 'iptables-rule',
            name: `${table.name}/${chain.name} -j ${target}`,
            reason: `jumps into kube-proxy's ${target} from a chain kube-proxy does not use for that`,
            source: at(rule.line),
          })
          continue
        }
        const mark = findMatch(rule, '--mark')
        if (
          table.name === 'nat' &&
          chain.name === 'POSTROUTING' &&
          rule.comment === SNAT_COMMENT &&
          rule.target === 'MASQUERADE'
        )
          continue // 2015's own rule
        if (
          mark &&
          masqMark !== null &&
          mark.values[0] !== undefined &&
          markValue(mark.values[0]) === masqMark
        ) {
          foreign.push({
            kind: 'iptables-rule',
            name: `${table.name}/${chain.name}`,
            reason: `matches kube-proxy's masquerade mark ${masqMark}`,
            source: at(rule.line),
          })
        }
        continue
      }
      if (
        target &&
        target !== chain.name &&
        !isKubeProxyChain(target) &&
        !BUILTIN_CHAINS.has(target) &&
        table.chains.has(target)
      ) {
        foreign.push({
          kind: 'iptables-rule',
          name: `${table.name}/${chain.name} -j ${target}`,
          reason: `kube-proxy's ${chain.name} jumps to ${target}, a chain kube-proxy does not write`,
          source: at(rule.line),
        })
      }
    }
    if (copies !== null) reportRuleCopies(copies, table, chain, warn)
  }
  if (!focused && !servicesOnly)
    ruleset.tables.forEach((table) => table.chains.forEach((chain) => noteForeign(table, chain)))
  return {services, foreign, diagnostics, node}
}

/** Chains kubelet writes whatever kube-proxy's mode is (or kube-proxy's canary): they do not show kube-proxy's iptables mode. */
const NOT_KUBE_PROXY_EVIDENCE: ReadonlySet<string> = new Set([
  KUBE_KUBELET_CANARY,
  KUBE_FIREWALL,
  KUBE_MARK_DROP,
  KUBE_PROXY_CANARY,
])

/** Why this dump may not be an iptables-mode kube-proxy dump; null when it is one. */
function notIptablesMode(ruleset: IptablesRuleset, path: string): Diagnostic | null {
  let kubeChains = 0
  let kubeletOnly = 0
  let perService = 0
  let ipvsLine: number | null = null
  let chains = 0
  // In a callback, as in buildFamily: this runs once per dump, over every chain.
  const count = (chain: IptablesChain): void => {
    chains++
    if (!chain.name.startsWith(KUBE_CHAIN_PREFIX)) return
    if (NOT_KUBE_PROXY_EVIDENCE.has(chain.name)) {
      kubeletOnly++
      return
    }
    kubeChains++
    if (chain.name.startsWith(SEP_PREFIX) || isPerServiceChain(chain.name)) perService++
    if (
      ipvsLine === null &&
      (IPVS_MODE_CHAINS.has(chain.name) || chain.name.startsWith(KUBE_IPVS_PREFIX))
    )
      ipvsLine = chain.line
  }
  ruleset.tables.forEach((table) => table.chains.forEach(count))
  // Only a dump without per-service chains can be IPVS mode's; do not scan the rules of the others.
  if (ipvsLine === null && perService === 0) {
    for (const rule of ruleset.rules) {
      const set = findMatch(rule, '--match-set')
      if (set?.values[0]?.startsWith(KUBE_CHAIN_PREFIX)) {
        ipvsLine = rule.line
        break
      }
    }
  }
  if (kubeChains === 0) {
    const why =
      kubeletOnly > 0
        ? `its only KUBE-* chains are kubelet's (KUBE-KUBELET-CANARY, KUBE-FIREWALL, ...); kube-proxy may run in nftables or IPVS mode on this node`
        : `none of its ${chains} chain(s) is a KUBE-* chain (is kube-proxy running in iptables mode on this node, and is this the right backend, legacy or nf_tables?)`
    return diag('error', 'IPT_NO_KUBE_PROXY', `no kube-proxy rules in this dump: ${why}`, {
      path,
      line: 1,
    })
  }
  if (ipvsLine !== null && perService === 0) {
    return diag(
      'error',
      'IPT_IPVS_MODE',
      'this iptables dump comes from kube-proxy in IPVS mode (KUBE-LOOP-BACK / KUBE-IPVS-* chains, --match-set KUBE-* ipsets) and has no per-service chains; read it together with `ipvsadm -Sn` and `ipset save` (one -f each)',
      {path, line: ipvsLine},
    )
  }
  return null
}

/** Stage 2: one node's iptables-save sources -> ProxyState (mode 'iptables'). */
export function buildIptablesState(parsed: ParsedSource[], opts: ReadOptions): ProxyState {
  const state = emptyState('iptables')
  const node = emptyNodeInfo()
  const podCIDRs = new Set<string>()
  let masqueradeAllVotes: boolean | null = null
  const seenFamilies = new Map<string, string>()
  for (const p of parsed) {
    if (p.format !== 'iptables-save' || p.data === null || typeof p.data !== 'object') {
      state.diagnostics.push(
        diag(
          'warning',
          'IPT_WRONG_SOURCE',
          `${p.source.path} is ${p.format} input, which an iptables-mode state does not read; ignored`,
          {path: p.source.path, line: 1},
        ),
      )
      continue
    }
    const ruleset = p.data as IptablesRuleset
    const path = p.source.path
    const problem = notIptablesMode(ruleset, path)
    if (problem) {
      state.diagnostics.push(problem)
      continue
    }
    const family = ruleset.family ?? 'IPv4'
    const earlier = seenFamilies.get(family)
    if (earlier !== undefined) {
      state.diagnostics.push(
        diag(
          'warning',
          'IPT_DUPLICATE_FAMILY',
          `${path} is a second ${family} dump for this node (after ${earlier}); its service ports are listed as well, so some may appear twice`,
          {path, line: 1},
        ),
      )
    }
    seenFamilies.set(family, path)
    const r = buildFamily(
      ruleset,
      path,
      family,
      opts.servicesOnly === true,
      opts.refsPerPort ?? Number.POSITIVE_INFINITY,
    )
    // concat, not push(...): a large node has more service ports than a call takes arguments.
    state.services = state.services.concat(r.services)
    state.foreign = state.foreign.concat(r.foreign)
    state.diagnostics = state.diagnostics.concat(r.diagnostics)
    const e = r.node
    // Rule addresses drop /32 and /128; the model's pod CIDRs are CIDRs (one place for every rule that shows one).
    for (const c of e.podCIDRs) podCIDRs.add(toCidr(c))
    node.localDetector ??= e.detector
    node.localInterface ??= e.localInterface
    node.masqueradeMark ??= e.masqueradeMark
    node.randomFully ??= e.randomFully
    node.localhostNodePorts ??= e.localhostNodePorts
    node.conntrackInvalidDrop ??= e.conntrackInvalidDrop
    if (e.nodePortAddresses !== null)
      node.nodePortAddresses = [...(node.nodePortAddresses ?? []), ...e.nodePortAddresses]
    // masquerade-all: every internal masquerade rule lacks the local-detector part (spec §2.4).
    if (e.masqMatchedAll && !e.masqMatchedLocal) masqueradeAllVotes = true
    else if (e.masqMatchedLocal) masqueradeAllVotes ??= false
    if (e.sawInternalChain && e.detector === null && !e.masqMatchedAll && !e.masqMatchedLocal) {
      // Internal chains exist, yet no rule shows a detector and none masquerades all: the no-op detector.
      node.localDetector ??= 'none'
      masqueradeAllVotes ??= false // masquerade-all would have written the rule without a detector part
    }
  }
  node.podCIDRs = [...podCIDRs]
  node.masqueradeAll = masqueradeAllVotes
  if (node.nodePortAddresses) node.nodePortAddresses = [...new Set(node.nodePortAddresses)]
  state.node = node
  return state
}
