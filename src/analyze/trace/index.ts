/**
 * `kp trace`: one new connection, walked through the rules as read. The iptables walk is in
 * ./iptables.ts, the nftables walk in ./nft.ts; IPVS mode is the iptables walk with the IPVS
 * stage of ./ipvs.ts. Cluster objects alone have no rules to walk, and say so.
 */
import {joinHostPort} from '../../core/address.js'
import type {ProxyState} from '../../model/types.js'
import type {IptablesRuleset} from '../../readers/iptables/ruleset.js'
import {packetFamily, type AddressFacts} from './addresses.js'
import {IptablesTracer} from './iptables.js'
import {IpvsStage} from './ipvs.js'
import {NftTracer} from './nft.js'
import type {IpsetDump} from '../../readers/ipset/parse.js'
import type {IpvsadmListing} from '../../readers/ipvsadm/parse.js'
import type {NftDocument} from '../../readers/nft/ir.js'
import type {TracePacket, TraceResult} from './types.js'

export type {TraceOutcome, TracePacket, TraceResult, TraceStep, ClientKind} from './types.js'

export interface TraceInput {
  state: ProxyState
  /** The iptables text sources as read, with their paths. */
  rulesets: Array<{path: string; ruleset: IptablesRuleset}>
  /** The nftables sources as read (text or JSON), with their paths. */
  nftDocuments: Array<{path: string; doc: NftDocument}>
  /** IPVS mode: the `ipvsadm -Ln`/`-Sn` listings and `ipset save`/`list` dumps as read. */
  ipvsListings?: Array<{path: string; listing: IpvsadmListing}>
  ipsets?: Array<{path: string; dump: IpsetDump}>
  packet: TracePacket
  /** Addresses the user says are this node's (`--node-ip`). */
  nodeIps: string[]
}

const CLIENTS = {pod: 'a pod', node: 'this node', external: 'a client outside the cluster'}

export function packetTitle(p: TracePacket): string {
  const from = p.source === null ? CLIENTS[p.from] : `${p.source} (${CLIENTS[p.from]})`
  const to = joinHostPort(
    p.destination ?? 'NODE-IP',
    p.port,
    p.destination?.includes(':') ? 'IPv6' : 'IPv4',
  )
  return `${p.protocol} from ${from} to ${to}`
}

/** Addresses that are services' virtual ones, never this node's in iptables mode. */
function virtualAddresses(state: ProxyState): Set<string> {
  const out = new Set<string>()
  for (const sp of state.services)
    for (const f of sp.frontends)
      if (f.ip !== null && (f.type === 'ClusterIP' || f.type === 'LoadBalancer')) out.add(f.ip)
  return out
}

export function traceConnection(input: TraceInput): TraceResult {
  const {state, packet} = input
  const base = {kind: 'Trace' as const, mode: state.mode, packet, title: packetTitle(packet)}
  const family = packetFamily(packet) ?? 'IPv4'
  const facts: AddressFacts = {
    packet,
    podCIDRs: state.node.podCIDRs,
    nodeIps: input.nodeIps,
    notLocal: virtualAddresses(state),
    assumed: new Set(),
  }
  const nft = input.nftDocuments[0]
  const iptables = input.rulesets.find(
    (r) => r.ruleset.family === null || r.ruleset.family === family,
  )
  let tracer: IptablesTracer | NftTracer
  const listings = input.ipvsListings ?? []
  if (state.mode === 'ipvs' && listings.length > 0) {
    // kube-proxy binds every virtual server address to kube-ipvs0: they are this node's.
    const stage = new IpvsStage(listings, input.ipsets ?? [], facts)
    // `:PORT`: IPVS has one virtual server per node address; the walk follows one of them.
    if (packet.destination === null) {
      const at = stage.nodePortAddress(packet.port, packet.protocol, input.nodeIps)
      if (at !== null) {
        facts.packet = {...packet, destination: at}
        facts.assumed.add(
          `the node address is ${at}, the ${input.nodeIps.includes(at) ? 'given' : 'first'} virtual server on port ${packet.port} (name another with --node-ip)`,
        )
      }
    }
    facts.nodeIps = [...new Set([...facts.nodeIps, ...stage.addresses()])]
    facts.notLocal = new Set()
    if (!iptables)
      facts.assumed.add(
        `the input has no ${family} iptables rules: masquerade and the IPVS-mode filters are not walked (add ${family === 'IPv6' ? 'ip6tables-save' : 'iptables-save'})`,
      )
    tracer = new IptablesTracer(iptables?.ruleset ?? null, iptables?.path ?? '', facts, stage)
  } else if (nft && state.mode !== 'ipvs') tracer = new NftTracer(nft.doc, family, nft.path, facts)
  else if (iptables && state.mode === 'iptables')
    tracer = new IptablesTracer(iptables.ruleset, iptables.path, facts)
  else
    return {
      ...base,
      assumed: [],
      outcomes: [],
      unsupported:
        state.mode === 'ipvs'
          ? 'the input has no ipvsadm listing to walk (add `ipvsadm -Ln` or `ipvsadm -Sn`)'
          : state.mode === 'cluster'
            ? `kp trace walks iptables, nftables and IPVS rules; this input is in ${state.mode} mode (use kp explain for it)`
            : `the input has no ${family} rules to walk`,
    }
  const outcomes = tracer.trace()
  return {...base, assumed: [...tracer.assumed, ...facts.assumed], outcomes, unsupported: null}
}
