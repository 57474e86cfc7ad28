/**
 * bin/run.js ends the process itself once a command's output is out (process.exit), instead of
 * letting node wait for V8's background work. What it must never do is cut the output short: a
 * pipe takes a large write in parts, and a reader may be slow.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {generateIptablesSave} from '../scripts/bench/gen-iptables.mjs'
import {ROOT} from './helpers/run-cli.js'

const tmp = mkdtempSync(join(tmpdir(), 'kp-bin-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/** Runs the built kp with stdout into a pipe that is only read after `delayMs`; resolves with all of it. */
function runSlowReader(
  args: string[],
  delayMs: number,
): Promise<{stdout: string; exitCode: number}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/run.js'), ...args], {
      cwd: ROOT,
      env: {...process.env, NO_COLOR: '1'},
    })
    const chunks: Buffer[] = []
    child.stdout.pause()
    setTimeout(() => child.stdout.on('data', (d: Buffer) => chunks.push(d)).resume(), delayMs)
    child.on('error', reject)
    child.on('close', (code) =>
      resolve({stdout: Buffer.concat(chunks).toString('utf8'), exitCode: code ?? -1}),
    )
  })
}

describe.skipIf(!existsSync(join(ROOT, 'dist/commands/list.js')))('bin/run.js (built)', () => {
  it('writes all of a large --json into a pipe that is read late, then exits 0', async () => {
    const dump = join(tmp, 'ipt.txt')
    await generateIptablesSave(dump, {services: 300, endpointsPerService: 10})
    const {stdout, exitCode} = await runSlowReader(['list', '--json', '-f', dump], 1500)
    expect(exitCode).toBe(0)
    // Far more than a pipe holds (64 KiB): the part written after the reader started must be there too.
    expect(stdout.length).toBeGreaterThan(500_000)
    expect((JSON.parse(stdout) as {services: unknown[]}).services).toHaveLength(300)
  }, 60_000)
})

describe('bin/run.js --version', () => {
  it('says it is the npm build', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/run.js'), '--version'], {cwd: ROOT})
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    const exitCode = await new Promise((resolve) => child.on('close', resolve))
    expect(exitCode).toBe(0)
    // With the commit `npm run build` wrote into dist/build.json; before a build, none.
    const built = existsSync(join(ROOT, 'dist/build.json'))
      ? (JSON.parse(readFileSync(join(ROOT, 'dist/build.json'), 'utf8')) as {commit: string})
      : null
    expect(stdout).toMatch(/^kp\/\d+\.\d+\.\d+ \S+ node-v\S+ \(npm(, commit \S+)?\)\n$/)
    if (built) {
      expect(built.commit).toMatch(/^([0-9a-f]{7,}(-dirty)?|unknown)$/)
      expect(stdout).toContain(`(npm, commit ${built.commit})\n`)
    }
  })
})

describe.skipIf(!existsSync(join(ROOT, 'dist/cli/completion.js')))('bin/run.js __complete', () => {
  it("answers kubectl's completion protocol, a -h among the words no help request", async () => {
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin/run.js'), '__complete', 'list', '-h', '--mode', 'ip'],
      {cwd: ROOT},
    )
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    const exitCode = await new Promise((resolve) => child.on('close', resolve))
    expect(exitCode).toBe(0)
    expect(stdout).toBe('iptables\nipvs\n:4\n')
  })
})

// The real kubectl, running bin/run.js linked as the plugin kubectl-kp (the single executable's
// own plugin tests are in test/cli/sea/executable.test.ts).
const kubectl = (process.env.PATH ?? '')
  .split(':')
  .map((dir) => join(dir, 'kubectl'))
  .find((path) => existsSync(path))
if (!kubectl) {
  if (process.env.CI === 'true') throw new Error('CI=true: no kubectl on PATH')
  process.stderr.write('skipping bin/run.js as a kubectl plugin: no kubectl on PATH\n')
}
describe.skipIf(!kubectl || !existsSync(join(ROOT, 'dist/commands/list.js')))(
  'bin/run.js as the kubectl plugin kubectl-kp',
  () => {
    it('names itself `kubectl kp` in help and hints', async () => {
      const dir = join(tmp, 'plugin-bin')
      mkdirSync(dir)
      symlinkSync(join(ROOT, 'bin/run.js'), join(dir, 'kubectl-kp'))
      const run = (args: string[]) =>
        new Promise<{stdout: string; stderr: string; exitCode: unknown}>((resolve) => {
          const child = spawn(kubectl!, ['kp', ...args], {
            cwd: ROOT,
            env: {...process.env, PATH: `${dir}:${process.env.PATH}`, NO_COLOR: '1'},
          })
          let [stdout, stderr] = ['', '']
          child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
          child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
          child.on('close', (exitCode) => resolve({stdout, stderr, exitCode}))
        })
      const help = await run(['explain', '--help'])
      expect(help.stdout).toMatch(/^ {2}\$ kubectl kp explain SERVICE /m)
      const wrong = await run(['list', '--no-such-flag'])
      expect(wrong.exitCode).toBe(2)
      expect(wrong.stderr).toContain('hint: `kubectl kp list --help`')
    })
    it('completes `kubectl kp …` linked as kubectl_complete-kp', async () => {
      const dir = join(tmp, 'complete-bin')
      mkdirSync(dir)
      symlinkSync(join(ROOT, 'bin/run.js'), join(dir, 'kubectl_complete-kp'))
      symlinkSync(join(ROOT, 'bin/run.js'), join(dir, 'kubectl-kp'))
      const child = spawn(kubectl!, ['__complete', 'kp', 'list', '--mode', 'ip'], {
        cwd: ROOT,
        env: {...process.env, PATH: `${dir}:${process.env.PATH}`},
      })
      let stdout = ''
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
      await new Promise((resolve) => child.on('close', resolve))
      expect(stdout).toBe('iptables\nipvs\n:4\n')
    })
  },
)
