/**
 * Network namespaces for tests that load rules into the kernel: each test makes its own
 * (`kp-test-<pid>-<n>`), loads rules with the real tools inside it, and deletes it. The host's
 * rules are never touched. Where namespaces cannot be made (not root, no `ip netns`), the
 * tests skip and say why.
 */
import {spawn, spawnSync} from 'node:child_process'
import {accessSync, constants} from 'node:fs'
import {join} from 'node:path'
import {beforeEach} from 'vitest'
import {type CliResult, ROOT, kpCommand} from '../helpers/run-cli.js'

let counter = 0

function sh(
  argv: string[],
  input?: string,
): {status: number | null; stdout: string; stderr: string} {
  const r = spawnSync(argv[0]!, argv.slice(1), {input: input ?? '', encoding: 'utf8'})
  return {
    status: r.status,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? (r.error ? String(r.error) : ''),
  }
}

/** Why kernel tests cannot run here, or null when they can. */
export function netnsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not root: loading rules into a network namespace needs root'
  const probe = `kp-test-${process.pid}-probe`
  const add = sh(['ip', 'netns', 'add', probe])
  if (add.status !== 0) return `\`ip netns add\` failed: ${add.stderr.trim() || 'unknown error'}`
  sh(['ip', 'netns', 'del', probe])
  return null
}

/**
 * The programs the kernel tests load and list rules with. One list for every such file: a machine
 * that lacks one of them skips them all, saying which are missing, instead of failing half of them.
 */
export const KERNEL_TOOLS = [
  'ip',
  'iptables',
  'iptables-save',
  'iptables-restore',
  'ip6tables',
  'ip6tables-save',
  'ip6tables-restore',
  'nft',
  'ipset',
  'nfacct',
] as const

/** The programs of `tools` that the tests' own spawns (which search PATH only) would not find. */
export function missingTools(tools: readonly string[]): string[] {
  const dirs = (process.env.PATH ?? '').split(':').filter(Boolean)
  const found = (tool: string) =>
    dirs.some((dir) => {
      try {
        accessSync(join(dir, tool), constants.X_OK)
        return true
      } catch {
        return false
      }
    })
  return tools.filter((t) => !found(t))
}

/**
 * Why the kernel tests of `file` cannot run here (not root, a program missing from PATH, no
 * network namespaces), or null when they can; said once on stderr. Under CI=true a missing
 * prerequisite is an error instead, so the file fails: CI is set up to run them, and a skip
 * there would hide every regression they guard.
 */
export function kernelUnavailable(
  file: string,
  tools: readonly string[] = KERNEL_TOOLS,
): string | null {
  let reason: string | null = null
  if (process.getuid?.() !== 0)
    reason = 'not root: loading rules into a network namespace needs root'
  else {
    const missing = missingTools(tools)
    if (missing.length > 0) reason = `not found on PATH: ${missing.join(', ')}`
    else reason = netnsUnavailable()
  }
  if (reason === null) return null
  if (process.env.CI === 'true')
    throw new Error(
      `${file}: kernel tests cannot run, and CI=true does not let them skip: ${reason}`,
    )
  process.stderr.write(`${file}: kernel tests skipped: ${reason}\n`)
  return reason
}

/** Skips each test of the enclosing describe (or file) with `reason` as its note, when there is one. */
export function skipEachWhen(reason: string | null): void {
  beforeEach((ctx) => {
    if (reason !== null) ctx.skip(reason)
  })
}

/** The argv prefix that runs a program as nobody (uid 65534). */
export const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups']

/**
 * Why kp cannot be run here as an unprivileged user, or null. Such a kp must still load: a clone
 * in a folder other users cannot enter (`mktemp -d` makes mode 700) cannot be read by nobody,
 * and kp would fail to start (exit 1) instead of failing for want of root.
 */
export function nobodyUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not root: cannot switch to another user'
  if (missingTools(['setpriv']).length > 0) return 'setpriv(1) not found on PATH'
  const probe = sh([...AS_NOBODY, 'sh', '-c', 'test -r "$0"', join(ROOT, 'package.json')])
  if (probe.status !== 0)
    return `uid 65534 cannot read this clone (${ROOT}): a parent folder is closed to other users`
  return null
}

export class Netns {
  readonly name = `kp-test-${process.pid}-${++counter}`
  constructor() {
    const r = sh(['ip', 'netns', 'add', this.name])
    if (r.status !== 0) throw new Error(`ip netns add ${this.name}: ${r.stderr}`)
  }

  /** The argv prefix that runs a program inside this namespace. */
  get prefix(): string[] {
    return ['ip', 'netns', 'exec', this.name]
  }

  /** Runs a program inside the namespace and fails the test when it fails. */
  run(argv: string[], input?: string): string {
    const r = sh([...this.prefix, ...argv], input)
    if (r.status !== 0)
      throw new Error(`${argv.join(' ')} in ${this.name} exited ${r.status}: ${r.stderr}`)
    return r.stdout
  }

  delete(): void {
    sh(['ip', 'netns', 'del', this.name])
  }
}

/** The nfacct counters the newest kube-proxy rules match on (iptables-overall.dump needs both). */
export function addKubeProxyNfacctCounters(ns: Netns): void {
  ns.run(['nfacct', 'add', 'ct_state_invalid_dropped_pkts'])
  ns.run(['nfacct', 'add', 'localhost_nps_accepted_pkts'])
}

/**
 * knftables' Fake.Dump() (the corpus nftables dumps) lists objects by type and then name, so a
 * rule can name a chain that is added further down; `nft -f` needs every chain before the
 * rules that jump to it. Moving the table/chain/set/map lines first keeps every rule's relative
 * order, which is the only order that matters (fixtures/PROVENANCE.md).
 */
export function objectsBeforeRules(transaction: string): string {
  const lines = transaction.split('\n')
  const isObject = (l: string) => /^add (table|chain|set|map) /.test(l)
  return [...lines.filter(isObject), ...lines.filter((l) => !isObject(l))].join('\n')
}

/**
 * runKp without blocking the test worker: kernel tests run many CLI processes, and on a loaded
 * machine a blocking spawnSync starves vitest's worker RPC ("Timeout calling onTaskUpdate").
 */
export function runKpAsync(
  args: string[],
  opts: {
    prefix?: string[]
    /** ms before the process is killed (a hang then fails the test instead of outliving it). */ timeout?: number
  } = {},
): Promise<CliResult> {
  const [cmd, ...rest] = [...(opts.prefix ?? []), ...kpCommand(), ...args]
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, rest, {
      cwd: ROOT,
      env: {...process.env, NO_COLOR: '1', FORCE_COLOR: '0'},
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeout,
      killSignal: 'SIGKILL',
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', reject)
    child.on('close', (code) =>
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode: code ?? -1,
      }),
    )
  })
}
