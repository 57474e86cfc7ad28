/**
 * A finding: something an operator should know about a state, a rendering or a migration
 * (docs/architecture.md "analyses"). Shared by the renderers (src/render/) and `kp migrate`. Pure data:
 * the CLI layer decides how to show it; `--json` prints it as is.
 */
import type {Severity, SourceRef} from '../model/types.js'
import type {FindingId} from '../catalog/findings.js'
import {SEVERITY_RANK} from '../catalog/severity.js'

export interface Finding {
  /** Stable, upper-case id that scripts may match on, e.g. 'RENDER_MISSING_POD_CIDR' (src/catalog/findings.ts). */
  id: FindingId
  /** error: the result will not behave like the source; warning: it may; info: worth knowing. */
  severity: Severity
  /** One line, no trailing period. */
  title: string
  /** What was seen and why it matters, in full sentences. */
  message: string
  /** Display names of the service ports concerned (core/state.ts displayName); [] when node-wide. */
  services: string[]
  /** Addresses concerned (`ip`, `ip:port`, CIDRs); [] when none. */
  addresses: string[]
  /** Where in the sources it was seen; [] when nothing in the sources shows it. */
  evidence: SourceRef[]
  /** What to do about it. */
  action: string
  /** Upstream documentation that explains the behaviour, or null. */
  docs: string | null
}

/**
 * The most rule references a finding about one service port cites as evidence (its first, in line
 * order). kp migrate reads its input keeping no more (ReadOptions.refsPerPort).
 */
export const EVIDENCE_REFS_PER_PORT = 5

/** The stable order findings are reported in: most severe first, then by id, then by first service. */
export function sortFindings(findings: Finding[]): Finding[] {
  return findings.sort(
    (a, b) =>
      SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) ||
      ((a.services[0] ?? '') < (b.services[0] ?? '')
        ? -1
        : (a.services[0] ?? '') > (b.services[0] ?? '')
          ? 1
          : 0),
  )
}
