/**
 * What the rules say about the node (NodeInfo), gathered while the tables are read and
 * turned into NodeInfo once at the end.
 */
import type {LocalDetector, NodeInfo, SourceRef} from '../../model/types.js'
import type {NftLayoutSign} from '../../kube-proxy/nftables-layouts.js'

export class NodeFacts {
  readonly podCIDRs = new Set<string>()
  detector: LocalDetector | null = null
  localInterface: string | null = null
  masqueradeMark: string | null = null
  /** Set by a masquerade rule for the ClusterIP: true without a detector part, false with one. */
  masqueradeAll: boolean | null = null
  /** A chain that would carry the ClusterIP masquerade rule was seen (so "no rule" means detector none). */
  sawInternalChain = false
  randomFully: boolean | null = null
  nodePortAddresses: Set<string> | null = null
  conntrackInvalidDrop: boolean | null = null
  /** Signs of kube-proxy's layout generation, each with the first place it was seen. */
  readonly layoutSigns = new Map<NftLayoutSign, SourceRef>()

  sign(sign: NftLayoutSign, at: SourceRef): void {
    if (!this.layoutSigns.has(sign)) this.layoutSigns.set(sign, at)
  }

  addCidr(cidr: string): void {
    this.podCIDRs.add(cidr)
    this.detector = 'cidr'
  }

  addInterface(name: string): void {
    if (name.endsWith('*') || name.endsWith('+')) {
      this.detector = 'interface-prefix'
      this.localInterface = name.slice(0, -1)
    } else {
      this.detector = 'interface'
      this.localInterface = name
    }
  }

  allNodeAddresses(): void {
    this.nodePortAddresses ??= new Set()
  }

  addNodePortAddress(ip: string): void {
    this.nodePortAddresses ??= new Set()
    this.nodePortAddresses.add(ip)
  }

  applyTo(node: NodeInfo): void {
    node.podCIDRs = [...this.podCIDRs]
    // No detector part anywhere although ClusterIP chains exist: kube-proxy ran with detector
    // "none" -- unless masquerade-all hides it (that rule never carries the detector).
    node.localDetector =
      this.detector ?? (this.sawInternalChain && this.masqueradeAll !== true ? 'none' : null)
    node.localInterface = this.localInterface
    node.masqueradeMark = this.masqueradeMark
    node.masqueradeAll = this.masqueradeAll ?? (this.sawInternalChain ? false : null)
    node.randomFully = this.randomFully
    node.nodePortAddresses = this.nodePortAddresses ? [...this.nodePortAddresses] : null
    node.conntrackInvalidDrop = this.conntrackInvalidDrop
  }
}
