/**
 * kubectl as kp runs it: the program on PATH (or --kubectl) with the user's --kubeconfig and
 * --context, and its failures sorted into what the operator must do (README, "Reaching nodes
 * through kubectl"). API reads use `kubectl get --raw PATH`: no discovery round trips, and the
 * objects exactly as the API server has them.
 */
import {randomBytes} from 'node:crypto'
import {accessSync, constants as fsConstants} from 'node:fs'
import {join} from 'node:path'
import {EnvironmentError} from '../../errors.js'
import {
  type CommandResult,
  NEEDS_ROOT,
  type RunOptions,
  commandLineOf,
  environmentError,
  runCommand,
} from '../exec.js'
import type {RemoteOptions} from './index.js'

export interface Kubectl {
  /** The program as run. */
  program: string
  /** Where it was found on PATH (absolute), for --verbose and bundles. */
  path: string
  /** --kubeconfig and --context, before every subcommand. */
  base: string[]
  run: RunOptions
  context: string | null
}

function onPath(program: string): string {
  if (program.includes('/')) return program
  for (const dir of (process.env.PATH ?? '').split(':').filter(Boolean)) {
    try {
      accessSync(join(dir, program), fsConstants.X_OK)
      return join(dir, program)
    } catch {
      // not in this folder
    }
  }
  return program
}

export function kubectlOf(o: RemoteOptions): Kubectl {
  const program = o.kubectl ?? 'kubectl'
  const base: string[] = []
  if (o.kubeconfig) base.push('--kubeconfig', o.kubeconfig)
  if (o.context) base.push('--context', o.context)
  return {
    program,
    path: onPath(program),
    base,
    // kubectl reads HOME, KUBECONFIG and proxies from the environment; the dump programs do not get it.
    run: {timeoutMs: o.timeoutMs, signal: o.signal, env: process.env},
    context: o.context ?? null,
  }
}

/** Runs kubectl; never throws (see CommandResult.failure). */
export function kubectl(k: Kubectl, args: readonly string[]): Promise<CommandResult> {
  return runCommand([k.program, ...k.base, ...args], k.run)
}

/** A request kp made, to name in a Forbidden hint when the API server's message does not. */
export interface Asked {
  verb: string
  resource: string
  namespace?: string
}

// The API server's RBAC denial: `User "u" cannot create resource "pods/exec" in API group "" in the namespace "kube-system"`.
const CANNOT =
  /cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]+)")?/
const FORBIDDEN = /\(Forbidden\)|\bis forbidden\b|\bforbidden:/i

function firstLines(text: string, n = 3): string {
  return text.trim().split('\n').slice(0, n).join(' / ')
}

/** The exit-4 error for a kubectl run that failed before reaching a program in a pod. */
export function clusterError(k: Kubectl, r: CommandResult, asked: Asked): EnvironmentError {
  const f = r.failure
  if (f?.code === 'LIVE_MISSING_PROGRAM' || f?.code === 'LIVE_TIMEOUT') return environmentError(r)
  const said = firstLines(r.stderr) || f?.message || 'kubectl failed'
  if (FORBIDDEN.test(r.stderr)) {
    const m = CANNOT.exec(r.stderr)
    const verb = m?.[1] ?? asked.verb
    const resource = m?.[2] ?? asked.resource
    const group = m?.[3] ? ` (API group ${m[3]})` : ''
    const ns = m?.[4] ?? asked.namespace
    return new EnvironmentError(
      `the cluster refused to let kp ${verb} ${resource}${ns ? ` in namespace ${ns}` : ''}: ${said}`,
      'LIVE_FORBIDDEN',
      r.commandLine,
      r.stderr.trim() || null,
      [
        `grant \`${verb}\` on \`${resource}\`${group}${ns ? ` in namespace ${ns}` : ''} to the user of this kubeconfig (a Role or ClusterRole rule), or run \`kp collect\` on the node and read the bundle with -f`,
      ],
    )
  }
  return new EnvironmentError(
    `kubectl cannot reach the cluster: ${said}`,
    'LIVE_CLUSTER_UNREACHABLE',
    r.commandLine,
    r.stderr.trim() || null,
    [
      `check that \`${commandLineOf([k.program, ...k.base, 'get', 'nodes'])}\` works (kubeconfig: --kubeconfig or $KUBECONFIG; context: --context)`,
    ],
  )
}

/** GET an API path as JSON (`kubectl get --raw`); null for 404 when allowed; throws otherwise. */
export async function getJson(
  k: Kubectl,
  path: string,
  asked: Asked,
  notFound: 'null' | 'throw' = 'throw',
): Promise<unknown> {
  const r = await kubectl(k, ['get', '--raw', path])
  if (r.failure) {
    if (notFound === 'null' && /\(NotFound\)|not found/i.test(r.stderr)) return null
    throw clusterError(k, r, asked)
  }
  try {
    return JSON.parse(r.stdout) as unknown
  } catch {
    throw new EnvironmentError(
      `kubectl get --raw ${path} did not answer JSON`,
      'LIVE_CLUSTER_UNREACHABLE',
      r.commandLine,
      r.stdout.slice(0, 200),
    )
  }
}

/** kubectl's client version ("v1.32.4"), or null. */
export async function kubectlVersion(k: Kubectl): Promise<string | null> {
  const r = await runCommand([k.program, 'version', '--client', '-o', 'json'], k.run)
  if (r.failure) return null
  try {
    const v = JSON.parse(r.stdout) as {clientVersion?: {gitVersion?: string}}
    return v.clientVersion?.gitVersion ?? null
  } catch {
    return null
  }
}

/** The context kubectl uses: --context, or the kubeconfig's current one. */
export async function currentContext(k: Kubectl): Promise<string | null> {
  if (k.context) return k.context
  const r = await kubectl(k, ['config', 'current-context'])
  return r.failure ? null : r.stdout.trim() || null
}

export interface PodRef {
  namespace: string
  name: string
  container: string
  image: string | null
}

// kubectl exec's own line when the remote program exits non-zero.
const TERMINATED = /^command terminated with exit code (\d+)\s*$/m
// containerd/runc when the program is not in the image (exit 126 or 127, or no status at all).
const NOT_FOUND = /executable file not found in \$PATH|no such file or directory: unknown/

const whereOf = (pod: PodRef) => `the pod ${pod.namespace}/${pod.name} (container ${pod.container})`

function missingProgram(argv: readonly string[], pod: PodRef): CommandResult['failure'] {
  return {
    code: 'LIVE_MISSING_PROGRAM',
    message: `${argv[0]} is not in ${whereOf(pod)}`,
    hint: `read this node through a pod whose image has ${argv[0]} (--collector-pod --collector-image IMAGE), or run \`kp collect\` on the node`,
  }
}

/** A program's run in a pod, classified as runCommand classifies a local one. */
export function podProgramResult(
  argv: readonly string[],
  pod: PodRef,
  stdout: string,
  stderr: string,
  exitCode: number,
): CommandResult {
  const commandLine = commandLineOf(argv)
  const base = {argv: [...argv], commandLine, stdout, stderr, exitCode}
  if (exitCode === 0) return {...base, failure: null}
  const why = stderr.trim().split('\n', 1)[0] ?? ''
  if (NEEDS_ROOT.test(stderr))
    return {
      ...base,
      failure: {
        code: 'LIVE_NEEDS_ROOT',
        message: `${commandLine} in ${whereOf(pod)} lacks privileges: ${why}`,
        hint: 'the container needs CAP_NET_ADMIN (kube-proxy has it); try --collector-pod',
      },
    }
  return {
    ...base,
    failure: {
      code: 'LIVE_COMMAND_FAILED',
      message: `${commandLine} exited with status ${exitCode} in ${whereOf(pod)}${why ? `: ${why}` : ''}`,
    },
  }
}

/**
 * Runs one program in a pod with `kubectl exec`. The result is the program's, as runCommand
 * gives it for a local run: exit code, stderr without kubectl's own line, and the same failure
 * classes. Failures of kubectl itself (no cluster, Forbidden) throw.
 */
export async function execIn(
  k: Kubectl,
  pod: PodRef,
  argv: readonly string[],
  opts: RunOptions,
): Promise<CommandResult> {
  const timeoutMs = opts.timeoutMs ?? k.run.timeoutMs
  const r = await runCommand(
    [
      k.program,
      ...k.base,
      'exec',
      '-n',
      pod.namespace,
      pod.name,
      '-c',
      pod.container,
      '--',
      ...argv,
    ],
    {...k.run, timeoutMs, signal: opts.signal ?? k.run.signal},
  )
  const commandLine = commandLineOf(argv)
  if (r.failure === null) return podProgramResult(argv, pod, r.stdout, r.stderr, 0)
  const base = {argv: [...argv], commandLine, stdout: r.stdout, stderr: r.stderr}
  if (r.failure.code === 'LIVE_TIMEOUT')
    return {
      ...base,
      exitCode: null,
      failure: {
        code: 'LIVE_TIMEOUT',
        message: `${commandLine} in ${whereOf(pod)} did not finish within ${(timeoutMs ?? 60_000) / 1000} s and was stopped`,
      },
    }
  if (r.failure.code === 'LIVE_MISSING_PROGRAM') throw environmentError(r)
  if (NOT_FOUND.test(`${r.stdout}\n${r.stderr}`))
    return {...base, exitCode: 127, failure: missingProgram(argv, pod)}
  const term = TERMINATED.exec(r.stderr)
  if (!term)
    throw clusterError(k, r, {verb: 'create', resource: 'pods/exec', namespace: pod.namespace})
  return podProgramResult(
    argv,
    pod,
    r.stdout,
    r.stderr.replace(TERMINATED, '').trim(),
    Number(term[1]),
  )
}

/** `sh: 1: ipvsadm: not found` (dash), `sh: ipvsadm: not found` (busybox): exit 127. */
const SH_NOT_FOUND = /: not found\s*$/m

/**
 * Runs several programs in a pod with one `kubectl exec` of the image's sh, one after another:
 * one kubectl process and one round trip instead of one per program (README, "Reaching nodes
 * through kubectl"). Each program's stdout, stderr and status are cut out between marker lines.
 */
export async function execBatch(
  k: Kubectl,
  pod: PodRef,
  argvs: ReadonlyArray<readonly string[]>,
  opts: RunOptions,
): Promise<CommandResult[]> {
  const token = `==kp-${randomBytes(6).toString('hex')}==`
  const script = argvs
    .map(
      (argv, i) =>
        `printf '\\n%s ${i}\\n' "$0"; printf '\\n%s ${i}\\n' "$0" >&2; ${commandLineOf(argv)}; printf '\\n%s rc %d\\n' "$0" $? >&2`,
    )
    .join('\n')
  const r = await execIn(k, pod, ['sh', '-c', script, token], opts)
  if (r.failure !== null) {
    if (r.failure.code === 'LIVE_MISSING_PROGRAM')
      return Promise.all(argvs.map((argv) => execIn(k, pod, argv, opts)))
    return argvs.map((argv) => ({...r, argv: [...argv], commandLine: commandLineOf(argv)}))
  }
  const outs = new Map<number, string>()
  for (const part of r.stdout.split(`\n${token} `).slice(1)) {
    const nl = part.indexOf('\n')
    outs.set(Number(part.slice(0, nl)), part.slice(nl + 1))
  }
  const errs = new Map<number, string>()
  const codes = new Map<number, number>()
  let current = -1
  for (const part of r.stderr.split(`\n${token} `).slice(1)) {
    const nl = part.indexOf('\n')
    const head = part.slice(0, nl < 0 ? undefined : nl)
    if (head.startsWith('rc ')) codes.set(current, Number(head.slice(3)))
    else {
      current = Number(head)
      errs.set(current, nl < 0 ? '' : part.slice(nl + 1))
    }
  }
  return argvs.map((argv, i) => {
    const stdout = outs.get(i) ?? ''
    const stderr = errs.get(i) ?? ''
    const code = codes.get(i) ?? 255
    if (code === 127 && SH_NOT_FOUND.test(stderr))
      return {
        argv: [...argv],
        commandLine: commandLineOf(argv),
        stdout,
        stderr,
        exitCode: 127,
        failure: missingProgram(argv, pod),
      }
    return podProgramResult(argv, pod, stdout, stderr, code)
  })
}
