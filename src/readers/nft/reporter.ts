/**
 * Diagnostics for stage 2, with a cap per code: a dump with one systematic oddity in every
 * service gives the first few positions and a count, not a line per service on stderr.
 */
import type {Diagnostic, Severity, SourceRef} from '../../model/types.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

const MAX_PER_CODE = 25

export class Reporter {
  readonly diagnostics: Diagnostic[] = []
  private readonly counts = new Map<
    DiagnosticCode,
    {severity: Severity; n: number; first: SourceRef | null}
  >()

  report(
    severity: Severity,
    code: DiagnosticCode,
    message: string,
    source: SourceRef | null,
  ): void {
    const c = this.counts.get(code)
    if (!c) this.counts.set(code, {severity, n: 1, first: source})
    else c.n++
    if ((c?.n ?? 1) <= MAX_PER_CODE) this.diagnostics.push({severity, code, message, source})
  }

  /** Adds one summary per capped code; call once at the end. */
  finish(): Diagnostic[] {
    for (const [code, c] of this.counts) {
      if (c.n > MAX_PER_CODE) {
        this.diagnostics.push({
          severity: c.severity,
          code,
          message: `${c.n - MAX_PER_CODE} more ${code} diagnostics like the ones above (only the first ${MAX_PER_CODE} are listed)`,
          source: c.first,
        })
      }
    }
    return this.diagnostics
  }
}
