import type {Diagnostic, Mode, ProxyState, SourceInfo} from '../model/types.js'
import type {ByteSource} from './bytes.js'

/** One input, fully read: a file, stdin, a file of a bundle, or the output of a live command. */
export interface SourceText {
  /** A file path, "-" for stdin, or "live:<command>". */
  path: string
  /** The whole input as text. A file's is decoded from `bytes` on first use (see ./load.ts). */
  readonly text: string
  /**
   * The bytes of a file or stdin, for a reader that takes them in pieces (the focused iptables
   * read, ./iptables/focus.ts) and so never decodes, or even holds, the whole input.
   */
  readonly bytes?: ByteSource
  /** Set when the caller knows the format (bundle manifest, live collection, --format). */
  format?: FormatId
  /** The tool that produced it, when known (live collection records the version). */
  tool?: string | null
}

/** The result of the first, format-specific stage: what one source says, not yet a ProxyState. */
export interface ParsedSource<T = unknown> {
  format: FormatId
  source: SourceInfo
  data: T
  diagnostics: Diagnostic[]
}

export interface FormatModule<T = unknown> {
  /** Never throws on bad input: what it cannot read becomes a diagnostic. `opts.focus` may be ignored. */
  parse(src: SourceText, opts?: ReadOptions): ParsedSource<T>
}

/**
 * What one question is about (`kp explain ns/name`): a reader may then read only the rules of
 * the services whose text holds a needle, plus the node-wide ones. A reader that does so says
 * it in an info diagnostic; one that ignores it reads everything.
 */
export interface ReadFocus {
  /** Substrings of the rules of the wanted services: `ns/name`, or `/name` for any namespace. */
  needles: string[]
  /**
   * Substrings that choose a rule only in the NodePort dispatch chains (KUBE-NODEPORTS,
   * KUBE-EXTERNAL-SERVICES): kp trace's `--dport P`, which in KUBE-SERVICES would pick every
   * service on that port.
   */
  portNeedles?: string[]
}

export interface ReadOptions {
  /** Forces the mode the state is built for (`--mode`). */
  mode?: Mode
  /** The node whose point of view cluster objects are read from (`--node`). */
  node?: string
  /** Cluster objects used to name IPVS virtual servers (`--cluster`). */
  cluster?: SourceText[]
  /** Read only what these services need (kp explain); see ReadFocus. */
  focus?: ReadFocus
  /**
   * Only the service ports and node settings are wanted (kp diff compares nothing else): a
   * reader may then leave each ServicePort's `rules` and the state's `foreign` empty instead of
   * making them (the iptables reader does: a rule reference per rule and a pass over every chain).
   * Every diagnostic is still made.
   */
  servicesOnly?: boolean
  /**
   * Each ServicePort keeps at most this many rule references, its first in line order: kp
   * migrate cites no more as a finding's evidence (EVIDENCE_REFS_PER_PORT). readState cuts every
   * reader's lists; the iptables reader does not make the rest.
   */
  refsPerPort?: number
  /**
   * Called with each source as parsed, before the state is built: `kp trace` walks the rules
   * as read, not the model made of them.
   */
  onParsed?: (parsed: ParsedSource) => void
}

/** Builds one node's ProxyState from the parsed sources of one mode. */
export type StateBuilder = (
  parsed: ParsedSource[],
  opts: ReadOptions,
) => ProxyState | Promise<ProxyState>

export type FormatId =
  | 'iptables-save'
  | 'iptables-list'
  | 'nft'
  | 'nft-json'
  | 'ipvsadm'
  | 'ipset'
  | 'ip-addr'
  | 'kube'
  | 'kp-json'
