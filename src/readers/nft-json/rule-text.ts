/**
 * The text `kp explain --rules` quotes from an `nft -j` document. Its "lines" are entries of the
 * `nftables` array (./parse.ts), and `nft -j` prints all of them on one line, so a line number
 * tells the user nothing: each cited entry is written back in nft's own words instead. A chain
 * is its rules, one per line as `chain NAME handle N: RULE` (N the rule's handle, which
 * `nft delete rule ... handle N` takes); a map or set is the elements that lead to the chains
 * the same service port cites (its other entries), as `map NAME: ELEMENT`.
 */
import {elementWords, type Json, objectLines, ruleWords} from './parse.js'

type JsonObject = {[key: string]: Json}

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** The text of the entry at `line`, given the lines of the other entries the same service port cites. */
export type EntryText = (line: number, siblings: readonly number[]) => string[]

const text = (v: Json | undefined): string =>
  typeof v === 'string' || typeof v === 'number' ? String(v) : '?'

/** A table, chain or set is named by family, table and name: a chain of another table is another chain. */
const chainKey = (family: Json | undefined, table: Json | undefined, name: Json | undefined) =>
  `${text(family)} ${text(table)} ${text(name)}`

function ruleText(rule: JsonObject): string {
  const words = ruleWords(rule.expr)
  const comment = typeof rule.comment === 'string' ? ` comment ${JSON.stringify(rule.comment)}` : ''
  const body = words === null ? '(statements kp cannot read)' : words.join(' ') + comment
  return `chain ${text(rule.chain)} handle ${text(rule.handle)}: ${body}`
}

/** The chains a map element jumps to (`goto NAME`, `jump NAME`). */
function targetsOf(element: string): string[] {
  const m = /\s:\s.*\b(?:goto|jump)\s+(\S+)/.exec(element)
  return m ? [m[1]!] : []
}

/**
 * Reads `text` (an `nft -j` document) once and answers for any of its entries; every entry
 * answers nothing when the text is not an `nft -j` document.
 */
export function nftJsonEntryText(source: string): EntryText {
  let entries: Json[] = []
  try {
    const root = JSON.parse(source) as Json
    if (isObject(root) && Array.isArray(root.nftables)) entries = root.nftables
  } catch {
    return () => []
  }
  const starts = objectLines(source)
  const byLine = new Map<number, JsonObject>()
  const rulesOf = new Map<string, JsonObject[]>()
  entries.forEach((entry, index) => {
    if (!isObject(entry)) return
    byLine.set(starts?.[index] ?? index + 1, entry)
    const rule = entry.rule
    if (isObject(rule)) {
      const key = chainKey(rule.family, rule.table, rule.chain)
      const list = rulesOf.get(key)
      if (list) list.push(rule)
      else rulesOf.set(key, [rule])
    }
  })

  const chainNamesAt = (lines: readonly number[]): Set<string> => {
    const names = new Set<string>()
    for (const line of lines) {
      const chain = byLine.get(line)?.chain
      if (isObject(chain)) names.add(text(chain.name))
    }
    return names
  }

  return (line, siblings) => {
    const entry = byLine.get(line)
    if (entry === undefined) return []
    if (isObject(entry.rule)) return [ruleText(entry.rule)]
    const chain = entry.chain
    if (isObject(chain)) {
      const rules = rulesOf.get(chainKey(chain.family, chain.table, chain.name)) ?? []
      return rules.length > 0
        ? rules.map(ruleText)
        : [`chain ${text(chain.name)} handle ${text(chain.handle)}: (no rules)`]
    }
    for (const kind of ['map', 'set', 'element'] as const) {
      const set = entry[kind]
      if (!isObject(set)) continue
      const name = `${kind === 'element' ? 'element of' : kind} ${text(set.name)}`
      const chains = chainNamesAt(siblings)
      const elements = Array.isArray(set.elem) ? set.elem : []
      // A map element is a [key, verdict] pair; a set's never is, so pairs are read as map elements.
      const cited = elements
        .map((e) => elementWords(e, true))
        .filter((e): e is string => e !== null && targetsOf(e).some((t) => chains.has(t)))
      return cited.length > 0
        ? cited.map((e) => `${name}: ${e}`)
        : [`${name} (${elements.length} elements)`]
    }
    const kind = Object.keys(entry)[0] ?? 'entry'
    const inner = entry[kind]
    return [`${kind} ${isObject(inner) ? text(inner.name) : ''}`.trim()]
  }
}
