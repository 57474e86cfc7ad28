/**
 * How long one command kp runs on the node may take by default. Its own module, without
 * imports, so that the flag definitions (src/cli/base-command.ts) can show it without loading
 * node:child_process at start-up.
 */
export const DEFAULT_TIMEOUT_SECONDS = 60
