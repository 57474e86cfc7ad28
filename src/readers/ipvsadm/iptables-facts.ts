/**
 * What an IPVS-mode `iptables-save` tells about the node (docs/ipvs-layouts.md a.5). In IPVS mode the
 * iptables rules hold no services, only ipset matches; they still show kube-proxy's settings:
 * the masquerade mark, `--random-fully`, and how pod traffic is told apart (the `! -s CIDR` /
 * `! -i IFACE` / `src,dst` form of the KUBE-CLUSTER-IP masquerade rule, or its absence with
 * masqueradeAll). The ruleset comes from the iptables reader's generic parser.
 */
import type {LocalDetector} from '../../model/types.js'
import type {IptablesRule, IptablesRuleset} from '../iptables/ruleset.js'
import {
  KUBE_MARK_MASQ,
  KUBE_POSTROUTING,
  KUBE_SERVICES,
  PER_SERVICE_CHAIN_PREFIXES,
} from '../../kube-proxy/iptables-names.js'
import {IPVS_ONLY_CHAINS} from '../../kube-proxy/ipvs-names.js'

/** Chains only iptables mode makes; in an IPVS-mode dump they are leftovers of a mode switch. */
const IPTABLES_MODE_PREFIXES = PER_SERVICE_CHAIN_PREFIXES
/** Chains only IPVS mode makes (KUBE-NODE-PORT, not iptables mode's KUBE-NODEPORTS). */
const CLUSTER_IP_SET = /^KUBE-(6-)?CLUSTER-IP$/
const IPVS_MODE_CHAINS: ReadonlySet<string> = new Set(IPVS_ONLY_CHAINS)

export interface ChainRef {
  table: string
  name: string
  line: number
}

export interface IpvsIptablesFacts {
  masqueradeMark: string | null
  randomFully: boolean | null
  masqueradeAll: boolean | null
  localDetector: LocalDetector | null
  localInterface: string | null
  podCIDRs: string[]
  /** KUBE-SVC-* and friends: iptables-mode chains found in this dump. */
  iptablesModeChains: ChainRef[]
  /** Whether any IPVS-mode chain or KUBE-* ipset match was seen at all. */
  ipvsMode: boolean
}

export function iptablesModeChain(name: string): boolean {
  return IPTABLES_MODE_PREFIXES.some((p) => name.startsWith(p))
}

/**
 * True when the ruleset is kube-proxy's IPVS mode: an IPVS-only chain (KUBE-IPVS-FILTER,
 * KUBE-NODE-PORT, ...) and no iptables-mode service chain (KUBE-SVC-*, KUBE-SEP-*).
 */
export function isIpvsModeRuleset(ruleset: IptablesRuleset): boolean {
  let ipvs = false
  for (const table of ruleset.tables.values()) {
    for (const name of table.chains.keys()) {
      if (iptablesModeChain(name)) return false
      if (IPVS_MODE_CHAINS.has(name)) ipvs = true
    }
  }
  return ipvs
}

function matchSet(rule: IptablesRule): {set: string; flags: string} | null {
  const m = rule.matches.find((o) => o.name === '--match-set')
  if (!m || m.values[0] === undefined) return null
  return {set: m.values[0], flags: m.values[1] ?? ''}
}

/** `0x004000` (kube-proxy's `%#08x`) and `0x4000` are the same mark; kp shows the short form. */
function normaliseMark(text: string): string {
  const value = text.split('/')[0]!
  const n = Number.parseInt(value, 16)
  return Number.isNaN(n) ? value : `0x${n.toString(16)}`
}

/** Reads the node facts of one IPVS-mode iptables ruleset. Never throws. */
export function readIpvsIptablesFacts(ruleset: IptablesRuleset): IpvsIptablesFacts {
  const facts: IpvsIptablesFacts = {
    masqueradeMark: null,
    randomFully: null,
    masqueradeAll: null,
    localDetector: null,
    localInterface: null,
    podCIDRs: [],
    iptablesModeChains: [],
    ipvsMode: false,
  }
  for (const table of ruleset.tables.values()) {
    for (const chain of table.chains.values()) {
      if (iptablesModeChain(chain.name))
        facts.iptablesModeChains.push({table: table.name, name: chain.name, line: chain.line})
      if (IPVS_MODE_CHAINS.has(chain.name)) facts.ipvsMode = true
    }
  }
  for (const rule of ruleset.rules) {
    if (rule.table !== 'nat') continue
    if (rule.chain === KUBE_MARK_MASQ && rule.target === 'MARK') {
      const mark = rule.targetOptions.find(
        (o) => o.name === '--set-xmark' || o.name === '--or-mark',
      )
      if (mark?.values[0]) facts.masqueradeMark = normaliseMark(mark.values[0])
    }
    if (rule.chain === KUBE_POSTROUTING && rule.target === 'MASQUERADE' && !matchSet(rule)) {
      facts.randomFully = rule.targetOptions.some((o) => o.name === '--random-fully')
    }
    const set = matchSet(rule)
    if (
      rule.chain === KUBE_SERVICES &&
      rule.target === KUBE_MARK_MASQ &&
      set &&
      CLUSTER_IP_SET.test(set.set)
    ) {
      // The three forms of a.5: `! -s CIDR` / `! -i IF` (a detector), `src,dst` (no detector),
      // and neither (masqueradeAll).
      if (rule.source?.negated) {
        facts.localDetector = 'cidr'
        facts.podCIDRs.push(rule.source.value)
        facts.masqueradeAll = false
      } else if (rule.inInterface?.negated) {
        const iface = rule.inInterface.value
        facts.localDetector = iface.endsWith('+') ? 'interface-prefix' : 'interface'
        facts.localInterface = iface.endsWith('+') ? iface.slice(0, -1) : iface
        facts.masqueradeAll = false
      } else if (set.flags === 'src,dst') {
        facts.localDetector = 'none'
        facts.masqueradeAll = false
      } else {
        facts.masqueradeAll = true
      }
    }
  }
  return facts
}
