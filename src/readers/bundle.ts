/**
 * The node bundle `kp collect --out DIR` writes: raw command outputs plus `manifest.json`.
 * Such a folder is read anywhere as `-f DIR`.
 */
import type {FormatId} from './types.js'

export const BUNDLE_MANIFEST = 'manifest.json'

export interface BundleFile {
  /** Relative to the bundle folder. */
  path: string
  /** The reader format for this file, or null for facts that are not a ruleset (uname, sysctls). */
  format: FormatId | null
  /** The read-only command whose stdout this is, as run: ["iptables-save"]. */
  command: string[]
  tool: string | null
  exitCode: number
}

export interface BundleFacts {
  node: string | null
  kernel: string | null
  nftVersion: string | null
  iptablesBackends: string[] | null
  /** sysctl values as strings, keyed by the sysctl name (net.ipv4.conf.all.route_localnet, ...). */
  sysctls: Record<string, string>
}

export interface BundleManifest {
  kind: 'KpBundle'
  schemaVersion: 1
  createdBy: string
  files: BundleFile[]
  facts: BundleFacts
}
