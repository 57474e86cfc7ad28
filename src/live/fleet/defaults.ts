/**
 * How many nodes a fleet run reads at once by default. Its own module, without imports, so the
 * flag definitions can show it without loading the runner.
 */
export const DEFAULT_PARALLEL = 8
