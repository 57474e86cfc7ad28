/**
 * Cluster objects cut off (KUBE_TRUNCATED): `kubectl get ... -o yaml|json` of several objects is
 * one List whose `kind: List` and `metadata` come after its items (kubectl sorts the keys), so a
 * List without them was cut inside its items. The whole items before the cut are kept; the one
 * the cut falls in may be partial (a Service without the rest of its ports) and is not read.
 * A single object cut at a line boundary cannot be told from a shorter one (README).
 */

/** A repaired text (the whole items before the cut, then the List's end) and what was dropped. */
export interface CutList {
  text: string
  /** 1-based line where the input ends. */
  line: number
  /** Whole items kept. */
  items: number
}

function lastLine(text: string): number {
  let n = 1
  const end = text.trimEnd().length
  for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) n++
  return n
}

/**
 * A kubectl YAML List (an `items:` line in the first column) with no first-column `kind:`: cut
 * off. Null for any other text, and for a List written by hand with its `kind:` first.
 */
export function cutYamlList(text: string): CutList | null {
  const items = /^items:[ \t]*\r?$/m.exec(text)
  if (!items) return null
  if (/^kind:/m.test(text)) return null
  const after = text.slice(items.index)
  // The items start with `- ` in the first column; the last one may be partial.
  const starts: number[] = []
  const itemRe = /^- /gm
  for (let m = itemRe.exec(after); m; m = itemRe.exec(after)) starts.push(items.index + m.index)
  const kept = starts.length > 0 ? text.slice(0, starts[starts.length - 1]) : text
  const body = kept.endsWith('\n') ? kept : `${kept}\n`
  return {
    text: `${body}kind: List\n`,
    line: lastLine(text),
    items: Math.max(0, starts.length - 1),
  }
}

/**
 * `kubectl -o json` of a List cut inside its root "items" array (JSON.parse failed): the text
 * up to the last whole item, with the array and the List closed. Null when the text is not
 * that (a syntax error elsewhere, no root "items" array, nothing open at its end).
 */
export function cutJsonList(text: string): CutList | null {
  // Per open container: object or not; depth 2 under the root's "items" is an item.
  const stack: boolean[] = []
  let lastRootKey: string | null = null
  let expectingKey = false
  let itemsOpenAt = -1
  let lastItemEnd = -1
  let items = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      let j = i + 1
      while (j < text.length && text.charCodeAt(j) !== 0x22)
        j += text.charCodeAt(j) === 0x5c ? 2 : 1
      if (j >= text.length) break // cut inside a string
      if (expectingKey && stack.length === 1) lastRootKey = text.slice(i + 1, j)
      expectingKey = false
      i = j
    } else if (c === 0x7b || c === 0x5b) {
      if (c === 0x5b && stack.length === 1 && stack[0] && lastRootKey === 'items') {
        if (itemsOpenAt >= 0) return null // a second "items": leave it to JSON.parse's message
        itemsOpenAt = i
      }
      stack.push(c === 0x7b)
      expectingKey = c === 0x7b
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop()
      if (stack.length === 2 && itemsOpenAt >= 0 && lastRootKey === 'items') {
        lastItemEnd = i + 1
        items++
      }
      if (stack.length === 1 && lastRootKey === 'items' && c === 0x5d) return null // items closed
      if (stack.length === 0) return null // the document closed: not cut
    } else if (c === 0x2c) {
      expectingKey = stack[stack.length - 1] === true
    }
  }
  if (itemsOpenAt < 0 || stack.length < 2) return null
  const kept = lastItemEnd >= 0 ? text.slice(0, lastItemEnd) : text.slice(0, itemsOpenAt + 1)
  return {text: `${kept}], "kind": "List"}`, line: lastLine(text), items}
}
