/**
 * Network namespaces for tests that load rules into the kernel: each test makes its own
 * (`kp-test-<pid>-<n>`), loads rules with the real tools inside it, and deletes it. The host's
 * rules are never touched. Where namespaces cannot be made (not root, no `ip netns`), the
 * tests skip and say why.
 */
import {spawn, spawnSync} from 'node:child_process'
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
