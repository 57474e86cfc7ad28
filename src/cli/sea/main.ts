/**
 * The single executable's entry (docs/sea.md; `npm run build:sea` bundles it with everything it
 * imports). `kp --version` is answered here; oclif and the commands (src/cli/sea/start.ts) are
 * loaded only for anything else, so the version costs little more than node's own start-up.
 */
import type {PJSON} from '@oclif/core/interfaces'
import {completionRequest, isVersionOnly, versionLine} from './identity.js'
import type {BuildIdentity} from './identity.js'

/** Written in by the build (scripts/build-sea.mjs): package.json's fields and the commit. */
declare const KP_SEA_BUILD: {pjson: PJSON; commit: string}

const argv = process.argv.slice(2)
const identity: BuildIdentity = {
  version: KP_SEA_BUILD.pjson.version,
  build: 'sea',
  commit: KP_SEA_BUILD.commit,
}
// `kubectl_complete-kp --version` asks to complete the word --version, not for the version.
if (isVersionOnly(argv) && !completionRequest(process.argv0, argv)) {
  process.stdout.write(`${versionLine(identity)}\n`)
} else {
  // A dynamic import, which the CommonJS bundle evaluates only here (no top-level await in a
  // single executable's CommonJS main script).
  import('./start.js').then(({start}) => start(argv, KP_SEA_BUILD.pjson)).catch(cannotStart)
}

/**
 * oclif could not start inside the single executable: nothing the user did or can fix, so one
 * line naming the build (for a bug report) and exit 70, not a stack trace (DEBUG=1 shows it).
 */
function cannotStart(error: unknown): never {
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]
  process.stderr.write(
    `kp: internal error (a bug): the single executable could not start: ${message} ` +
      `[${versionLine(identity)}]\n`,
  )
  if (process.env.DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`)
  // EXIT.internal (src/errors.ts), not imported: this file loads as little as it can.
  process.exit(70)
}
