/**
 * Whether a state was read whole, in part, or not at all (issue 21 §1). An `error` diagnostic
 * means the answer cannot be trusted, but most errors are local to one line or one object: the
 * rest of the input was read and is worth showing, marked incomplete, with exit 3. Only errors that
 * say a source gave nothing usable (empty, binary, unknown format, not kube-proxy's, broken JSON)
 * or that what was read would be wrong, not merely short, leave nothing to show.
 */
import type {DiagnosticCode} from '../catalog/diagnostics.js'
import type {Diagnostic, ProxyState} from '../model/types.js'

/** complete: no errors; partial: errors, but what could be read is kept; unreadable: nothing to show. */
export type Completeness = 'complete' | 'partial' | 'unreadable'

/** Errors that mean a whole source was not read: with no service read from another one, nothing is shown. */
const SOURCE_UNREAD: ReadonlySet<DiagnosticCode> = new Set<DiagnosticCode>([
  'INPUT_EMPTY',
  'INPUT_BINARY',
  'INPUT_UNKNOWN_FORMAT',
  'IPT_NO_KUBE_PROXY',
  'IPT_IPVS_MODE',
  'NFT_NO_KUBE_PROXY',
  'NFT_JSON_INVALID',
  'KUBE_EMPTY',
  // A bad YAML document, or an object that is none, is the whole source when it holds only that one.
  'KUBE_BAD_YAML',
  'KUBE_NOT_AN_OBJECT',
  'KUBE_NOT_CLUSTER_OBJECTS',
  // A saved state is read whole or not at all (src/readers/kp-json/parse.ts).
  'KPJSON_SYNTAX',
  'KPJSON_NOT_STATE',
  'KPJSON_SCHEMA_VERSION',
  'KPJSON_MISSING_FIELD',
  'KPJSON_BAD_FIELD',
])

/**
 * Errors after which what was read is not just short but may be wrong: names cut and ports lost
 * (ipvsadm without -n), two families in one dump, several nodes' states at once. Nothing is shown.
 */
const MISLEADING: ReadonlySet<DiagnosticCode> = new Set<DiagnosticCode>([
  'IPVS_NOT_NUMERIC',
  'IPT_MIXED_FAMILIES',
  'INPUT_SEVERAL_STATES',
])

export function inputErrors(state: ProxyState): Diagnostic[] {
  return state.diagnostics.filter((d) => d.severity === 'error')
}

export function completenessOf(state: ProxyState): Completeness {
  const errors = inputErrors(state)
  if (errors.length === 0) return state.complete === false ? 'partial' : 'complete'
  const codes = errors.map((d) => d.code as DiagnosticCode)
  if (codes.some((c) => MISLEADING.has(c))) return 'unreadable'
  if (state.services.length === 0 && codes.every((c) => SOURCE_UNREAD.has(c))) return 'unreadable'
  return 'partial'
}

/** The stderr line that opens the output of a command run on partial input. */
export function incompleteLine(errorCount: number): string {
  return `input is incomplete: ${errorCount} error(s); what could be read is shown`
}
