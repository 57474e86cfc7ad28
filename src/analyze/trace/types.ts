/**
 * `kp trace`: one new connection walked through the rules as read (not through the model), so
 * it is a second, independent reading of what `kp explain` says. Plain data: the `--json` output
 * (docs/model.md, "TraceResult").
 */
import type {Mode, Protocol, SourceRef} from '../../model/types.js'

/** Where the connection comes from: a pod on this node, a process on the node, or outside. */
export type ClientKind = 'pod' | 'node' | 'external'

export interface TracePacket {
  from: ClientKind
  /** The client's address; null for "some address of that kind of client". */
  source: string | null
  /** null: an address of this node (`:PORT`, a NodePort). */
  destination: string | null
  port: number
  protocol: Protocol
}

/** One rule (or assumed hook) the connection went through. */
export interface TraceStep {
  table: string
  chain: string
  /** The rule as read; null for a hook kp assumed or a chain's policy. */
  rule: {source: SourceRef; text: string} | null
  /** What happened here, in words: "jump to KUBE-SVC-…", "DNAT to 10.1.2.3:80", "50 % of new connections". */
  note: string
}

export type TraceVerdict = 'forwarded' | 'delivered' | 'rejected' | 'dropped' | 'unknown'

/** One way the connection can go. */
export interface TraceOutcome {
  /**
   * What must hold for this outcome, in words ("the source is in 203.0.113.0/25"): conditions kp
   * cannot decide from the packet. Outcomes with different conditions are alternatives, not odds.
   */
  conditions: string[]
  /** The chance of this outcome among those with the same conditions (the statistic rules). */
  probability: number
  verdict: TraceVerdict
  /** The address the connection is sent to after DNAT; null when not DNATed. */
  dnat: string | null
  /** Source NAT by masquerade. */
  masquerade: boolean
  /** Why it was dropped or rejected, or why kp cannot tell; null when forwarded or delivered. */
  reason: string | null
  steps: TraceStep[]
}

export interface TraceResult {
  kind: 'Trace'
  mode: Mode
  packet: TracePacket
  /** The packet in words: "TCP from a pod to 172.30.0.44:80". */
  title: string
  /** Hooks into built-in chains kp assumed because the input does not hold them. */
  assumed: string[]
  outcomes: TraceOutcome[]
  /** Why kp cannot trace this input at all (a mode it does not walk yet); null when it did. */
  unsupported: string | null
}
