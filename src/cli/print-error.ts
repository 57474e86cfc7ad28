/**
 * How a run that ends in a KpError says so: under --json one `{"error": …}` document on stdout
 * (README, "JSON for scripts"), and always `kp: message` plus hints on stderr.
 */
import type {KpError} from '../errors.js'
import {escapeControl} from './escape.js'
import {inUserWords} from './sea/identity.js'

/** The --json error document. */
export function errorJson(err: KpError): {error: Record<string, unknown>} {
  return {error: {code: err.code, message: err.message, exitCode: err.exitCode, hints: err.hints}}
}

/**
 * Prints the error. `logJson` is the command's own JSON writer when there is a command; before
 * one exists (an unknown command) the document is written here, as the command would.
 */
export function printKpError(
  err: KpError,
  json: boolean,
  logJson: (doc: unknown) => void = writeJson,
): void {
  if (json) logJson(errorJson(err))
  process.stderr.write(`kp: ${escapeControl(err.message)}\n`)
  for (const h of err.hints) process.stderr.write(`  hint: ${escapeControl(inUserWords(h))}\n`)
}

function writeJson(doc: unknown): void {
  process.stdout.write(`${JSON.stringify(doc, null, process.stdout.isTTY ? 2 : undefined)}\n`)
}
