/**
 * Which proxy mode kube-proxy runs in on this node, decided from what the probe commands
 * printed (README, "Reading a node live"). Pure functions over command output, so they are tested on text.
 *
 * Evidence per mode:
 *  - nftables: `nft -j list table ip kube-proxy` or `... ip6 kube-proxy` lists a table (./snapshot.ts);
 *  - iptables: an iptables-save (either backend, either family) holds kube-proxy's KUBE-* chains
 *    and they are not IPVS mode's;
 *  - ipvs: IPVS virtual servers exist and the kube-ipvs0 dummy device exists.
 * Several at once means a mode switch left rules behind: one is active, the rest are leftovers.
 */
import type {Mode} from '../model/types.js'
import {
  KUBE_CHAIN_PREFIX,
  KUBE_SERVICES,
  KUBELET_CHAINS,
  PER_SERVICE_CHAIN_PREFIXES,
} from '../kube-proxy/iptables-names.js'
import {IPVS_ONLY_CHAINS} from '../kube-proxy/ipvs-names.js'

export type IptablesBackend = 'nf_tables' | 'legacy'
export type IpFamily = 'ip' | 'ip6'

/** What one iptables-save output holds that matters for mode detection; one linear pass. */
export interface IptablesSummary {
  /** KUBE-* chains kube-proxy makes (kubelet's KUBE-KUBELET-CANARY, KUBE-FIREWALL, KUBE-MARK-DROP not counted). */
  kubeChains: number
  /** `-A KUBE-...` rule lines in those chains. */
  kubeRules: number
  /** Per-service chains only iptables mode makes: KUBE-SVC-, -SEP-, -EXT-, -SVL-, -FW-, -XLB-. */
  serviceChains: number
  /** Chains only IPVS mode makes: KUBE-NODE-PORT, KUBE-LOAD-BALANCER, KUBE-IPVS-FILTER, ... */
  ipvsChains: number
  /**
   * Which mode wrote nat KUBE-SERVICES: both modes own a chain of that name and rewrite it on
   * every sync, so its content shows the mode that synced last.
   */
  natServicesWrittenBy: 'iptables' | 'ipvs' | null
}

// Chains the kubelet makes (pkg/kubelet/kubelet_network_linux.go): present on every node,
// whatever the proxy, so they are not evidence of kube-proxy.
const KUBELET_CHAIN_SET: ReadonlySet<string> = new Set(KUBELET_CHAINS)
// iptables-save's spelling of a KUBE-* chain's declaration and rules, and of a KUBE-* ipset match.
const KUBE_DECLARATION = `:${KUBE_CHAIN_PREFIX}`
const KUBE_APPEND = `-A ${KUBE_CHAIN_PREFIX}`
const SERVICES_APPEND = `-A ${KUBE_SERVICES} `
const KUBE_SET_MATCH = `--match-set ${KUBE_CHAIN_PREFIX}`
const SERVICE_CHAIN_PREFIXES = PER_SERVICE_CHAIN_PREFIXES
// docs/ipvs-layouts.md a.5: the chains IPVS mode adds to iptables.
const IPVS_CHAINS: ReadonlySet<string> = new Set(IPVS_ONLY_CHAINS)

function chainNameAt(line: string, start: number): string {
  const end = line.indexOf(' ', start)
  return end < 0 ? line.slice(start) : line.slice(start, end)
}

export function summarizeIptablesSave(text: string): IptablesSummary {
  const s: IptablesSummary = {
    kubeChains: 0,
    kubeRules: 0,
    serviceChains: 0,
    ipvsChains: 0,
    natServicesWrittenBy: null,
  }
  let table = ''
  let start = 0
  while (start < text.length) {
    let end = text.indexOf('\n', start)
    if (end < 0) end = text.length
    const line = text.slice(start, end)
    start = end + 1
    if (line.startsWith('*')) {
      table = line.slice(1).trim()
    } else if (line.startsWith(KUBE_DECLARATION)) {
      const name = chainNameAt(line, 1)
      if (KUBELET_CHAIN_SET.has(name)) continue
      s.kubeChains++
      if (SERVICE_CHAIN_PREFIXES.some((p) => name.startsWith(p))) s.serviceChains++
      if (IPVS_CHAINS.has(name)) s.ipvsChains++
    } else if (line.startsWith(KUBE_APPEND)) {
      if (KUBELET_CHAIN_SET.has(chainNameAt(line, 3))) continue
      s.kubeRules++
      if (table === 'nat' && line.startsWith(SERVICES_APPEND)) {
        if (line.includes(KUBE_SET_MATCH)) s.natServicesWrittenBy = 'ipvs'
        else if (SERVICE_CHAIN_PREFIXES.some((p) => line.includes(`-j ${p}`)))
          s.natServicesWrittenBy ??= 'iptables'
      }
    }
  }
  return s
}

/** True when this dump shows iptables-mode kube-proxy rules (not IPVS mode's iptables rules). */
export function hasIptablesModeRules(s: IptablesSummary): boolean {
  if (s.serviceChains > 0 || s.natServicesWrittenBy === 'iptables') return true
  return s.kubeChains > 0 && s.ipvsChains === 0 && s.natServicesWrittenBy !== 'ipvs'
}

const VIRTUAL_SERVER_LINE = /^(TCP|UDP|SCTP|FWM)\s/

/** Virtual servers in /proc/net/ip_vs (service lines start with the protocol; `->` lines are real servers). */
export function countIpvsVirtualServers(procIpVs: string): number {
  let n = 0
  for (const line of procIpVs.split('\n')) if (VIRTUAL_SERVER_LINE.test(line)) n++
  return n
}

/** One iptables-save output that was read, with its summary. */
export interface IptablesDump {
  backend: IptablesBackend
  family: IpFamily
  /** The command line that produced it, for messages. */
  command: string
  summary: IptablesSummary
}

export interface DetectionInput {
  /** The families whose `nft -j list table FAMILY kube-proxy` listed a table; null when nft could not say. */
  nftFamilies: IpFamily[] | null
  nftUnavailable: string | null
  iptables: IptablesDump[]
  /** What could not be read on the iptables side, for the "nothing found" message. */
  iptablesNotes: string[]
  /** null: IPVS not present in the kernel (or could not be read). */
  ipvsVirtualServers: number | null
  ipvsNote: string | null
  kubeIpvs0: boolean
  forced?: Mode
}

export interface Detection {
  mode: Mode | null
  /** The backend whose rules are read in iptables and ipvs mode. */
  backend: IptablesBackend | null
  /** Backends that hold kube-proxy's KUBE-* chains, sorted. */
  backendsWithRules: IptablesBackend[]
  /** Leftovers and other trouble, one line each. */
  warnings: string[]
  /** When mode is null: what every probe found, for the exit-3 message. */
  looked: string[]
}

const rulesIn = (dumps: IptablesDump[]) => dumps.reduce((n, d) => n + d.summary.kubeRules, 0)

export function detectMode(input: DetectionInput): Detection {
  const warnings: string[] = []
  const looked: string[] = []
  const withKube = input.iptables.filter((d) => d.summary.kubeChains > 0)
  const backendsWithRules = [...new Set(withKube.map((d) => d.backend))].sort()

  // The backend: the one holding kube-proxy's rules; with both, the one with more of them, as
  // the kube-proxy image's iptables-wrapper picks (it counts rules per backend).
  let backend: IptablesBackend | null = null
  if (backendsWithRules.length === 1) backend = backendsWithRules[0]!
  else if (backendsWithRules.length === 2) {
    const nft = rulesIn(withKube.filter((d) => d.backend === 'nf_tables'))
    const legacy = rulesIn(withKube.filter((d) => d.backend === 'legacy'))
    backend = legacy > nft ? 'legacy' : 'nf_tables'
    const other = backend === 'legacy' ? 'nf_tables' : 'legacy'
    warnings.push(
      `kube-proxy chains exist in both iptables backends (nf_tables: ${nft} KUBE-* rules, legacy: ${legacy}); reading ${backend}. ` +
        `The kernel runs both, so the ${other} rules still act on traffic: a known source of trouble after an iptables or image upgrade`,
    )
  }
  const active = withKube.filter((d) => d.backend === backend)
  const iptablesEvidence = active.filter((d) => hasIptablesModeRules(d.summary))
  const ipvsInIptables = active.filter(
    (d) => d.summary.ipvsChains > 0 || d.summary.natServicesWrittenBy === 'ipvs',
  )

  const nft = input.nftFamilies ?? []
  const hasNft = nft.length > 0
  const hasIpvs = (input.ipvsVirtualServers ?? 0) > 0 && input.kubeIpvs0
  const hasIptables = iptablesEvidence.length > 0

  if ((input.ipvsVirtualServers ?? 0) > 0 && !input.kubeIpvs0) {
    warnings.push(
      `${input.ipvsVirtualServers} IPVS virtual server(s) exist but there is no kube-ipvs0 device: they are not kube-proxy's`,
    )
  }

  let mode: Mode | null
  if (input.forced) {
    const present = {nftables: hasNft, ipvs: hasIpvs, iptables: hasIptables, cluster: false}[
      input.forced
    ]
    mode = present ? input.forced : null
  } else if (hasNft) {
    // nftables mode does not touch the iptables or IPVS state, so their rules next to a
    // kube-proxy table are what an earlier mode left behind.
    mode = 'nftables'
  } else if (hasIpvs && hasIptables) {
    // Both modes write nat KUBE-SERVICES on every sync: whichever wrote it last is running.
    mode = active.some((d) => d.summary.natServicesWrittenBy === 'ipvs') ? 'ipvs' : 'iptables'
  } else if (hasIpvs) mode = 'ipvs'
  else if (hasIptables) mode = 'iptables'
  else mode = null

  if (mode !== null) {
    if (mode !== 'nftables' && hasNft) {
      warnings.push(
        `leftover nftables-mode rules: ${nft.map((f) => `table ${f} kube-proxy`).join(' and ')} (kube-proxy --cleanup removes them)`,
      )
    }
    if (mode !== 'ipvs' && hasIpvs) {
      warnings.push(
        `leftover IPVS-mode state: ${input.ipvsVirtualServers} IPVS virtual server(s) and the kube-ipvs0 device (kube-proxy --cleanup removes them)`,
      )
    }
    if (mode !== 'iptables' && hasIptables) {
      const where = iptablesEvidence.map(
        (d) => `${d.command}: ${d.summary.serviceChains} per-service KUBE-SVC/SEP/EXT/FW chains`,
      )
      warnings.push(
        `leftover iptables-mode rules (${where.join('; ')}) (kube-proxy --cleanup removes them)`,
      )
    }
    if (mode !== 'ipvs' && ipvsInIptables.length > 0 && !hasIpvs) {
      warnings.push(
        `leftover IPVS-mode iptables chains in ${ipvsInIptables.map((d) => d.command).join(', ')}`,
      )
    }
    return {mode, backend, backendsWithRules, warnings, looked}
  }

  // Nothing found: say what every probe of the wanted mode(s) saw, so the operator can check by hand.
  const wants = (m: Mode) => input.forced === undefined || input.forced === m
  if (wants('nftables')) {
    if (input.nftFamilies === null) looked.push(`nft: ${input.nftUnavailable ?? 'not run'}`)
    else looked.push('nft has no table ip kube-proxy or ip6 kube-proxy')
  }
  if (wants('iptables')) {
    for (const d of input.iptables) {
      looked.push(
        d.summary.kubeChains === 0
          ? `${d.command} has no KUBE-* chains`
          : `${d.command} has ${d.summary.kubeChains} KUBE-* chains but no iptables-mode rules`,
      )
    }
    looked.push(...input.iptablesNotes)
  }
  if (wants('ipvs')) {
    if (input.ipvsVirtualServers === null) looked.push(input.ipvsNote ?? 'IPVS: not present')
    else
      looked.push(
        `IPVS: ${input.ipvsVirtualServers} virtual server(s), kube-ipvs0 ${input.kubeIpvs0 ? 'present' : 'absent'}`,
      )
  }
  return {mode: null, backend, backendsWithRules, warnings, looked}
}
