import type {Reporter, TestModule} from 'vitest/node'

/**
 * Prints the plain `N passed, N failed, N skipped` line CI reads after vitest's own summary, and
 * why tests were skipped (the notes of ctx.skip, e.g. test/live/netns.ts kernelUnavailable).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    const why = new Map<string, number>()
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const result = test.result()
        if (result.state === 'passed') passed++
        else if (result.state === 'failed') failed++
        else {
          skipped++
          const note = result.state === 'skipped' ? result.note : undefined
          if (note) why.set(note, (why.get(note) ?? 0) + 1)
        }
      }
      // A file that failed to load has no tests to count: count it as a failure.
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++
    }
    for (const [note, n] of why) process.stdout.write(`skipped ${n} test(s): ${note}\n`)
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`)
  }
}
