/**
 * What every renderer returns (docs/architecture.md: renderers are pure functions `state -> {text, findings}`).
 *
 * One decision documented here, because the targets differ in how many files they need:
 * - `text` is the primary output, what `kp migrate --to MODE` prints on stdout:
 *   iptables: the IPv4 `iptables-restore --noflush` input (or the IPv6 one when the state has
 *             only IPv6 services); nftables: one `nft -f` script holding `table ip` and/or
 *             `table ip6 kube-proxy`; ipvs: the `ipvsadm-restore` input.
 * - `files` lists every file the target needs, the primary one first, each with the family it
 *   is for and the command that loads it (iptables: one per family, since ip6tables-restore
 *   is a separate program; ipvs: ipset, ipvsadm, ip addr and the companion iptables files).
 * - `findings`: everything the renderer could not express or had to guess. Never dropped silently.
 */
import type {Finding} from '../analyze/findings.js'
import type {Family} from '../model/types.js'
import type {KubeProxyVersion} from '../kube-proxy/versions.js'

export type {Finding} from '../analyze/findings.js'

export interface RenderedFile {
  /** A suggested file name, e.g. 'iptables-restore.v4.txt'. */
  name: string
  /** null when the file holds both families (nft script, ip addr lines). */
  family: Family | null
  /** The command that applies it, e.g. 'iptables-restore --noflush < FILE'. */
  loadWith: string
  text: string
}

/**
 * Receives a renderer's primary text piece by piece, in order; the pieces joined are
 * `RenderResult.text`. A piece never splits a character (a UTF-16 surrogate pair), so each can be
 * encoded on its own.
 */
export type TextSink = (piece: string) => void

export interface RenderResult {
  text: string
  files: RenderedFile[]
  findings: Finding[]
}

/**
 * Node settings a renderer needs. Each one, when given, overrides what the state's node says
 * (`kp migrate` flags); when neither says, the renderer uses kube-proxy's default where one
 * exists and reports a finding.
 */
export interface RenderOptions {
  /** Pod CIDRs for the cidr local detector (either family; each family uses its own). */
  podCIDRs?: string[]
  /** 'cidr' | 'interface' | 'interface-prefix' | 'none'. */
  localDetector?: 'cidr' | 'interface' | 'interface-prefix' | 'none'
  /** Bridge interface or interface prefix (without '+' / '*') for the interface detectors. */
  localInterface?: string
  /** As written in the rules, e.g. '0x4000'. Default: kube-proxy's 1<<14, written '0x4000'. */
  masqueradeMark?: string
  masqueradeAll?: boolean
  randomFully?: boolean
  localhostNodePorts?: boolean
  /** Node IPs/CIDRs that accept NodePorts; [] = every local address (kube-proxy's default). */
  nodePortAddresses?: string[]
  /** The node's own IPs (needed for nodePortAddresses given as CIDRs, and for FW rules / IPVS). */
  nodeIPs?: string[]
  conntrackInvalidDrop?: boolean
  /** Emit kube-proxy ≥1.29's nfacct counter matches (iptables). Default false. */
  nfacct?: boolean
  /** Service CIDRs for nftables' "Drop traffic to unallocated ClusterIPs" rule. */
  serviceCIDRs?: string[]
  /** IPVS scheduler for services whose state does not say (default rr, kube-proxy's default). */
  scheduler?: string
  /**
   * nftables base-chain layout: 'current' (default; kube-proxy's tests at 81810de) or 'older'
   * (proxier.go @b0f823e: filter chains at dstnat-10, filter-output-post-dnat, and the ClusterIP
   * masquerade rule matching `P dport PORT`). See src/render/nftables/render.ts.
   */
  nftablesLayout?: 'current' | 'older'
  /**
   * The kube-proxy release whose layout is written (`kp migrate --kube-proxy-version`); the
   * newest kp knows by default (src/kube-proxy/versions.ts).
   */
  kubeProxyVersion?: KubeProxyVersion
}
