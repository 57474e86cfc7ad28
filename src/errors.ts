/**
 * The error family and the exit-code table (src/errors.ts EXIT). No oclif import: the core throws
 * these, and src/cli/base-command.ts maps them to exit codes once, at the edge.
 */
import type {DiagnosticCode} from './catalog/diagnostics.js'
import type {Diagnostic} from './model/types.js'

/** The one table of exit codes. README and help text are checked against it (test/errors.test.ts). */
export const EXIT = {
  ok: {
    code: 0,
    meaning: 'success; `diff`: no differences; `migrate --check`: nothing at or above `--fail-on`',
  },
  found: {
    code: 1,
    meaning:
      'the answer is "found": `diff` found differences, `migrate --check` found findings at or above `--fail-on`, `verify` found the kernel doing otherwise',
  },
  usage: {
    code: 2,
    meaning: 'usage error (unknown flag, missing argument, a flag value of the wrong kind)',
  },
  input: {
    code: 3,
    meaning: 'input error: unreadable or malformed input, unknown format, service not found',
  },
  environment: {
    code: 4,
    meaning: 'environment error: a program kp runs is missing, failed, timed out, or needs root',
  },
  internal: {code: 70, meaning: 'internal error (a bug); a stack trace only with DEBUG'},
  interrupted: {
    code: 130,
    meaning:
      'interrupted (Ctrl-C): a fleet run stopped; partial files are removed, finished bundles kept',
  },
} as const

export type ExitName = keyof typeof EXIT

export class KpError extends Error {
  readonly exitCode: number
  constructor(
    message: string,
    readonly code: string,
    exit: ExitName,
    readonly hints: string[] = [],
  ) {
    super(message)
    this.name = new.target.name
    this.exitCode = EXIT[exit].code
  }
}

/** Unreadable or malformed input, unknown format, a service that is not there (exit 3). */
export class InputError extends KpError {
  constructor(
    message: string,
    code = 'INPUT_INVALID',
    hints: string[] = [],
    readonly diagnostics: Diagnostic[] = [],
  ) {
    super(message, code, 'input', hints)
  }
}

/** A program kp runs is missing, failed, timed out or needs root (exit 4). */
export class EnvironmentError extends KpError {
  constructor(
    message: string,
    code: DiagnosticCode,
    readonly command: string | null = null,
    readonly stderr: string | null = null,
    hints: string[] = [],
  ) {
    super(message, code, 'environment', hints)
  }
}

/** Wrong flags or arguments that oclif's parser cannot catch by itself (exit 2). */
export class UsageError extends KpError {
  constructor(message: string, code: DiagnosticCode, hints: string[] = []) {
    super(message, code, 'usage', hints)
  }
}

/** `path:line: message`, the one-line shape every input problem is reported in. */
export function formatDiagnostic(d: Pick<Diagnostic, 'message' | 'source'>): string {
  return d.source ? `${d.source.path}:${d.source.line}: ${d.message}` : d.message
}
