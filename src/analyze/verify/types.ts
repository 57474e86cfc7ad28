/**
 * `kp verify`: what kp expects the kernel to do with each kind of probe connection (from
 * `kp explain`'s answer), what the kernel did (conntrack), and the verdict. Plain data: the
 * `--json` output (docs/verify.md).
 */
import type {FindingId} from '../../catalog/findings.js'

/** Who opens the connection, and from where. */
export type ProbeClient =
  | 'external'
  | 'pod'
  | 'node'
  | 'inside-source-range'
  | 'second-node-address'
  | 'hairpin'
  /** The node itself to 127.0.0.1:NodePort. */
  | 'localhost'
  /** A pod to a ClusterIP on a port no service uses. */
  | 'unused-port'

/** The namespace of the sandbox a client lives in. */
export type ClientNamespace = 'ext' | 'pod' | 'node'

/** What happened to one new connection. `blocked`: a UDP datagram rejected or dropped (kp does not tell the two apart). */
export type ProbeVerdict = 'forwarded' | 'passed' | 'rejected' | 'dropped' | 'blocked'

export interface Expectation {
  verdict: ProbeVerdict
  /** `ip:port` -> share of new connections; shares null when explain does not give them. */
  endpoints: Array<{address: string; share: number | null}>
  /** true / false; 'hairpin': masqueraded exactly when sent back to its own address; null: not compared. */
  masquerade: boolean | 'hairpin' | null
  /** Session affinity: every connection of one client goes to the same endpoint. */
  sticky: boolean
}

/** Probes of one kind of client to one frontend of one service port. */
export interface ProbeGroup {
  service: string
  frontend: string
  client: ProbeClient
  namespace: ClientNamespace
  protocol: 'TCP' | 'UDP'
  source: string
  destination: string
  port: number
  expect: Expectation
  /** How many new connections to open. */
  count: number
  /**
   * Wait for a refusal that comes only with the SYN's retransmission (~1 s): an ICMPv6 error that
   * reaches the client while connect() holds the socket is dropped (TcpExtLockDroppedIcmps).
   */
  patient?: true
}

export interface Observation {
  verdict: ProbeVerdict
  /** `ip:port` after DNAT; null when not DNATed. */
  dnat: string | null
  /** null when the kernel kept no entry to tell. */
  masquerade: boolean | null
}

export interface CheckResult {
  client: ProbeClient
  frontend: string
  source: string
  probes: number
  agrees: boolean
  /** What the kernel did, counted: `forwarded 10.180.0.1:80` -> 51. */
  observed: Record<string, number>
  expected: string
  /** Each difference in words; [] when the kernel agrees. */
  differences: string[]
}

export interface ServiceVerdict {
  service: string
  verdict: 'agrees' | 'differs' | 'not verified'
  probes: number
  checks: CheckResult[]
  /** Why it was not verified. */
  reason: string | null
}

export interface VerifyResult {
  schemaVersion: 1
  kind: 'VerifyResult'
  mode: string
  /** How the rules were loaded (iptables-restore of a backend, nft -f). */
  loadedWith: string
  probes: number
  /** What kp changed in an iptables dump before loading it: jumps kube-proxy makes apart that the dump lacks, other programs' jumps skipped, DROP policies opened. */
  assumedHooks: string[]
  services: ServiceVerdict[]
  summary: {agrees: number; differs: number; notVerified: number}
  /** The addresses the sandbox gave the node and its clients. */
  addresses: {
    nodeIps: string[]
    externalIps: string[]
    podIps: string[]
    hairpinIps: string[]
    podInterface: string
  }
  seconds: number
  /**
   * `--against OTHER`: the same probes through the other rules, held to the same expectation
   * (kp explain's answer for -f's rules); absent without --against.
   */
  against?: {files: string[]; result: VerifyResult}
  /**
   * The differences of the compared rules (`against.result` with --against; this result under
   * `kp migrate --verify`) filed under the migration findings that announce them.
   */
  attributed?: Attribution
}

/** One check that differs, named by service port, client and frontend. */
export interface AttributedDifference {
  service: string
  client: ProbeClient
  frontend: string
  source: string
  differences: string[]
}

export interface Attribution {
  /** The mode of the compared rules: the findings are those of migrating to it. */
  mode: string
  /** Differences a migration finding announces, under its id and title. */
  announced: Array<{id: FindingId; title: string; differences: AttributedDifference[]}>
  /** Differences no finding announces (kp verify exits 1 on one). */
  unexpected: AttributedDifference[]
}
