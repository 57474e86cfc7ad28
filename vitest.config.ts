import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Kernel tests create network namespaces and spawn the built CLI; give them room on 2 cores.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: {FORCE_COLOR: '0', NO_COLOR: '1'},
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
})
