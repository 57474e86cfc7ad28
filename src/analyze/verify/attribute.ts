/**
 * `kp verify --against` and `kp migrate --verify`: each behaviour difference of the other rules
 * filed under the migration finding that announces it, or as unexpected. Pure function over a
 * VerifyResult and the findings planMigration (and the renderer) give for CURRENT -> the other mode.
 */
import type {FindingId} from '../../catalog/findings.js'
import {cidrContains} from '../../core/address.js'
import type {Finding} from '../findings.js'
import type {Attribution, AttributedDifference, ProbeClient, VerifyResult} from './types.js'

/**
 * Findings whose behaviour change concerns one kind of client only: a difference seen from
 * another kind of client is not the one they announce.
 */
const CLIENTS_OF: Partial<Record<FindingId, readonly ProbeClient[]>> = {
  // Non-primary node addresses: the sandbox's second node address.
  MIGRATE_NODEPORT_ADDRESSES: ['second-node-address'],
  MIGRATE_NODEPORT_ADDRESSES_WIDEN: ['second-node-address'],
  MIGRATE_NODE_TO_EXTERNAL_IPS: ['node'],
  MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS: ['node', 'localhost'],
  MIGRATE_MARKED_DROPS_ENFORCED: ['external'],
  MIGRATE_LOCALHOST_NODEPORTS: ['localhost'],
  MIGRATE_LOCALHOST_NODEPORTS_ENABLED: ['localhost'],
  MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED: ['unused-port'],
  MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN: ['unused-port'],
}

/**
 * Findings about what kp verify does not probe (health check ports, affinity timeouts), names, scale or clean-up: no probe difference is theirs.
 */
const NOT_PROBED: ReadonlySet<FindingId> = new Set<FindingId>([
  'RENDER_HEALTH_CHECK_NODEPORT_NO_RULE',
  'RENDER_DEFAULT_AFFINITY_TIMEOUT',
  'RENDER_LARGE_CLUSTER_MODE',
  'RENDER_JUMP_RULES_NOT_INCLUDED',
  'RENDER_SYNTHETIC_NAME',
  'RENDER_UNSAFE_NAME',
  'RENDER_UNKNOWN_PORT_NAME',
  'MIGRATE_NFT_LONG_NAME',
  'MIGRATE_NFT_SCALE',
  'MIGRATE_NO_AUTOMATIC_CLEANUP',
  'MIGRATE_LEFTOVERS',
  'MIGRATE_IPVS_DEPRECATED',
  'MIGRATE_DEFAULT_MODE_CHANGE',
])

/** "Cannot verify" findings and incomplete input name no behaviour change: they announce nothing. */
function announcesBehaviour(f: Finding): boolean {
  return (
    !/_(UNVERIFIED|UNKNOWN)$/.test(f.id) &&
    f.id !== 'MIGRATE_INPUT_INCOMPLETE' &&
    !NOT_PROBED.has(f.id)
  )
}

/** `10.0.0.1:80` -> `10.0.0.1`; `[fd00::1]:80` -> `fd00::1`; a bare address as it is. */
function ipOf(endpoint: string): string {
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(endpoint)
  if (bracket) return bracket[1]!
  const colon = endpoint.lastIndexOf(':')
  return colon > 0 && endpoint.indexOf(':') === colon ? endpoint.slice(0, colon) : endpoint
}

function addressMatches(findingAddress: string, d: AttributedDifference): boolean {
  if (findingAddress === d.frontend) return true
  // `ip:port` in a finding names one frontend exactly; an address or CIDR covers every port.
  if (ipOf(findingAddress) !== findingAddress && !findingAddress.includes('/')) return false
  return [ipOf(d.frontend), d.source].some((ip) => cidrContains(findingAddress, ip))
}

/** Whether finding `f` announces difference `d`: every subject the finding names matches, and it names one. */
export function announces(f: Finding, d: AttributedDifference): boolean {
  if (!announcesBehaviour(f)) return false
  const clients = CLIENTS_OF[f.id]
  if (f.services.length === 0 && f.addresses.length === 0 && clients === undefined) return false
  if (f.services.length > 0 && !f.services.includes(d.service)) return false
  if (f.addresses.length > 0 && !f.addresses.some((a) => addressMatches(a, d))) return false
  if (clients !== undefined && !clients.includes(d.client)) return false
  return true
}

/**
 * Every check of `result` that differs, filed under the first (most severe) finding that
 * announces it, or as unexpected. `findings` are sorted as sortFindings leaves them.
 */
export function attributeDifferences(result: VerifyResult, findings: Finding[]): Attribution {
  const announced = new Map<Finding, AttributedDifference[]>()
  const unexpected: AttributedDifference[] = []
  for (const s of result.services)
    for (const c of s.checks) {
      if (c.agrees) continue
      const d: AttributedDifference = {
        service: s.service,
        client: c.client,
        frontend: c.frontend,
        source: c.source,
        differences: c.differences,
      }
      const f = findings.find((x) => announces(x, d))
      if (f === undefined) unexpected.push(d)
      else announced.set(f, [...(announced.get(f) ?? []), d])
    }
  return {
    mode: result.mode,
    announced: [...announced].map(([f, differences]) => ({
      id: f.id,
      title: f.title,
      differences,
    })),
    unexpected,
  }
}
