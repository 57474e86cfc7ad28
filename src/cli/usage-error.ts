/**
 * oclif's own usage errors (an unknown flag, a missing argument, a flag value of the wrong kind,
 * an unknown command) as kp's UsageError: exit 2, one line on stderr, `{"error": …}` under
 * --json. Left to oclif, they exit 1 under --json with the parser's whole context (~45 KB).
 */
import {editDistance} from '../analyze/edit-distance.js'
import {UsageError} from '../errors.js'

interface OclifError {
  message: string
  code?: string
  parse?: unknown
  oclif?: {exit?: number}
}

// Parser lines that are advice for a person, not the error itself.
const ADVICE = /^(See more help with|Note: |Alternatively, you can use|Did you mean|Run .* --help)/

/**
 * The error as one line: oclif spreads one over several ("Missing 1 required arg:\nservice  ns/…",
 * then help advice). The first line, and when it ends in a colon, the first word of the next.
 */
export function oneLine(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !ADVICE.test(l))
  const first = lines[0] ?? 'usage error'
  const next = lines[1]
  if (next === undefined) return first
  // "The following errors occurred:" then one per line.
  if (/^The following errors? occurred:$/.test(first)) return lines.slice(1).join('; ')
  // "Missing 1 required arg:" then the argument's help line: its name.
  if (first.endsWith(':')) return `${first} ${next.split(/\s{2,}/)[0]}`
  // "Parsing --timeout" then what is wrong with its value.
  if (first.startsWith('Parsing ')) return `${first}: ${next}`
  return first
}

/** The UsageError (exit 2) for one of oclif's parse errors; null for any other error. */
export function usageErrorOf(err: unknown, commandId: string | undefined): UsageError | null {
  const e = err as OclifError
  const isParse = e.parse !== undefined
  if (!isParse && (e.oclif?.exit !== 2 || e.code === 'EEXIT')) return null
  const line = oneLine(e.message)
  const help = commandId ? `kp ${commandId} --help` : 'kp --help'
  const hints = [`\`${help}\` lists the arguments and flags`]
  // -v is --version, and only on its own (`kp -v`); after a command it is an unknown flag.
  if (/Nonexistent flags?:.*(^|[\s,])-v\b/.test(line))
    hints.unshift(
      '-v is the version flag and works only alone (`kp -v`); --verbose shows info diagnostics',
    )
  return new UsageError(line, 'USAGE_INVALID', hints)
}

/** An unknown command, with the closest known ones. */
export function unknownCommandError(id: string, known: string[]): UsageError {
  const closest = known
    .map((k) => ({k, d: editDistance(id, k)}))
    .filter(({k, d}) => d <= Math.max(2, Math.floor(k.length / 2)))
    .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k))
    .map(({k}) => k)
  const hints = closest.length > 0 ? [`did you mean: ${closest.slice(0, 3).join(', ')}?`] : []
  hints.push(`commands: ${[...known].sort().join(', ')}; \`kp --help\` says what each does`)
  return new UsageError(`unknown command "${id}"`, 'USAGE_INVALID', hints)
}
