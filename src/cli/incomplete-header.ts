/**
 * `kp migrate --allow-incomplete`: rules rendered from an input read only in part start with a
 * comment saying so and naming the errors, so whoever loads the file later sees that services may
 * be missing from it. A format without a comment syntax (ipvsadm-restore) gets none;
 * the command warns on stderr instead.
 */
import {formatDiagnostic} from '../errors.js'
import type {Diagnostic} from '../model/types.js'
import type {RenderedFile, RenderResult} from '../render/types.js'
import {escapeControl} from './escape.js'

/** Errors named in the header; the rest are counted. */
const ERRORS_NAMED = 20

/** Loaders whose input takes `#` comment lines: iptables-restore and its variants, ipset restore (kp's own ipset file starts with one), nft -f, sh. */
const HASH_COMMENTS = /^(?:ip6?tables(?:-legacy|-nft)?-restore|ipset|nft|sh)\b/

export function takesHashComments(file: Pick<RenderedFile, 'loadWith'>): boolean {
  return HASH_COMMENTS.test(file.loadWith)
}

/** The comment lines, each ending with a newline. Messages quote the input: escaped, one line each. */
export function incompleteHeader(errors: readonly Diagnostic[]): string {
  const lines = [
    `# kp: INCOMPLETE INPUT: ${errors.length} error(s) kept part of the input from being read;`,
    '# kp: services, endpoints or settings in the unread part are missing from these rules.',
  ]
  for (const d of errors.slice(0, ERRORS_NAMED))
    lines.push(`# kp: error: ${escapeControl(formatDiagnostic(d))} [${d.code}]`)
  if (errors.length > ERRORS_NAMED)
    lines.push(`# kp: ... and ${errors.length - ERRORS_NAMED} more error(s)`)
  return `${lines.join('\n')}\n`
}

/**
 * The rendered files with the header on each that takes comments; `uncommented` names the others.
 * The primary text is the first file's.
 */
export function withIncompleteHeader(
  rendered: RenderResult,
  errors: readonly Diagnostic[],
): {rendered: RenderResult; uncommented: string[]} {
  const header = incompleteHeader(errors)
  const uncommented: string[] = []
  const files = rendered.files.map((f) => {
    if (takesHashComments(f)) return {...f, text: header + f.text}
    uncommented.push(f.name)
    return f
  })
  const primary = rendered.files[0]
  const text = primary && !takesHashComments(primary) ? rendered.text : header + rendered.text
  return {rendered: {...rendered, text, files}, uncommented}
}
