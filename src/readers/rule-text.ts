/**
 * The text of the rules a service port cites (`kp explain --rules`), taken from the sources this
 * run read: files and bundle files, stdin, and the output of live commands, which the user has no
 * copy of. A saved state's references name dumps this run did not read; they get no text rather
 * than the text of a file that may have changed since.
 *
 * A line of iptables-save or `nft list` text is quoted as it is. An `nft -j` document has no
 * statement lines (./nft-json/rule-text.ts writes each cited entry in nft's words).
 */
import type {SourceRef} from '../model/types.js'
import {nftJsonEntryText} from './nft-json/rule-text.js'
import {sniffFormat} from './registry.js'
import type {SourceText} from './types.js'

/**
 * The lines quoting one reference, given every reference of the same service port (an nft map
 * is quoted by the elements that lead to that port's chains); [] when there is no text to show.
 */
export type RuleText = (ref: SourceRef, siblings: readonly SourceRef[]) => string[]

type Lookup = (line: number, siblings: readonly number[]) => string[]

function lookupFor(src: SourceText): Lookup {
  let text: string
  try {
    text = src.text
  } catch {
    // A file that cannot be read again (removed since): no text, as for any unknown source.
    return () => []
  }
  const format = src.format ?? sniffFormat(text.slice(0, 4096))
  if (format === 'nft-json') return nftJsonEntryText(text)
  const lines = text.split(/\r?\n/)
  return (line) => {
    const l = lines[line - 1]
    return l === undefined ? [] : [l]
  }
}

/** Quotes from `sources` (what this run read); each source is read and split once, when first cited. */
export function ruleTextOf(sources: readonly SourceText[]): RuleText {
  const byPath = new Map<string, SourceText>()
  for (const s of sources) if (!byPath.has(s.path)) byPath.set(s.path, s)
  const lookups = new Map<string, Lookup>()
  return (ref, siblings) => {
    const src = byPath.get(ref.path)
    if (src === undefined) return []
    let lookup = lookups.get(ref.path)
    if (lookup === undefined) {
      lookup = lookupFor(src)
      lookups.set(ref.path, lookup)
    }
    const same = siblings.filter((s) => s.path === ref.path).map((s) => s.line)
    return lookup(ref.line, same)
  }
}
