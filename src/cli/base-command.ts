/**
 * The base of every kp command: the shared input flags, reading the state (files or live),
 * and the single place where errors become exit codes (src/errors.ts EXIT).
 */
import {existsSync} from 'node:fs'
import {Command} from '@oclif/core/command'
import * as Flags from '@oclif/core/flags'
import type {InferredFlags} from '@oclif/core/interfaces'
import {completenessOf, incompleteLine, inputErrors} from '../core/completeness.js'
import {EXIT, type ExitName, InputError, KpError, formatDiagnostic} from '../errors.js'
import {DEFAULT_TIMEOUT_SECONDS} from '../live/timeout.js'
import type {Diagnostic, Mode, ProxyState} from '../model/types.js'
import {FORMAT_IDS} from '../readers/registry.js'
import type {BundleFacts} from '../readers/bundle.js'
import type {FileReadRequest} from '../readers/read-state.js'
import type {FormatId, ReadOptions, SourceText} from '../readers/types.js'
import {escapeControl} from './escape.js'
import {blockWhenPipe, bufferedStreamOut, writeCompactJson} from './json-out.js'
import {OUTPUT_FORMATS, outputFormatOf, yamlWriter} from './output-format.js'
import {printKpError} from './print-error.js'
import {type RemoteFlagValues, remoteFlags, remoteOptionsFrom} from './remote-flags.js'
import type {RemoteNodeState} from '../live/remote/index.js'
import {usageErrorOf} from './usage-error.js'

export const MODES = ['iptables', 'ipvs', 'nftables'] as const

/** How much of a --json document one write takes (see logJson). */
const JSON_PIECE = 1 << 20
/** Warnings of one code shown on stderr without --verbose; the rest are counted in one line. */
const WARNINGS_PER_CODE = 20
/** Errors of an incomplete input listed on stderr; --json lists them all. */
const ERRORS_SHOWN = 20

/** The input flags loadState reads. */
export interface LoadFlags extends RemoteFlagValues {
  /** This host, asked for by name (`live` as kp diff's A or B): --node then only names the point of view. */
  live?: boolean
  file?: string[]
  format?: string
  mode?: string
  cluster?: string[]
  node?: string
  timeout?: number
  verbose?: boolean
}

/** What a command wants read of its input beyond the flags (ReadOptions: kp explain's focus, kp diff's servicesOnly, kp migrate's refsPerPort). */
export type LoadWants = Pick<ReadOptions, 'focus' | 'servicesOnly' | 'refsPerPort' | 'onParsed'>

/** The flags as a request to read these files (src/readers/read-state.ts readFiles). */
function fileRequest(flags: LoadFlags, files: string[], wants: LoadWants): FileReadRequest {
  return {
    files,
    format: flags.format as FormatId | undefined,
    mode: flags.mode as Mode | undefined,
    node: flags.node,
    cluster: flags.cluster,
    ...wants,
  }
}

/**
 * The cluster node a read is for, or null for files and this host: `--node NAME` without -f, or
 * one input `node/NAME` that is not a path on disk.
 */
export function remoteNodeOf(flags: LoadFlags): string | null {
  const files = flags.file ?? []
  if (files.length === 1) {
    const m = /^node\/([^/]+)$/.exec(files[0]!)
    return m && !existsSync(files[0]!) ? m[1]! : null
  }
  if (files.length === 0 && !flags.live && flags.node) return flags.node
  return null
}

export type KpFlags<T extends typeof Command> = InferredFlags<
  (typeof KpCommand)['baseFlags'] & T['flags']
>

export abstract class KpCommand extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    file: Flags.string({
      char: 'f',
      multiple: true,
      helpGroup: 'INPUT',
      description:
        'Read this dump, bundle folder (from `kp collect`), saved state, or `-` for stdin. Repeat for several files of one node. Without it, kp reads this node live.',
    }),
    format: Flags.option({
      options: FORMAT_IDS,
      helpGroup: 'INPUT',
      description: 'Force the input format instead of sniffing it.',
    })(),
    mode: Flags.option({
      options: MODES,
      helpGroup: 'INPUT',
      description: 'Force the proxy mode instead of detecting it.',
    })(),
    cluster: Flags.string({
      multiple: true,
      helpGroup: 'INPUT',
      description:
        'Cluster objects (kubectl get svc,endpointslices -A -o yaml) used to name IPVS virtual servers.',
    }),
    node: Flags.string({
      helpGroup: 'INPUT',
      description:
        "Without -f: read node NAME of the cluster through kubectl (its kube-proxy pod; see the CLUSTER flags). With -f: the node whose point of view cluster objects are read from (default: this host's name when the objects name it, else the cluster-wide view).",
    }),
    timeout: Flags.integer({
      min: 1,
      default: DEFAULT_TIMEOUT_SECONDS,
      helpGroup: 'INPUT',
      description:
        'Seconds each command kp runs to read this node live may take before kp stops it.',
    }),
    output: Flags.option({
      char: 'o',
      options: OUTPUT_FORMATS,
      helpGroup: 'OUTPUT',
      description:
        'json: the result as one JSON document (same as --json); yaml: that document as YAML; table: the text view (default); wide: the text view with more detail (kp list: every endpoint and its share; kp explain: the rule lines).',
    })(),
    'no-color': Flags.boolean({
      helpGroup: 'OUTPUT',
      description: 'Never colour the output (NO_COLOR is honoured too).',
    }),
    verbose: Flags.boolean({
      helpGroup: 'OUTPUT',
      description: 'Also show info-level diagnostics on stderr.',
    }),
    ...remoteFlags,
  }

  /**
   * The node facts (kernel, sysctls) of the last loadState() call, from a bundle or live
   * collection; null for plain files. Facts outside the model, such as sysctls, reach the
   * analyses that need them (kp migrate) through here.
   */
  protected loadedFacts: BundleFacts | null = null

  /**
   * What the last loadState() call read (files, bundle files, stdin, live outputs, --cluster
   * objects): `kp explain --rules` quotes the rules from these, as the user may have no copy.
   */
  protected loadedSources: readonly SourceText[] = []

  /** Reads the node's state from `-f` files or live, reports diagnostics on stderr, and fails with exit 3 on input errors. */
  protected async loadState(flags: LoadFlags, wants: LoadWants = {}): Promise<ProxyState> {
    const remote = remoteNodeOf(flags)
    if (remote !== null) return this.loadRemote(remote, flags, wants)
    const {readFiles, readState} = await import('../readers/read-state.js')
    if (flags.file && flags.file.length > 0) {
      const read = await readFiles(fileRequest(flags, flags.file, wants))
      this.loadedSources = read.sources
      return this.acceptState(read.state, read.facts, flags)
    }
    const {loadInputs} = await import('../readers/load.js')
    const cluster = flags.cluster ? (await loadInputs(flags.cluster)).sources : undefined
    const opts: ReadOptions = {
      mode: flags.mode as Mode | undefined,
      node: flags.node,
      cluster,
      ...wants,
    }
    const {collectLive} = await import('../live/collect-live.js')
    const live = await collectLive({
      mode: opts.mode,
      timeoutMs: flags.timeout === undefined ? undefined : flags.timeout * 1000,
    })
    for (const w of live.warnings) this.warnLine(w)
    // README, "Reading a node live": live reading says which commands it ran.
    if (flags.verbose)
      for (const c of live.commands) process.stderr.write(`kp: ran ${escapeControl(c)}\n`)
    const state = await readState({sources: live.sources, facts: live.facts}, opts)
    this.loadedSources = [...live.sources, ...(cluster ?? [])]
    return this.acceptState(state, live.facts, flags)
  }

  /** The nodes read through kubectl in this run, by name. */
  private readonly remoteReads = new Map<string, RemoteNodeState>()

  /** Reads node NAME of a cluster through kubectl (README, "Reaching nodes through kubectl"). */
  private async loadRemote(node: string, flags: LoadFlags, wants: LoadWants): Promise<ProxyState> {
    const {loadInputs} = await import('../readers/load.js')
    const cluster = flags.cluster ? (await loadInputs(flags.cluster)).sources : undefined
    const mode = flags.mode as Mode | undefined
    const cached = this.remoteReads.get(node)
    if (cached) {
      // A second read of the same node (kp explain's full read after a focused one): the
      // outputs are in hand, so only the reading is done again, not the kubectl round trips.
      const {readState} = await import('../readers/read-state.js')
      const state = await readState(
        {sources: cached.collection.sources, facts: cached.collection.facts},
        {mode, node, cluster: cached.cluster, ...wants},
      )
      return this.acceptState(state, cached.collection.facts, flags)
    }
    const {readRemoteNode} = await import('../live/remote/index.js')
    const options = {...remoteOptionsFrom(flags), mode, describe: Boolean(flags.verbose)}
    const r = await readRemoteNode(options, node, {
      mode,
      cluster,
      ...wants,
    })
    this.remoteReads.set(node, r)
    for (const w of r.collection.warnings) this.warnLine(w)
    if (flags.verbose) {
      const t = r.reachedThrough
      process.stderr.write(
        `${escapeControl(
          `kp: reached node/${node} through ${t.kubectl} (${t.kubectlVersion ?? 'version unknown'}), context ${t.context ?? '(none)'}, ${t.collectorPod ? 'collector pod' : 'pod'} ${t.pod} container ${t.container}`,
        )}\n`,
      )
      for (const c of r.collection.commands) process.stderr.write(`kp: ran ${escapeControl(c)}\n`)
    }
    this.loadedSources = [...r.collection.sources, ...r.cluster]
    return this.acceptState(r.state, r.collection.facts, flags)
  }

  /**
   * Reads two states, each as loadState reads one: an input is a path, `-`, `live`, or `node/NAME`. A then B,
   * so A's diagnostics are reported, and its input error thrown, before anything of B's.
   */
  protected async loadStatePair(
    first: string,
    second: string,
    flags: LoadFlags,
  ): Promise<[ProxyState, ProxyState]> {
    // Two states are read to be compared: what is not compared need not be made (servicesOnly).
    const wants: LoadWants = {servicesOnly: true}
    const load = (input: string): Promise<ProxyState> =>
      this.loadState(
        {...flags, file: input === 'live' ? undefined : [input], live: input === 'live'},
        wants,
      )
    const a = await load(first)
    return [a, await load(second)]
  }

  /**
   * What every read state goes through: its facts are kept and diagnostics reported. A state read
   * in part is kept, said to be incomplete first on stderr, and ends the run with exit 3; one of
   * which nothing could be read throws its first error (exit 3, src/core/completeness.ts).
   */
  private acceptState(state: ProxyState, facts: BundleFacts | null, flags: LoadFlags): ProxyState {
    this.loadedFacts = facts
    const completeness = completenessOf(state)
    if (completeness === 'partial') this.reportIncomplete(state)
    this.reportDiagnostics(state.diagnostics, Boolean(flags.verbose))
    const firstError = state.diagnostics.find((d) => d.severity === 'error')
    if (completeness === 'unreadable' && firstError)
      throw new InputError(formatDiagnostic(firstError), firstError.code, [], state.diagnostics)
    return state
  }

  /** Whether a state this run read was incomplete: the run then ends with exit 3 whatever it found. */
  protected inputIncomplete = false

  /**
   * Sets the exit status the run ends with once the command returns (set, not this.exit(): the
   * result must still be printed for --json). Incomplete input keeps exit 3: "no differences" or
   * "findings" over part of the input is not the answer for the whole.
   */
  protected setExitStatus(name: ExitName): void {
    process.exitCode = this.inputIncomplete ? EXIT.input.code : EXIT[name].code
  }

  /** The incomplete-input line, then the errors (the first ERRORS_SHOWN), each once per run. */
  private reportIncomplete(state: ProxyState): void {
    this.inputIncomplete = true
    process.exitCode = EXIT.input.code
    const errors = inputErrors(state)
    const lines = [`kp: ${incompleteLine(errors.length)}\n`]
    for (const d of errors.slice(0, ERRORS_SHOWN))
      lines.push(`kp: error: ${escapeControl(formatDiagnostic(d))} [${d.code}]\n`)
    if (errors.length > ERRORS_SHOWN)
      lines.push(`kp: ${errors.length - ERRORS_SHOWN} more error(s); --json lists them\n`)
    for (const line of lines) {
      if (this.reportedLines.has(line)) continue
      this.reportedLines.add(line)
      process.stderr.write(line)
    }
  }

  /** -o yaml: the writer of the YAML document, loaded in init(). */
  private writeYaml: ((doc: unknown) => void) | null = null

  override async init(): Promise<void> {
    await super.init()
    if (outputFormatOf(this.argv) === 'yaml') this.writeYaml = await yamlWriter()
  }

  /** -o json and -o yaml print the result document, as --json does. */
  override jsonEnabled(): boolean {
    const o = outputFormatOf(this.argv)
    return o === 'json' || o === 'yaml' || super.jsonEnabled()
  }

  /**
   * Plain JSON for --json. oclif's own logJson runs the document through a regex tokenizer to
   * colour it (ux/colorize-json.js), even when stdout is a pipe, which on a large state costs more
   * than reading the dump.
   */
  override logJson(json: unknown): void {
    if (this.writeYaml) return this.writeYaml(json)
    // Indented for a person at a terminal; compact into a pipe or file, where jq or a program
    // reads it: half the size, and written in pieces, never held whole (src/cli/json-out.ts).
    if (!process.stdout.isTTY) {
      blockWhenPipe(process.stdout)
      writeCompactJson(json, bufferedStreamOut(process.stdout))
    } else {
      // In pieces: one write would encode the whole document into one buffer at once.
      const text = JSON.stringify(json, null, 2)
      for (let at = 0; at < text.length; at += JSON_PIECE)
        process.stdout.write(text.slice(at, at + JSON_PIECE))
    }
    process.stdout.write('\n')
  }

  protected warnLine(message: string): void {
    process.stderr.write(`kp: warning: ${escapeControl(message)}\n`)
  }

  /** Lines already on stderr: a command that reads twice (explain's focused read, then a full one) says each once. */
  private readonly reportedLines = new Set<string>()

  /** Warnings on stderr so far, by code: a dump broken the same way 30,000 times says so in a few lines, not 30,000. */
  private readonly warningsShownByCode = new Map<string, number>()

  protected reportDiagnostics(diagnostics: Diagnostic[], verbose: boolean): void {
    let hiddenInfo = 0
    const shownByCode = this.warningsShownByCode
    const hiddenByCode = new Map<string, number>()
    for (const d of diagnostics) {
      if (d.severity === 'error') continue // the first one is the exit-3 message; the rest follow it
      if (d.severity === 'info' && !verbose) {
        hiddenInfo++
        continue
      }
      const line = `kp: ${d.severity}: ${escapeControl(formatDiagnostic(d))} [${d.code}]\n`
      if (this.reportedLines.has(line)) continue
      this.reportedLines.add(line)
      const shown = shownByCode.get(d.code) ?? 0
      if (!verbose && shown >= WARNINGS_PER_CODE) {
        hiddenByCode.set(d.code, (hiddenByCode.get(d.code) ?? 0) + 1)
        continue
      }
      shownByCode.set(d.code, shown + 1)
      process.stderr.write(line)
    }
    for (const [code, n] of hiddenByCode)
      process.stderr.write(
        `kp: ${n} more ${code} warning(s) hidden; --verbose shows them, --json lists them\n`,
      )
    if (hiddenInfo > 0)
      process.stderr.write(`kp: ${hiddenInfo} info diagnostic(s) hidden; --verbose shows them\n`)
  }

  protected override async catch(
    err: Error & {exitCode?: number; oclif?: {exit?: number}},
  ): Promise<unknown> {
    if (err instanceof KpError) {
      if (err instanceof InputError) {
        const rest = err.diagnostics.filter((d) => d.severity === 'error').slice(1, 20)
        for (const d of rest)
          process.stderr.write(`kp: error: ${escapeControl(formatDiagnostic(d))}\n`)
      }
      printKpError(err, this.jsonEnabled(), (doc) => this.logJson(doc))
      this.exit(err.exitCode)
    }
    // oclif's parse errors (unknown flag, missing argument, bad value) are usage errors: exit 2,
    // in kp's error shape (src/cli/usage-error.ts).
    const usage = usageErrorOf(err, this.id)
    if (usage) return this.catch(usage)
    // this.exit() keeps its code.
    if (err.oclif?.exit !== undefined) return super.catch(err)
    process.stderr.write(`kp: internal error (a bug): ${err.message}\n`)
    if (process.env.DEBUG) process.stderr.write(`${err.stack}\n`)
    else process.stderr.write('  set DEBUG=1 to see the stack trace, and please report it\n')
    this.exit(EXIT.internal.code)
  }
}
