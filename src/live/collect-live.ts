/**
 * Live reading for every command without `-f` (README, "Reading a node live"): detect the mode, run only the
 * read-only commands that mode needs, and hand their outputs to the readers as sources named
 * `live:<command line>`.
 */
import {EnvironmentError, InputError} from '../errors.js'
import type {Mode} from '../model/types.js'
import type {BundleFacts} from '../readers/bundle.js'
import type {SourceText} from '../readers/types.js'
import {environmentError} from './exec.js'
import type {ProbeRunner} from './probe.js'
import {type NodeSnapshot, snapshotNode} from './snapshot.js'

export interface LiveCollection {
  sources: SourceText[]
  facts: BundleFacts
  /** Leftovers of other modes, rules split across iptables backends: one line each. */
  warnings: string[]
  /** Every command run, in order, as shown to people. */
  commands: string[]
}

export interface LiveOptions {
  mode?: Mode
  timeoutMs?: number
  /** Root for the /proc and /sys lookups (tests); default "/". */
  root?: string
  /** Where the probes run (default: this host). */
  runner?: ProbeRunner
}

/**
 * The failures that make a live answer untrustworthy: without root every dump is empty or
 * refused, and a timed-out dump is incomplete. A missing program is fatal only when its output
 * is needed (checked by the caller); a missing `nft` on an iptables node is fine.
 */
export function fatalProbeFailure(snap: NodeSnapshot): EnvironmentError | null {
  for (const c of snap.captures) {
    const code = c.result?.failure?.code
    if (code === 'LIVE_NEEDS_ROOT' || code === 'LIVE_TIMEOUT') return environmentError(c.result!)
  }
  return null
}

/**
 * No mode found and `nft` missing: this may well be an nftables-mode node that kp cannot read
 * without nft, so "no kube-proxy here" would be a confident wrong answer. Exit 4, naming nft.
 * Not when --mode iptables or ipvs was asked for: nft says nothing about those.
 */
export function missingNftError(
  snap: NodeSnapshot,
  mode: Mode | undefined,
): EnvironmentError | null {
  if (snap.detection.mode !== null || (mode !== undefined && mode !== 'nftables')) return null
  const nft = snap.captures.find((c) => c.format === 'nft-json')
  if (nft?.result?.failure?.code !== 'LIVE_MISSING_PROGRAM') return null
  const iptables = snap.captures.filter((c) => c.format === 'iptables-save')
  const noIptables = iptables.every(
    (c) => c.result === null || c.result.failure?.code === 'LIVE_MISSING_PROGRAM',
  )
  return new EnvironmentError(
    noIptables
      ? 'neither nft nor iptables-save is installed, so kp cannot read this node'
      : 'nft is not installed, so kp cannot read nftables-mode rules on this node (no iptables- or IPVS-mode rules were found)',
    'LIVE_MISSING_PROGRAM',
    'nft',
    null,
    [
      noIptables
        ? 'install the iptables and nftables packages, or read a saved dump with -f FILE'
        : 'install the nftables package (it provides nft), or read a saved dump with -f FILE',
    ],
  )
}

/** The exit-3 error (no kube-proxy state here), or exit 4 when a program that could show it is missing. */
export function nothingFoundError(
  snap: NodeSnapshot,
  mode: Mode | undefined,
): EnvironmentError | InputError {
  const missingNft = missingNftError(snap, mode)
  if (missingNft) return missingNft
  const what = mode ? `${mode}-mode kube-proxy rules` : 'kube-proxy rules'
  return new InputError(
    `no ${what} found on this node: ${snap.detection.looked.join('; ')}`,
    'LIVE_NO_KUBE_PROXY',
    [
      mode
        ? 'drop --mode to let kp detect the mode'
        : 'is kube-proxy running on this node (and is kp in its network namespace)?',
      'read a saved dump instead with -f FILE',
    ],
  )
}

export async function collectLive(opts: LiveOptions): Promise<LiveCollection> {
  const snap = await snapshotNode({
    mode: opts.mode,
    timeoutMs: opts.timeoutMs,
    root: opts.root,
    runner: opts.runner,
  })
  const fatal = fatalProbeFailure(snap)
  if (fatal) throw fatal
  if (snap.detection.mode === null) throw nothingFoundError(snap, opts.mode)
  const read = snap.captures.filter((c) => c.read)
  const sources: SourceText[] = []
  for (const c of read) {
    if (!c.result || c.result.failure) {
      if (c.result) throw environmentError(c.result)
      throw new EnvironmentError(
        `${c.argv.join(' ')} was not run: ${c.skipped ?? 'unknown reason'}`,
        'LIVE_COMMAND_FAILED',
        c.argv.join(' '),
      )
    }
    // An empty output (no ipsets, say) says nothing; the readers would call it empty input.
    if (c.result.stdout.trim() === '') continue
    sources.push({
      path: `${opts.runner?.label ?? 'live'}:${c.result.commandLine}`,
      text: c.result.stdout,
      format: c.format ?? undefined,
      tool: c.tool,
    })
  }
  const shown = opts.runner?.shown ?? ((line: string) => line)
  const commands = snap.captures.flatMap((c) => (c.result ? [shown(c.result.commandLine)] : []))
  return {sources, facts: snap.facts, warnings: snap.detection.warnings, commands}
}
