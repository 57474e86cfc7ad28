/**
 * kube-proxy's ipsets of one node (ipset save|list), indexed by address and port, and the
 * cross-checks of those sets against the virtual servers and service ports built from them.
 */
import {pushTo} from '../../core/arrays.js'
import {diag} from '../../core/state.js'
import type {Diagnostic, Family, ServicePort, SourceRef} from '../../model/types.js'
import type {IpsetDump, IpsetMember} from '../ipset/parse.js'
import type {ParsedSource} from '../types.js'
import {endpointKey} from './protocol.js'
import {KUBE_CHAIN_PREFIX} from '../../kube-proxy/iptables-names.js'
import {ipvsSetName} from '../../kube-proxy/ipvs-names.js'
import type {KubeVirtualServer} from './virtual-servers.js'

const KNOWN_SET_BASES = [
  'LOOP-BACK',
  'CLUSTER-IP',
  'EXTERNAL-IP',
  'EXTERNAL-IP-LOCAL',
  'LOAD-BALANCER',
  'LOAD-BALANCER-LOCAL',
  'LOAD-BALANCER-FW',
  'LOAD-BALANCER-SOURCE-CIDR',
  'LOAD-BALANCER-SOURCE-IP',
  'NODE-PORT-TCP',
  'NODE-PORT-UDP',
  'NODE-PORT-LOCAL-TCP',
  'NODE-PORT-LOCAL-UDP',
  'NODE-PORT-SCTP-HASH',
  'NODE-PORT-LOCAL-SCTP-HASH',
  // The bitmap:port SCTP sets of releases before PR #81477.
  'NODE-PORT-SCTP',
  'NODE-PORT-LOCAL-SCTP',
  'HEALTH-CHECK-NODE-PORT',
  'IPVS-IPS',
]
const KNOWN_SET_NAMES = new Set(
  KNOWN_SET_BASES.flatMap((b) => [ipvsSetName(b, 'IPv4'), ipvsSetName(b, 'IPv6')]),
)

/** A member of one of kube-proxy's sets, with where it was read (for the rules it classifies). */
export interface SetMember extends IpsetMember {
  source: SourceRef
}

interface SetIndex {
  type: string
  all: SetMember[]
  /** `ip|PROTO|port` (or the bare address / port for hash:ip and bitmap:port) → members. */
  byKey: Map<string, SetMember[]>
}

/** kube-proxy's sets of every ipset dump of the node, indexed for lookups by address and port. */
export class KubeSets {
  private readonly sets = new Map<string, SetIndex>()

  constructor(dumps: ParsedSource<IpsetDump>[], diagnostics: Diagnostic[]) {
    const unknown = new Set<string>()
    for (const p of dumps) {
      for (const set of p.data.sets) {
        if (!set.name.startsWith(KUBE_CHAIN_PREFIX)) continue
        if (!KNOWN_SET_NAMES.has(set.name)) unknown.add(set.name)
        let index = this.sets.get(set.name)
        if (!index) {
          index = {type: set.type, all: [], byKey: new Map()}
          this.sets.set(set.name, index)
        }
        for (const m of set.members) {
          const key = memberKey(set.type, m)
          if (key === null) continue
          const member = {...m, source: {path: p.source.path, line: m.line}}
          pushTo(index.byKey, key, member)
          index.all.push(member)
        }
      }
    }
    if (unknown.size > 0) {
      diagnostics.push(
        diag(
          'info',
          'IPSET_UNKNOWN_KUBE_SET',
          `KUBE-* sets this kp does not know (another release, or another tool), kept but not used: ${[...unknown].join(', ')}`,
          null,
        ),
      )
    }
  }

  /** Whether the dumps hold kube-proxy's sets for this family at all. */
  known(family: Family): boolean {
    return this.sets.has(ipvsSetName('CLUSTER-IP', family))
  }

  hasSet(base: string, family: Family): boolean {
    return this.sets.has(ipvsSetName(base, family))
  }

  get(base: string, family: Family, key: string): SetMember[] {
    return this.sets.get(ipvsSetName(base, family))?.byKey.get(key) ?? []
  }

  all(base: string, family: Family): SetMember[] {
    return this.sets.get(ipvsSetName(base, family))?.all ?? []
  }
}

function memberKey(type: string, m: IpsetMember): string | null {
  if (type === 'bitmap:port') return m.port === null ? null : String(m.port)
  if (type === 'hash:ip') return m.ip
  if (m.ip === null || m.protocol === null || m.port === null) return null
  return endpointKey(m.ip, m.protocol, m.port)
}

/**
 * Every entry of the address sets and every NodePort has a virtual server (a.3, a.4); one that
 * does not means the dumps were taken at different times, or the listing is partial (`-t`).
 */
export function reportSetsWithoutVirtualServers(
  kubeVs: KubeVirtualServer[],
  sets: KubeSets,
  diagnostics: Diagnostic[],
): void {
  const addresses = new Set(kubeVs.map((vs) => endpointKey(vs.ip, vs.protocol, vs.port)))
  const nodePorts = new Set(kubeVs.map((vs) => `${vs.family} ${vs.protocol} ${vs.port}`))
  for (const family of ['IPv4', 'IPv6'] as const) {
    if (!sets.known(family)) continue
    const report = (base: string, missing: SetMember[]) => {
      if (missing.length === 0) return
      const shown = missing
        .slice(0, 5)
        .map((m) => m.text)
        .join(', ')
      diagnostics.push(
        diag(
          'warning',
          'IPVS_SET_WITHOUT_VIRTUAL_SERVER',
          `${missing.length} entr${missing.length === 1 ? 'y' : 'ies'} of ${ipvsSetName(base, family)} ha${missing.length === 1 ? 's' : 've'} no virtual server (${shown}${missing.length > 5 ? ', ...' : ''}): the dumps were taken at different times, or the ipvsadm listing is partial`,
          missing[0]!.source,
        ),
      )
    }
    for (const base of [
      'CLUSTER-IP',
      'EXTERNAL-IP',
      'EXTERNAL-IP-LOCAL',
      'LOAD-BALANCER',
      'NODE-PORT-SCTP-HASH',
    ]) {
      report(
        base,
        sets
          .all(base, family)
          .filter(
            (m) =>
              m.ip !== null &&
              m.protocol !== null &&
              m.port !== null &&
              !addresses.has(endpointKey(m.ip, m.protocol, m.port)),
          ),
      )
    }
    for (const protocol of ['TCP', 'UDP'] as const) {
      report(
        `NODE-PORT-${protocol}`,
        sets
          .all(`NODE-PORT-${protocol}`, family)
          .filter((m) => m.port !== null && !nodePorts.has(`${family} ${protocol} ${m.port}`)),
      )
    }
  }
}

/**
 * KUBE-HEALTH-CHECK-NODE-PORT holds bare ports: no IPVS-mode dump says whose they are, so they
 * reach a service port only through --cluster. The others are said, not dropped.
 */
export function reportHealthCheckPorts(
  services: ServicePort[],
  sets: KubeSets,
  diagnostics: Diagnostic[],
): void {
  const attributed = new Set(services.map((sp) => sp.healthCheckNodePort))
  for (const family of ['IPv4', 'IPv6'] as const) {
    const orphans = sets
      .all('HEALTH-CHECK-NODE-PORT', family)
      .filter((m) => !attributed.has(m.port))
    if (orphans.length === 0) continue
    diagnostics.push(
      diag(
        'info',
        'IPVS_HEALTH_CHECK_PORTS',
        `${ipvsSetName('HEALTH-CHECK-NODE-PORT', family)} holds healthCheckNodePort(s) ${orphans.map((m) => m.text).join(', ')}; the IPVS dumps do not say whose (--cluster does)`,
        orphans[0]!.source,
      ),
    )
  }
}
