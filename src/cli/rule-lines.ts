/**
 * The text of the rules `kp explain --rules` points at. Only files given with -f in this run
 * are read again (directly or inside a bundle folder): a saved state's paths may name files
 * that changed since, and stdin or live output cannot be read twice.
 */
import {readFile} from 'node:fs/promises'
import {resolve, sep} from 'node:path'
import type {SourceRef} from '../model/types.js'

export type RuleText = (ref: SourceRef) => string | null

export async function loadRuleText(refs: SourceRef[], fileFlags: string[]): Promise<RuleText> {
  const given = fileFlags.filter((f) => f !== '-').map((f) => resolve(f))
  const readable = (path: string) => {
    const abs = resolve(path)
    return given.some((g) => abs === g || abs.startsWith(g + sep))
  }
  const files = new Map<string, string[] | null>()
  for (const path of new Set(refs.map((r) => r.path))) {
    if (path === '-' || path.startsWith('live:') || !readable(path)) continue
    files.set(
      path,
      await readFile(path, 'utf8').then(
        (t) => t.split(/\r?\n/),
        () => null,
      ),
    )
  }
  return (ref) => files.get(ref.path)?.[ref.line - 1] ?? null
}
