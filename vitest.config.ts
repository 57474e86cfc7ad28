import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Kernel tests create network namespaces and spawn the built CLI; give them room on 2 cores.
    // vitest's default on a 2-core machine is one worker (cores - 1); the suite waits on spawned
    // programs and the kernel as much as on the CPU, so two keep both cores busy.
    maxWorkers: 2,
    minWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: {FORCE_COLOR: '0', NO_COLOR: '1'},
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
})
