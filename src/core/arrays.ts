/**
 * Appends each of `items` to `target`. `target.push(...items)` passes every item as an argument
 * of one call, and a call takes only so many (about 120,000 here, set by the stack's size): an
 * input with that many real servers of one virtual server, diagnostics or service ports stopped
 * kp with "Maximum call stack size exceeded" (test/core/arrays.test.ts).
 */
/** Appends `value` to the list under `key`, making the list on first use (a multimap's add). */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

export function pushAll<T>(target: T[], items: readonly T[]): void {
  for (let i = 0; i < items.length; i++) target.push(items[i]!)
}
