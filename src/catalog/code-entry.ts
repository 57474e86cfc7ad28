/** One entry of the diagnostic catalogue (./diagnostics.ts). */
import type {ExitName} from '../errors.js'
import type {Severity} from '../model/types.js'

export interface CodeEntry {
  /** The severity it is emitted with; a list when the emitting code picks one per case. */
  severity: Severity | readonly Severity[]
  /**
   * For a code thrown as an error rather than recorded as a diagnostic: the exit status it ends
   * the run with (src/errors.ts EXIT). An error-severity diagnostic ends the run with exit 3.
   */
  exit?: ExitName
  /** What happened, in one line. */
  meaning: string
  /** What the operator does about it, in one line. */
  action: string
}
