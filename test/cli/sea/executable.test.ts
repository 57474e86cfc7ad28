/**
 * The single executable (`npm run build:sea`, docs/sea.md) run as users run it: with no `node` on
 * PATH, and as a kubectl plugin through the real kubectl. Its output must be the npm build's, byte
 * for byte. .ci/run builds it before `npm test`; without it this file is skipped with the reason,
 * except under CI=true, where a missing executable fails.
 */
import {spawn} from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT} from '../../helpers/run-cli.js'

const SEA = join(ROOT, `dist-sea/kp-${process.platform}-${process.arch}`)
const NPM_BIN = join(ROOT, 'bin/run.js')
// The real kubectl, found on the PATH the tests run with (the executable itself gets none).
const KUBECTL = (process.env.PATH ?? '')
  .split(':')
  .map((dir) => join(dir, 'kubectl'))
  .find((path) => existsSync(path))
const RULES = 'fixtures/iptables/upstream-overall/input.rules'
const NFT = 'fixtures/nft/upstream-overall/input.nft'

const missing = existsSync(SEA) ? null : `no ${SEA}: run \`npm run build:sea\` first`
const noNpmBuild = existsSync(join(ROOT, 'dist/commands/list.js'))
  ? null
  : 'no npm build to compare with: run `npm run build` first'
const noKubectl = KUBECTL ? null : 'no kubectl on PATH'
/** A skip prints why; under CI=true it fails instead (CI has everything these tests need). */
function skipping(what: string, reason: string | null): boolean {
  if (!reason) return false
  if (process.env.CI === 'true') throw new Error(`CI=true: ${what}: ${reason}`)
  process.stderr.write(`skipping ${what}: ${reason}\n`)
  return true
}
const skipAll = skipping('the single-executable tests', missing)
const skipCompare = !skipAll && skipping('the comparison with the npm build', noNpmBuild)
const skipKubectl = !skipAll && skipping('the kubectl plugin tests', noKubectl)

// A PATH without node (nor anything else but kubectl): the executable must need nothing of it.
const tmp = mkdtempSync(join(tmpdir(), 'kp-sea-'))
const bin = join(tmp, 'bin')
mkdirSync(bin)
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

interface Run {
  stdout: string
  stderr: string
  exitCode: number
}

function run(
  cmd: string,
  args: string[],
  opts: {input?: string; path?: string; env?: Record<string, string>} = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: {HOME: tmp, SHELL: '/bin/sh', PATH: opts.path ?? bin, NO_COLOR: '1', ...opts.env},
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({stdout, stderr, exitCode: code ?? -1}))
    child.stdin.end(opts.input ?? '')
  })
}

const sea = (args: string[], input?: string) => run(SEA, args, {input})
const npm = (args: string[], input?: string) =>
  run(process.execPath, [NPM_BIN, ...args], {input, path: process.env.PATH})

describe.skipIf(skipAll)('the single executable', () => {
  it('runs with no node on PATH, and says it is the single executable', async () => {
    expect(existsSync(join(bin, 'node'))).toBe(false)
    const r = await sea(['--version'])
    expect(r.exitCode).toBe(0)
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version
    expect(r.stdout).toBe(
      `kp/${version} ${process.platform}-${process.arch} node-${process.version} ` +
        `(sea, commit ${r.stdout.match(/commit (\S+)\)/)?.[1]})\n`,
    )
    expect(r.stdout).toMatch(/\(sea, commit ([0-9a-f]{7,}(-dirty)?|unknown)\)\n$/)
  })

  it('exits 70 with one line when oclif cannot start inside it', async () => {
    // A stand-in for a broken start: a preloaded script (NODE_OPTIONS, which a single executable
    // honours) makes os.arch() throw, which oclif's Config.load calls before any command runs.
    const sabotage = join(tmp, 'sabotage.cjs')
    writeFileSync(sabotage, `require('node:os').arch = () => { throw new Error('no arch\\nat x') }`)
    const r = await run(SEA, ['list', '-f', RULES], {env: {NODE_OPTIONS: `--require ${sabotage}`}})
    expect(r.exitCode).toBe(70)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(
      /^kp: internal error \(a bug\): the single executable could not start: no arch \[kp\/.* \(sea, commit .*\)\]\n$/,
    )
  })

  describe.skipIf(skipCompare)('prints what the npm build prints, byte for byte', () => {
    const cases: [string, string[], number][] = [
      ['list', ['list', '-f', RULES], 0],
      ['list --json', ['list', '--json', '-f', RULES], 0],
      ['explain', ['explain', 'ns5/svc5', '--rules', '-f', RULES], 0],
      ['explain --json', ['explain', 'ns5/svc5', '--json', '-f', NFT], 0],
      ['migrate', ['migrate', '--to', 'nftables', '-f', RULES], 0],
      ['migrate -o yaml', ['migrate', '--to', 'ipvs', '-o', 'yaml', '-f', RULES], 0],
      ['diff (differences: 1)', ['diff', RULES, NFT], 1],
      ['diff --json', ['diff', '--json', RULES, NFT], 1],
      ['help', ['explain', '--help'], 0],
      // Every command of the npm build is in the single executable's list (src/cli/sea/commands.ts).
      ['the command list', ['--help'], 0],
      ['an unknown flag (usage: 2)', ['list', '--no-such-flag'], 2],
      ['an unknown command (usage: 2)', ['nosuch'], 2],
      ['a missing file (input: 3)', ['list', '-f', 'does/not/exist'], 3],
      ['a file that is not rules (input: 3)', ['list', '-f', 'package.json', '--format', 'nft'], 3],
    ]
    it.each(cases)('%s', async (_name, args, exitCode) => {
      const [a, b] = await Promise.all([sea(args), npm(args)])
      expect(b.exitCode).toBe(exitCode)
      expect(a).toEqual(b)
    })
    it('a dump on stdin', async () => {
      const input = readFileSync(join(ROOT, RULES), 'utf8')
      const args = ['list', '--json', '-f', '-']
      const [a, b] = await Promise.all([sea(args, input), npm(args, input)])
      expect(a).toEqual(b)
      expect(JSON.parse(a.stdout).services.length).toBeGreaterThan(0)
    })
  })

  it('completes in bash with the script `completion bash` prints', async () => {
    const script = await sea(['completion', 'bash'])
    expect(script.exitCode).toBe(0)
    writeFileSync(join(tmp, 'kp.bash'), script.stdout)
    // The function the script registers for kp, called as bash calls it on a TAB (no sed or
    // other programs: PATH has none).
    expect(script.stdout).toContain('complete -o default -F _kp_completion kp\n')
    const complete = (line: string) =>
      run('/bin/bash', [
        '-c',
        `source ${join(tmp, 'kp.bash')}; COMP_WORDS=(${line}); ` +
          `COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _kp_completion; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ])
    expect((await complete('kp ex')).stdout).toBe('explain\n')
    expect((await complete('kp list --mode ip')).stdout).toBe('iptables\nipvs\n')
  })

  describe.skipIf(skipKubectl)('as a kubectl plugin (the real kubectl)', () => {
    beforeAll(() => {
      symlinkSync(KUBECTL!, join(bin, 'kubectl'))
      symlinkSync(SEA, join(bin, 'kubectl-kp'))
      symlinkSync(SEA, join(bin, 'kubectl_complete-kp'))
    })

    it('kubectl finds kubectl-kp on PATH and runs `kubectl kp explain`', async () => {
      const r = await run(join(bin, 'kubectl'), [
        'kp',
        'explain',
        'ns5/svc5',
        '--json',
        '-f',
        RULES,
      ])
      expect(r.exitCode).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({kind: 'ExplainResult', mode: 'iptables'})
    })
    it('names itself `kubectl kp` in its help', async () => {
      const r = await run(join(bin, 'kubectl'), ['kp', 'explain', '--help'])
      expect(r.exitCode).toBe(0)
      expect(r.stdout).toMatch(/^ {2}\$ kubectl kp explain SERVICE /m)
    })
    it('is listed by `kubectl plugin list` and answers `kubectl kp --version`', async () => {
      const list = await run(join(bin, 'kubectl'), ['plugin', 'list'])
      expect(list.exitCode).toBe(0)
      expect(list.stdout).toContain(join(bin, 'kubectl-kp'))
      expect(list.stderr).not.toMatch(/warning/i)
      const version = await run(join(bin, 'kubectl'), ['kp', '--version'])
      expect(version.exitCode).toBe(0)
      expect(version.stdout).toMatch(/^kp\/\S+ \S+ node-\S+ \(sea, commit \S+\)\n$/)
    })
    it('names `kubectl kp` in the hints of its errors', async () => {
      const r = await run(join(bin, 'kubectl'), ['kp', 'list', '--no-such-flag'])
      expect(r.exitCode).toBe(2)
      expect(r.stderr).toBe(
        'kp: Nonexistent flag: --no-such-flag\n' +
          '  hint: `kubectl kp list --help` lists the arguments and flags\n',
      )
    })
    it('completes `kubectl kp …` through kubectl_complete-kp (kubectl ≥ 1.26)', async () => {
      // `kubectl __complete` is what kubectl's own shell completion script runs on a TAB.
      const command = await run(join(bin, 'kubectl'), ['__complete', 'kp', 'expl'])
      expect(command.exitCode).toBe(0)
      expect(command.stdout).toMatch(/^explain\tExplain .*\n:4\n$/)
      const value = await run(join(bin, 'kubectl'), ['__complete', 'kp', 'list', '--mode', 'ip'])
      expect(value.stdout).toBe('iptables\nipvs\n:4\n')
      // A word that is a flag of kp's own (--version, -h) is completed, not acted on.
      const flag = await run(join(bin, 'kubectl'), ['__complete', 'kp', 'list', '-h', '--verb'])
      expect(flag.stdout).toMatch(/^--verbose\t.*\n:4\n$/)
    })
    it('`kubectl kp completion bash` points to kubectl_complete-kp instead of a script', async () => {
      // A script for `kubectl kp` would register itself for kubectl and break kubectl's own.
      const r = await run(join(bin, 'kubectl'), ['kp', 'completion', 'bash'])
      expect(r.exitCode).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^kp: as `kubectl kp`, kp completes through kubectl's own shell/)
      expect(r.stderr).toContain('kubectl_complete-kp')
    })
    it("passes kp's exit codes through kubectl", async () => {
      const r = await run(join(bin, 'kubectl'), ['kp', 'list', '-f', 'does/not/exist'])
      expect(r.exitCode).toBe(3)
    })
  })
})
