/**
 * The severities of diagnostics and findings, most severe first: the one list `--fail-on` and
 * the finding order are built from.
 */
import type {Severity} from '../model/types.js'

export const SEVERITIES = ['error', 'warning', 'info'] as const satisfies readonly Severity[]

/** 0 for the most severe. */
export const SEVERITY_RANK: Record<Severity, number> = {error: 0, warning: 1, info: 2}
