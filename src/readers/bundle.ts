/**
 * The node bundle `kp collect --out DIR` writes: raw command outputs plus `manifest.json`.
 * Such a folder is read anywhere as `-f DIR` (src/readers/load.ts): the files marked `read`
 * are the sources, the facts fill the node info.
 */
import type {Mode} from '../model/types.js'
import type {FormatId} from './types.js'

export const BUNDLE_MANIFEST = 'manifest.json'
/** The cluster's Services and EndpointSlices in a bundle collected through kubectl: the node's point of view. */
export const BUNDLE_CLUSTER = 'cluster.json'

export interface BundleFile {
  /** Relative to the bundle folder; null when nothing was saved (the program is missing, or was not run). */
  path: string | null
  /** The reader format for this file, or null for facts that are not a ruleset (uname, versions, table lists). */
  format: FormatId | null
  /** The read-only command whose stdout this is, as run: ["iptables-save"]. */
  command: string[]
  tool: string | null
  /** null when the command did not run or did not exit by itself. */
  exitCode: number | null
  /** What the command printed on stderr (trimmed; "" for nothing). */
  stderr: string
  /** Why the command failed or was not run; null when it succeeded. */
  error: string | null
  /**
   * Whether `-f DIR` reads this file: the outputs that describe the active mode's state.
   * Leftovers of another mode and views for people (ipvsadm -Ln) are saved but not read.
   */
  read: boolean
}

export interface BundleFacts {
  node: string | null
  kernel: string | null
  nftVersion: string | null
  iptablesBackends: string[] | null
  /** sysctl values as strings, keyed by the sysctl name (net.ipv4.conf.all.route_localnet, ...). */
  sysctls: Record<string, string>
}

/**
 * A manifest's facts with only values of BundleFacts' types: a hand-edited manifest is input
 * like any other, and a sysctl of 1 instead of "1" made `kp migrate` fail on `.trim()`. Used by
 * the loader and again by readState, which other callers (tests) hand facts directly.
 */
export function bundleFactsOf(raw: unknown): BundleFacts | null {
  if (typeof raw !== 'object' || raw === null) return null
  const f = raw as Record<string, unknown>
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : null)
  const sysctls =
    typeof f.sysctls === 'object' && f.sysctls !== null
      ? Object.entries(f.sysctls).filter((e): e is [string, string] => typeof e[1] === 'string')
      : []
  return {
    node: text(f.node),
    kernel: text(f.kernel),
    nftVersion: text(f.nftVersion),
    iptablesBackends:
      Array.isArray(f.iptablesBackends) && f.iptablesBackends.every((b) => typeof b === 'string')
        ? f.iptablesBackends
        : null,
    sysctls: Object.fromEntries(sysctls),
  }
}

export interface BundleManifest {
  kind: 'KpBundle'
  schemaVersion: 1
  /** "kp/0.1.0". */
  createdBy: string
  /** When the bundle was written (ISO 8601, UTC). */
  createdAt: string
  /** The mode kp found active on the node; null when it found no kube-proxy state. */
  mode: Mode | null
  /** Leftovers and other trouble found while collecting, one line each. */
  warnings: string[]
  files: BundleFile[]
  facts: BundleFacts
  /**
   * Set when the bundle was collected through a cluster (`kp collect --node NAME`): the outputs
   * then came from a pod's tools, not the host's, through this kubectl; a bug in either shows here.
   */
  reachedThrough?: BundleReach
}

/** Which kubectl reached a node, and through which pod. */
export interface BundleReach {
  /** The kubectl program run (absolute when found on PATH). */
  kubectl: string
  /** kubectl's client version ("v1.32.4"); null when it could not say. */
  kubectlVersion: string | null
  context: string | null
  node: string
  /** "kube-system/kube-proxy-abcde". */
  pod: string
  container: string
  /** True when kp created the pod (--collector-pod) and deleted it afterwards. */
  collectorPod: boolean
}
