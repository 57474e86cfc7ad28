/**
 * An ipvsadm listing that ends without a newline was cut off (a copy, a full pipe, a timeout):
 * what its last line still says, and the error that says so (IPVS_TRUNCATED).
 */
import {diag} from '../../core/state.js'
import type {Diagnostic, SourceRef} from '../../model/types.js'

/**
 * The cut last line: its last word may itself be cut (`10.244.2.7:8080` → `10.244.2.7:80`), so
 * it is dropped unless whitespace follows it; the rest is read. False when nothing is left.
 */
export function readCutLine(
  raw: string,
  tokens: string[],
  lineNo: number,
  where: SourceRef,
  diagnostics: Diagnostic[],
): boolean {
  const wordCut = !/\s$/.test(raw)
  diagnostics.push(
    diag(
      'error',
      'IPVS_TRUNCATED',
      `the listing ends in the middle of line ${lineNo} (no newline after it): it is cut off, and virtual servers or real servers after it are missing${wordCut ? `; its last word "${tokens[tokens.length - 1]!}" may be cut and was not read` : ''} (if only the final newline was lost, add it)`,
      where,
    ),
  )
  if (wordCut) tokens.pop()
  // A row head alone (`->`, `TCP`, `-a`) says nothing more.
  return tokens.length > 1
}
