/**
 * The readers' front door: sniff each source's format, parse it, pick the mode, and build one
 * ProxyState for the node. Never throws on bad input: problems are diagnostics in the state,
 * and the command layer turns error-severity ones into exit 3.
 */
import {pushAll} from '../core/arrays.js'
import {dropInvalidAddresses, locateIn} from './valid-addresses.js'
import type {Mode, ProxyState} from '../model/types.js'
import {diag, emptyState, sortState} from '../core/state.js'
import {isBlank, withoutByteOrderMark} from '../core/text.js'
import {binaryDataProblem, isBlankSource, readHead, SNIFF_BYTES} from './bytes.js'
import {bundleFactsOf, type BundleFacts} from './bundle.js'
import type {IptablesRuleset} from './iptables/ruleset.js'
import {isIpvsModeRuleset} from './ipvsadm/iptables-facts.js'
import {loadInputs} from './load.js'
import {FORMAT_IDS, formatEntry, sniffFormat} from './registry.js'
import type {
  FormatId,
  ParsedSource,
  ReadFocus,
  ReadOptions,
  SourceText,
  StateBuilder,
} from './types.js'
import type {DiagnosticCode} from '../catalog/diagnostics.js'

/** The start of a source, for sniffing: from its bytes when it has them, so the rest stays undecoded. */
function headOf(src: SourceText): string {
  const bytes = src.bytes
  // A multi-byte character cut at the end decodes as U+FFFD: harmless to the sniffers.
  return withoutByteOrderMark(
    bytes ? readHead(bytes, SNIFF_BYTES).toString('utf8') : src.text.slice(0, SNIFF_BYTES),
  )
}

/** Generic checks every source gets before a format parser sees it. */
function rejectUnreadable(src: SourceText, head: string): string | null {
  // Text in the head (but for its last character, which may be a cut one) settles it without
  // reading the source again; only a head of blanks needs the rest looked at.
  const headHasText = !isBlank(head.slice(0, -1))
  const bytes = src.bytes
  if (!headHasText && (bytes ? isBlankSource(bytes) : isBlank(src.text))) return 'empty input'
  return binaryDataProblem(head)
}

async function parseOne(
  src: SourceText,
  forced: FormatId | undefined,
  opts: ReadOptions,
): Promise<ParsedSource | ProxyState> {
  const head = headOf(src)
  const bad = rejectUnreadable(src, head)
  const failed = (message: string, code: DiagnosticCode): ProxyState => {
    const s = emptyState('iptables')
    s.sources.push({path: src.path, format: 'unknown', tool: src.tool ?? null})
    s.diagnostics.push(diag('error', code, message, {path: src.path, line: 1}))
    return s
  }
  if (bad) return failed(bad, bad.startsWith('empty') ? 'INPUT_EMPTY' : 'INPUT_BINARY')
  const format = forced ?? src.format ?? sniffFormat(head)
  // A bundle manifest names its files' formats: one this kp does not know is bad input (formatEntry throws).
  if (format && !FORMAT_IDS.includes(format))
    return failed(
      `unknown format ${JSON.stringify(format)} (known: ${FORMAT_IDS.join(', ')})`,
      'INPUT_UNKNOWN_FORMAT',
    )
  if (!format) {
    return failed(
      'cannot tell the format of this input (expected iptables-save, nft, nft -j, ipvsadm -Ln/-Sn, ipset, ip addr, Kubernetes YAML/JSON, or kp JSON); use --format to force one',
      'INPUT_UNKNOWN_FORMAT',
    )
  }
  const mod = await formatEntry(format).load()
  return mod.parse(src, opts)
}

function isState(x: ParsedSource | ProxyState): x is ProxyState {
  return (x as ProxyState).kind === 'ProxyState'
}

/** Which mode these sources describe, when --mode does not say. */
function detectMode(parsed: ParsedSource[]): Mode {
  const has = (f: FormatId) => parsed.some((p) => p.format === f)
  if (has('ipvsadm') || has('ipset') || has('ip-addr')) return 'ipvs'
  if (has('nft') || has('nft-json')) return 'nftables'
  // IPVS mode still writes iptables rules (KUBE-IPVS-FILTER, KUBE-NODE-PORT...) but no KUBE-SVC-*:
  // such a dump alone belongs to the IPVS builder.
  if (
    parsed.some(
      (p) => p.format === 'iptables-save' && p.data && isIpvsModeRuleset(p.data as IptablesRuleset),
    )
  )
    return 'ipvs'
  if (has('iptables-save')) return 'iptables'
  return 'cluster'
}

async function builderFor(mode: Mode, parsed: ParsedSource[]): Promise<StateBuilder> {
  // nft text or JSON is read by the nft builder whatever the mode: it also recognises iptables
  // mode seen through `nft list ruleset` on an iptables-nft node (fixtures/nft/iptables-nft-*).
  if (
    (mode === 'iptables' || mode === 'nftables') &&
    parsed.some((p) => p.format === 'nft' || p.format === 'nft-json')
  ) {
    return (await import('./nft/build.js')).buildNftablesState
  }
  switch (mode) {
    case 'iptables':
      return (await import('./iptables/build.js')).buildIptablesState
    case 'nftables':
      return (await import('./nft/build.js')).buildNftablesState
    case 'ipvs':
      return (await import('./ipvsadm/build.js')).buildIpvsState
    case 'cluster':
      return (await import('./kube/build.js')).buildClusterState
  }
}

export interface ReadStateInput {
  sources: SourceText[]
  facts?: BundleFacts | null
  /** Forces every source's format (`--format`). */
  format?: FormatId
}

/** Reads one node's sources into a ProxyState (sorted, with every diagnostic kept). */
export async function readState(
  input: ReadStateInput,
  opts: ReadOptions = {},
): Promise<ProxyState> {
  const parsed: ParsedSource[] = []
  const failed: ProxyState[] = []
  const saved: ProxyState[] = []
  // The files the saved states came from: a saved state's own sources name the dumps it was read from.
  const savedPaths: string[] = []
  for (const src of input.sources) {
    const r = await parseOne(src, input.format, opts)
    if (!isState(r)) opts.onParsed?.(r)
    if (isState(r)) failed.push(r)
    else if (r.format === 'kp-json' && r.data) {
      // The reader's warnings (members the model does not have) go with the saved state.
      const state = r.data as ProxyState
      pushAll(state.diagnostics, r.diagnostics)
      saved.push(state)
      savedPaths.push(src.path)
    } else if (r.format === 'kp-json') {
      const s = emptyState('iptables')
      s.sources.push(r.source)
      pushAll(s.diagnostics, r.diagnostics)
      failed.push(s)
    } else parsed.push(r)
  }

  let state: ProxyState
  if (saved.length > 0 && parsed.length === 0) {
    state = saved[0]!
    if (saved.length > 1) {
      state.diagnostics.push(
        diag(
          'error',
          'INPUT_SEVERAL_STATES',
          'several saved ProxyStates given; kp reads one node at a time',
          {path: savedPaths[1]!, line: 1},
        ),
      )
    }
  } else if (parsed.length > 0) {
    const onlyCluster = parsed.every((p) => p.format === 'kube')
    const mode = opts.mode && !onlyCluster ? opts.mode : detectMode(parsed)
    state = await (await builderFor(mode, parsed))(parsed, opts)
    // Parse diagnostics come first, in source order; the builder's follow, then the last check's.
    state.diagnostics = [
      ...parsed.flatMap((p) => p.diagnostics),
      ...state.diagnostics,
      ...dropInvalidAddresses(state, locateIn(input.sources)),
    ]
    state.sources = parsed.map((p) => p.source)
    if (saved.length > 0) {
      state.diagnostics.push(
        diag(
          'warning',
          'INPUT_MIXED',
          'a saved ProxyState was given with other inputs; it was ignored',
          null,
        ),
      )
    }
  } else {
    state = emptyState(opts.mode ?? 'iptables')
  }
  for (const f of failed) {
    pushAll(state.sources, f.sources)
    pushAll(state.diagnostics, f.diagnostics)
  }
  // Facts come from a bundle's manifest.json, written by hand as often as by kp collect.
  const facts = input.facts ? bundleFactsOf(input.facts) : null
  if (facts) {
    state.node.name ??= facts.node
    state.node.kernel ??= facts.kernel
    state.node.nftVersion ??= facts.nftVersion
    state.node.iptablesBackends ??= facts.iptablesBackends
  }
  // What an error kept from being read is missing: the state says so (src/core/completeness.ts).
  if (state.diagnostics.some((d) => d.severity === 'error')) state.complete = false
  sortState(state)
  const keep = opts.refsPerPort
  if (keep !== undefined)
    for (const sp of state.services) if (sp.rules.length > keep) sp.rules.length = Math.max(0, keep)
  return state
}

/** What `-f PATH...` and the other input flags ask to read: paths, not sources. */
export interface FileReadRequest {
  files: string[]
  /** `--format`. */
  format?: FormatId
  mode?: Mode
  node?: string
  /** `--cluster` paths. */
  cluster?: string[]
  focus?: ReadFocus
  /** ReadOptions.servicesOnly. */
  servicesOnly?: boolean
  /** ReadOptions.refsPerPort. */
  refsPerPort?: number
  /** ReadOptions.onParsed. */
  onParsed?: ReadOptions['onParsed']
}

export interface FileRead {
  state: ProxyState
  /** Facts from a bundle folder; null for plain files. */
  facts: BundleFacts | null
  /** What was read (files, bundle files, `--cluster` objects): the text `kp explain --rules` quotes. */
  sources: SourceText[]
}

/**
 * Loads the files of one node and reads them into a ProxyState. Unreadable paths are
 * InputErrors (thrown by ./load.ts); everything else the input gets wrong is a diagnostic.
 */
export async function readFiles(req: FileReadRequest): Promise<FileRead> {
  const inputs = await loadInputs(req.files)
  // --cluster wins over the objects a bundle saved; those are seen from the bundle's node.
  const saved = req.cluster === undefined && inputs.cluster.length > 0
  const cluster = req.cluster
    ? (await loadInputs(req.cluster)).sources
    : saved
      ? inputs.cluster
      : undefined
  const state = await readState(
    {sources: inputs.sources, facts: inputs.facts, format: req.format},
    {
      mode: req.mode,
      node: req.node ?? (saved ? (inputs.facts?.node ?? undefined) : undefined),
      cluster,
      focus: req.focus,
      servicesOnly: req.servicesOnly,
      refsPerPort: req.refsPerPort,
      onParsed: req.onParsed,
    },
  )
  // Warnings kp collect recorded in a bundle come first: they say what the rules cannot.
  state.diagnostics = [...inputs.diagnostics, ...state.diagnostics]
  return {state, facts: inputs.facts, sources: [...inputs.sources, ...(cluster ?? [])]}
}
