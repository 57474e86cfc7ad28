/**
 * A JSON parser (RFC 8259) that remembers on which line every object member and array item
 * starts, so a malformed saved state can be reported as `path:line: message`. It accepts what
 * JSON.parse accepts (a repeated member: the last one wins, as in JSON.parse and jq) and builds
 * the same value. One pass; strings without escapes are sliced, strings with escapes are
 * decoded by JSON.parse. Never throws: a syntax error is returned with its line.
 */

/** Where the parts of one object or array start (1-based lines). */
export interface JsonLines {
  line: number
  /** Object members by key (the key's line); array items by index. Plain objects and arrays: a Map per value costs too much garbage collection on large states. */
  members: Record<string, number> | number[]
}

export type JsonParse =
  | {ok: true; value: unknown; lines: WeakMap<object, JsonLines>}
  | {ok: false; message: string; line: number}

/** Deeper nesting than any ProxyState needs is refused rather than risking the stack. */
const MAX_DEPTH = 64
/**
 * jsonSyntaxError's limit: it looks for the error JSON.parse (which nests as deep as it likes)
 * found, and a document nested deeper than MAX_DEPTH before that error would otherwise be
 * reported as too deep, on the wrong line. Well within the stack (test/readers/kp-json/parse.test.ts).
 */
const DIAGNOSIS_MAX_DEPTH = 1000
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

class SyntaxProblem {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

export function parseJsonWithLines(text: string, maxDepth = MAX_DEPTH): JsonParse {
  const lines = new WeakMap<object, JsonLines>()
  // A raw newline can only stand in whitespace (never inside a JSON string), so counting them
  // while skipping whitespace keeps the current line. `lineAt` is for error offsets only.
  let line = 1
  const lineAt = (offset: number): number => {
    let n = 1
    for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++
    return n
  }

  let pos = 0
  const fail = (message: string, at = pos): never => {
    throw new SyntaxProblem(message, at)
  }
  const skipSpace = () => {
    while (pos < text.length) {
      const c = text.charCodeAt(pos)
      if (c === 0x0a) line++
      else if (c !== 0x20 && c !== 0x0d && c !== 0x09) break
      pos++
    }
  }
  const describeHere = (): string =>
    pos >= text.length ? 'the end of the input' : JSON.stringify(text[pos])

  const parseString = (): string => {
    const start = pos
    pos++ // opening quote
    let escaped = false
    while (pos < text.length) {
      const c = text.charCodeAt(pos)
      if (c === 0x22) {
        pos++
        const raw = text.slice(start, pos)
        if (!escaped) return raw.slice(1, -1)
        try {
          return JSON.parse(raw) as string
        } catch {
          return fail('invalid escape sequence in a string', start)
        }
      }
      if (c === 0x5c) {
        escaped = true
        pos += 2
        continue
      }
      if (c < 0x20) fail('a control character must be escaped inside a string')
      pos++
    }
    return fail('a string is not closed', start)
  }

  const parseValue = (depth: number): unknown => {
    skipSpace()
    if (depth > maxDepth) fail(`nested deeper than ${maxDepth} levels`)
    const c = text[pos]
    if (c === '{') return parseObject(depth)
    if (c === '[') return parseArray(depth)
    if (c === '"') return parseString()
    if (text.startsWith('true', pos)) return ((pos += 4), true)
    if (text.startsWith('false', pos)) return ((pos += 5), false)
    if (text.startsWith('null', pos)) return ((pos += 4), null)
    NUMBER.lastIndex = pos
    const m = NUMBER.exec(text)
    if (m) {
      pos += m[0].length
      return Number(m[0])
    }
    return fail(`unexpected ${describeHere()}`)
  }

  const parseObject = (depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {}
    const members: Record<string, number> = {}
    const info: JsonLines = {line, members}
    pos++
    skipSpace()
    if (text[pos] === '}') {
      pos++
      lines.set(out, info)
      return out
    }
    for (;;) {
      skipSpace()
      if (text[pos] !== '"') fail(`expected a member name in quotes, found ${describeHere()}`)
      const keyLine = line
      const key = parseString()
      skipSpace()
      // Quoted as JSON: a decoded name may hold a newline, and the message is one line.
      if (text[pos] !== ':')
        fail(
          `expected ":" after ${JSON.stringify(key.length > 60 ? `${key.slice(0, 60)}…` : key)}, found ${describeHere()}`,
        )
      pos++
      const value = parseValue(depth + 1)
      // Plain assignment of "__proto__" would set the prototype instead of a member.
      if (key === '__proto__')
        Object.defineProperty(out, key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        })
      else out[key] = value
      if (key === '__proto__')
        Object.defineProperty(members, key, {
          value: keyLine,
          enumerable: true,
          writable: true,
          configurable: true,
        })
      else members[key] = keyLine
      skipSpace()
      if (text[pos] === ',') {
        pos++
        continue
      }
      if (text[pos] === '}') {
        pos++
        lines.set(out, info)
        return out
      }
      fail(`expected "," or "}" in an object, found ${describeHere()}`)
    }
  }

  const parseArray = (depth: number): unknown[] => {
    const out: unknown[] = []
    const members: number[] = []
    const info: JsonLines = {line, members}
    pos++
    skipSpace()
    if (text[pos] === ']') {
      pos++
      lines.set(out, info)
      return out
    }
    for (;;) {
      skipSpace()
      members.push(line)
      out.push(parseValue(depth + 1))
      skipSpace()
      if (text[pos] === ',') {
        pos++
        continue
      }
      if (text[pos] === ']') {
        pos++
        lines.set(out, info)
        return out
      }
      fail(`expected "," or "]" in an array, found ${describeHere()}`)
    }
  }

  try {
    const value = parseValue(0)
    skipSpace()
    if (pos < text.length) fail(`unexpected ${describeHere()} after the JSON document`)
    return {ok: true, value, lines}
  } catch (error) {
    if (error instanceof SyntaxProblem)
      return {ok: false, message: error.message, line: lineAt(error.offset)}
    throw error
  }
}

/**
 * What is wrong with a text JSON.parse refused, and on which line, for readers that parse with
 * JSON.parse (nft -j, ip -j addr): its own message has no line, or only a character position,
 * and often quotes the input, newlines and all. One line; line 1 when this parser finds nothing
 * (it refuses nesting deeper than DIAGNOSIS_MAX_DEPTH first).
 */
export function jsonSyntaxError(text: string): {message: string; line: number} {
  const r = parseJsonWithLines(text, DIAGNOSIS_MAX_DEPTH)
  return r.ok ? {message: 'not valid JSON', line: 1} : {message: r.message, line: r.line}
}
