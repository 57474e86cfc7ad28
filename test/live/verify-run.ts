/** Running `kp verify --json` in the kernel tests, and the differences it reports per service port. */
import type {VerifyResult} from '../../src/analyze/verify/types.js'
import {runKpAsync} from '../helpers/run-cli.js'

export async function verifyJson(
  ...args: string[]
): Promise<{result: VerifyResult; exitCode: number; stderr: string}> {
  const r = await runKpAsync(['verify', '--json', ...args], {timeout: 120_000})
  return {
    result: JSON.parse(r.stdout || 'null') as VerifyResult,
    exitCode: r.exitCode,
    stderr: r.stderr,
  }
}

/** Service port → its differences, as "client: difference" lines. */
export const differing = (r: VerifyResult) =>
  Object.fromEntries(
    r.services
      .filter((s) => s.verdict === 'differs')
      .map((s) => [
        s.service,
        s.checks.flatMap((c) => c.differences.map((d) => `${c.client}: ${d}`)),
      ]),
  )
