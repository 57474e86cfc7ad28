/**
 * The focused read behind `kp explain NAME` (ReadOptions.focus): which lines of an
 * iptables-save dump the parser needs to read one service completely, chosen from the dump's
 * bytes, taken in pieces through one small buffer, without decoding or tokenising them. Only
 * the chosen lines become text; the few chosen late are read again by offset.
 *
 * One cheap pass sorts every line by the chain its `-A CHAIN` / `:CHAIN` names. Then:
 * * dispatch chains (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES,
 *   KUBE-PROXY-FIREWALL, nat and filter): a rule into a per-service chain, or a filter
 *   REJECT/DROP/ACCEPT service rule, is read only when its text holds a needle, or when it
 *   jumps into a service already chosen. The service port names in the comments of the chosen
 *   rules become needles too, so a rule naming the service only by name (a health check) comes
 *   in. Every other dispatch rule (the `-j KUBE-NODEPORTS` last rule, old masquerade rules,
 *   the localhost NodePort copies) is node evidence and is read;
 * * per-service chains (KUBE-SVC/SVL/EXT/FW/XLB-<hash>) of a chosen hash are read whole, and
 *   the KUBE-SEP chains they jump to with them (large-cluster SEP rules have no comment, so
 *   they are reached by jump, not by needle). A hash is chosen by a chosen dispatch rule that
 *   jumps to it, or by a rule of its own chains that holds a needle (a chain no dispatch rule
 *   reaches is still the service's to the full read);
 * * of the other per-service chains, of the rules that do not jump to a KUBE-SEP chain
 *   (masquerade and short-circuit rules: where the node's pod CIDR and local-traffic detector
 *   show) the first of each shape is read (evidenceSignature), and of the other SEP chains
 *   only a 2015-era `-j MARK` (masquerade mark); so the node settings come out as in a full
 *   read. Per-service chains are declared when one of their rules is read, and the first
 *   KUBE-SVC/SVL chain anyway (that the dump has one is node evidence);
 * * every other line (headers, COMMIT, fixed chains, foreign chains) is read.
 * Choosing more than needed is harmless (a needle `ns/a` also picks `ns/ab`): every service it
 * picks is read whole. Groups picked only for node evidence have no frontend and are dropped.
 *
 * Lines end at the byte 0x0A, which is never part of a multi-byte UTF-8 character, so cutting
 * the bytes into lines and decoding only some of them gives the same lines as decoding first.
 */
import {memoryBytes, type ByteReader, type ByteSource} from '../bytes.js'
import {
  ByteList,
  findNewline,
  IntList,
  joinChosenLines,
  LateLines,
  readRanges,
} from './focus-lines.js'
import {
  KUBE_EXTERNAL_SERVICES,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_SERVICES,
  SVC_CHAIN_PREFIX,
} from '../../kube-proxy/iptables-names.js'
import {
  bytesAt,
  chainKindAt,
  ChainKind,
  chainNameEnd,
  chainNameOf,
  chainNameStart,
  hashStartOf,
  hasQuote,
  isWordEnd,
  longJump,
  MARK_BYTES,
  nameKey,
  SEP_BYTES,
  stringKey,
  SVC_BYTES,
  SVL_BYTES,
  targetStart,
} from './focus-bytes.js'
import {parseServiceComment} from './comments.js'
import {perServiceChain, PREFIX_OF_KIND, SEP_PREFIX} from './groups.js'
import {tokenizeLine} from './words.js'

export {readRanges}

export interface FocusedLines {
  /** The chosen lines in source order, each with its own line ending (the source's last line may have none). */
  text: string
  /** The 0-based source line index of each line of `text`. */
  lineIndex: Int32Array
  /** Lines in the whole source, counting the empty piece after a final newline, as a full read does. */
  lineCount: number
  /** Whether the source ends with a newline. */
  endsWithNewline: boolean
}

/** The dispatch chains that match NodePorts by port alone (ReadFocus.portNeedles). */
const NODE_PORT_CHAINS: ReadonlySet<string> = new Set([KUBE_NODEPORTS, KUBE_EXTERNAL_SERVICES])
/** Targets of kube-proxy's per-service filter rules (no endpoints, health check, firewall drop). */
const FILTER_SERVICE_TARGETS: ReadonlySet<string> = new Set(['REJECT', 'DROP', 'ACCEPT'])
/** The localhost copy of a NodePort rule sets a node setting (docs/kube-proxy-layouts.md §2.4). */
const LOCALHOST_V4 = '127.0.0.0/8'

/** The hash of a per-service chain name (the part after KUBE-SVC- etc.), or null: the builder's classification (./groups.ts). */
function perServiceHash(name: string): string | null {
  return perServiceChain(name)?.hash ?? null
}

/** The `-j`/`-g` target of one rule line, read without tokenising (kube-proxy's targets are plain words). */
function targetOf(line: string): string | null {
  const j = Math.max(line.lastIndexOf(' -j '), line.lastIndexOf(' -g '))
  if (j < 0) return null
  const end = line.indexOf(' ', j + 4)
  return line.slice(j + 4, end < 0 ? line.length : end).trimEnd()
}

/** The service port name in a rule's comment, or null. Only called for the few chosen rules. */
function commentSpn(line: string): string | null {
  const {words} = tokenizeLine(line)
  for (let i = 0; i < words.length - 1; i++) {
    if (!words[i]!.quoted && words[i]!.text === '--comment')
      return parseServiceComment(words[i + 1]!.text)?.spn ?? null
  }
  return null
}

/** The most runs a LateLines makes room for before it sees them (64 MB untouched address space). */
const MAX_EXPECTED_RUNS = 4 * 1024 * 1024

/** How much of the source is read at once. */
const PIECE_BYTES = 256 * 1024

/**
 * When the rules of the chosen per-service chains are more than this share of the source, the
 * dump is read in full instead: the chosen service is most of the dump (one service of 200,000
 * endpoints read focused is slower and larger than the full read), and picking its lines
 * out one run at a time costs more than reading them all. An ordinary service's are well under 1 %.
 */
const MAX_CHOSEN_SHARE = 1 / 8
/** ... and more than this many bytes: a small dump is read focused whatever the share (tests compare such reads with full ones). */
const MIN_CHOSEN_FALLBACK_BYTES = 1024 * 1024

/** Offsets are kept as 32-bit integers: a dump of 2 GiB or more is read in full instead. */
const MAX_FOCUS_BYTES = 0x7fffffff

/**
 * Chooses the lines to read for the service ports the needles name, and returns them as text.
 * Returns null, and the caller reads the whole dump, when the bytes are not a dump with table
 * headers (the `-S` reader infers tables from all the rules, so it must see them all), or when
 * the chosen services' chains are much of the dump (MAX_CHOSEN_SHARE).
 *
 * Pass 1 goes through the source once, in pieces, and sorts each line by what its chain is,
 * from the name's prefix alone: no string and no object per line. Lines that are read whatever
 * the needles are copied out at once; dispatch rules are kept as text (a few per service);
 * the rest (per-service jumps to SEP chains, SEP rules and declarations: most of the dump) are
 * kept as offsets and a number made from their chain's name, and the few whose name turns out
 * to be chosen are read again by offset.
 */
export function selectFocusedLines(
  source: ByteSource,
  needles: readonly string[],
  pieceBytes = PIECE_BYTES,
  portNeedles: readonly string[] = [],
): FocusedLines | null {
  const reader = source.open()
  try {
    return reader.size > MAX_FOCUS_BYTES
      ? null
      : selectFrom(reader, needles, Math.max(16, pieceBytes), portNeedles)
  } finally {
    reader.close()
  }
}

/** Pass 1's sorting of single lines, and what it keeps of them. */
class LineSorter {
  sawTableHeader = false
  /** The lines read whatever the needles: their bytes, line indexes, and where each starts in readNow. */
  readonly readNow = new ByteList()
  readonly readNowIdx = new IntList()
  readonly readNowAt = new IntList()
  /** Service rules of the dispatch chains, as text: chosen by needle once all are known. */
  readonly pending: Array<{
    idx: number
    line: string
    hash: string
    start: number
    end: number
    /** Whether its chain matches NodePorts by port alone (NODE_PORT_CHAINS). */
    byPort: boolean
  }> = []
  /** Per-service chain rules not read now (jumps to SEP chains, repeated evidence), and their declarations: keyed by the chain's hash. */
  readonly perServiceRules: LateLines
  readonly perServiceDeclarations: LateLines
  readonly sepRules: LateLines
  readonly sepDeclarations: LateLines
  /** The evidence signatures of the per-service rules read now, and the chains they are in (declared with them). */
  readonly evidence = new Set<string>()
  readonly evidenceChains = new Set<string>()
  /** The first KUBE-SVC / KUBE-SVL chain declared: that the dump has one is node evidence (kube-proxy's internal chains). */
  firstInternalChain: string | null = null
  /** SEP chains with a 2015-era `-j MARK` rule (the masquerade mark, node evidence): that rule is read, and so is their declaration. */
  readonly markSeps = new Set<string>()
  /**
   * Hashes of per-service chains with a rule that holds a needle: chosen like the hashes the
   * dispatch rules name. A chain whose name was mistyped or edited (fixtures: none; found by
   * mutating upstream-multipleservices-older) is reached from no dispatch rule, and the full read
   * reads it as a service port of its own, with warnings: the focused read must see it too.
   */
  readonly needleHashes = new Set<string>()
  private readonly needleBytes: Uint8Array[]
  /** nextAt's places, and the piece they are places in. */
  private readonly places: Int32Array
  private placesOf: Buffer | null = null
  private placesBase = -1
  /**
   * A KUBE-* line whose chain or target is spelled in a way the byte-level sorting does not
   * follow, but the parser does: a quote in a chain name (`-A KUB"E-SVC-X"`), a quoted target, or
   * `--jump` / `--goto` for -j / -g. iptables-save never writes these (hand-edited dumps do): the
   * whole dump is read then, so explain answers what the full read answers.
   */
  oddSpelling = false

  /** `size`: the source's, for how many runs to expect (at most one per line of 24 bytes or more). */
  constructor(size: number, needles: readonly string[]) {
    this.needleBytes = needles.filter((n) => n.length > 0).map((n) => Buffer.from(n, 'utf8'))
    this.places = new Int32Array(this.needleBytes.length)
    const expected = Math.min(Math.ceil(size / 24), MAX_EXPECTED_RUNS)
    this.perServiceRules = new LateLines(expected)
    this.perServiceDeclarations = new LateLines(expected)
    this.sepRules = new LateLines(expected)
    this.sepDeclarations = new LateLines(expected)
  }

  /**
   * Sorts line `idx` at piece[pos..nl) (`next`: after its newline, or nl for the last line),
   * which is at `base + pos` in the source.
   * Returns whether the line is read now.
   */
  sort(
    piece: Uint8Array,
    bytes: Buffer,
    base: number,
    idx: number,
    pos: number,
    nl: number,
    next: number,
  ): boolean {
    if (pos === nl) return true
    const first = piece[pos]
    if (first === 42 /* * */) this.sawTableHeader = true
    const nameStart = chainNameStart(piece, pos, nl)
    if (nameStart < 0) return true
    const nameEnd = chainNameEnd(piece, nameStart, nl)
    if (hasQuote(piece, nameStart, nameEnd)) this.oddSpelling = true
    const kind = chainKindAt(piece, nameStart, nameEnd)
    if (kind === ChainKind.Other) return true
    // Each kind of line has a method of its own: a dump comes in long runs of one kind, and V8
    // optimizes a function for the paths it has seen run, then drops that code at the first line
    // of a new kind (one function for all took up to 100 ms to compile again, each time).
    if (first === 58 /* : */)
      return this.sortDeclaration(piece, bytes, base, idx, pos, next, kind, nameStart, nameEnd)
    if (kind === ChainKind.Dispatch)
      return this.sortDispatchRule(bytes, base, idx, pos, nl, next, nameStart, nameEnd)
    if (kind === ChainKind.Sep)
      return this.sortSepRule(piece, bytes, base, idx, pos, nl, next, nameStart, nameEnd)
    return this.sortPerServiceRule(piece, bytes, base, idx, pos, nl, next, nameStart, nameEnd)
  }

  /** A chain's declaration (`:CHAIN ...`). */
  private sortDeclaration(
    piece: Uint8Array,
    bytes: Buffer,
    base: number,
    idx: number,
    pos: number,
    next: number,
    kind: ChainKind,
    nameStart: number,
    nameEnd: number,
  ): boolean {
    // A dispatch chain (KUBE-SERVICES, ...) is declared for every read: without it, its rules are read as undeclared.
    if (kind === ChainKind.Dispatch) return true
    if (kind === ChainKind.Sep) {
      this.sepDeclarations.add(idx, base + pos, base + next, nameKey(piece, nameStart, nameEnd))
      return false
    }
    if (
      this.firstInternalChain === null &&
      (bytesAt(piece, nameStart, SVC_BYTES) || bytesAt(piece, nameStart, SVL_BYTES))
    ) {
      this.firstInternalChain = bytes.toString('utf8', nameStart, nameEnd)
    }
    this.perServiceDeclarations.add(
      idx,
      base + pos,
      base + next,
      nameKey(piece, hashStartOf(piece, nameStart), nameEnd),
    )
    return false
  }

  /** A rule of a KUBE-SEP chain. */
  private sortSepRule(
    piece: Uint8Array,
    bytes: Buffer,
    base: number,
    idx: number,
    pos: number,
    nl: number,
    next: number,
    nameStart: number,
    nameEnd: number,
  ): boolean {
    const target = targetStart(piece, pos, nl)
    if (target >= 0 ? piece[target] === 34 /* " */ : longJump(bytes, pos, nl))
      this.oddSpelling = true
    if (
      target >= 0 &&
      bytesAt(piece, target, MARK_BYTES) &&
      isWordEnd(piece, target + MARK_BYTES.length, nl)
    ) {
      this.markSeps.add(bytes.toString('utf8', nameStart, nameEnd))
      return true
    }
    this.sepRules.add(idx, base + pos, base + next, nameKey(piece, nameStart, nameEnd))
    return false
  }

  /** A rule of a per-service chain (KUBE-SVC/SVL/EXT/FW/XLB). */
  private sortPerServiceRule(
    piece: Uint8Array,
    bytes: Buffer,
    base: number,
    idx: number,
    pos: number,
    nl: number,
    next: number,
    nameStart: number,
    nameEnd: number,
  ): boolean {
    const hashStart = hashStartOf(piece, nameStart)
    const target = targetStart(piece, pos, nl)
    if (target >= 0 ? piece[target] === 34 /* " */ : longJump(bytes, pos, nl))
      this.oddSpelling = true
    if (this.holdsNeedle(bytes, base, nameEnd, nl))
      this.needleHashes.add(bytes.toString('utf8', hashStart, nameEnd))
    // A per-service rule that does not jump to a SEP chain (a masquerade or short-circuit rule) is
    // node evidence: the first of each shape is read (see evidenceSignature); the rest, and the
    // jumps to SEP chains, only for a chosen service.
    if (
      target >= 0 &&
      !bytesAt(piece, target, SEP_BYTES) &&
      this.isNewEvidence(bytes, pos, nl, nameStart, nameEnd)
    )
      return true
    this.perServiceRules.add(idx, base + pos, base + next, nameKey(piece, hashStart, nameEnd))
    return false
  }

  /** Whether rule line pos..nl is the first with its evidenceSignature (noted then, with its chain). */
  private isNewEvidence(
    bytes: Buffer,
    pos: number,
    nl: number,
    nameStart: number,
    nameEnd: number,
  ): boolean {
    const signature = evidenceSignature(bytes.toString('utf8', pos, nl))
    if (this.evidence.has(signature)) return false
    this.evidence.add(signature)
    this.evidenceChains.add(bytes.toString('utf8', nameStart, nameEnd))
    return true
  }

  /** Whether bytes[from..to) (one line) holds one of the needles. */
  private holdsNeedle(bytes: Buffer, base: number, from: number, to: number): boolean {
    for (let k = 0; k < this.needleBytes.length; k++) {
      const needle = this.needleBytes[k]!
      if (this.nextAt(bytes, base, needle, k, from) + needle.length <= to) return true
    }
    return false
  }

  /**
   * Where `what` next occurs in the piece at or after `from` (the piece's length when nowhere):
   * searched for again only once the last place found is behind `from`, so each piece is searched
   * through once per pattern, natively, however many lines ask (a search per line would run on to
   * the piece's end each time). Slot k is needle k. The places are forgotten when
   * a new piece (another base or buffer) comes.
   */
  private nextAt(
    bytes: Buffer,
    base: number,
    what: Uint8Array,
    slot: number,
    from: number,
  ): number {
    if (bytes !== this.placesOf || base !== this.placesBase) {
      this.placesOf = bytes
      this.placesBase = base
      this.places.fill(-1)
    }
    let at = this.places[slot]!
    if (at < from) {
      at = bytes.indexOf(what, from)
      if (at < 0) at = bytes.length
      this.places[slot] = at
    }
    return at
  }

  private sortDispatchRule(
    bytes: Buffer,
    base: number,
    idx: number,
    pos: number,
    nl: number,
    next: number,
    nameStart: number,
    nameEnd: number,
  ): boolean {
    const line = bytes.toString('utf8', pos, nl)
    const target = targetOf(line)
    if (
      target === null
        ? line.includes(' --jump ') || line.includes(' --goto ')
        : target.startsWith('"')
    )
      this.oddSpelling = true
    // IPVS mode's dispatch rules match ipsets, not addresses: no needle picks them, so the whole dump is read.
    if (line.includes(' --match-set ')) this.oddSpelling = true
    const hash = target === null ? null : perServiceHash(target)
    const serviceRule = hash !== null || (target !== null && FILTER_SERVICE_TARGETS.has(target))
    if (!serviceRule || (hash !== null && line.includes(LOCALHOST_V4))) return true
    const byPort = NODE_PORT_CHAINS.has(bytes.toString('utf8', nameStart, nameEnd))
    this.pending.push({idx, line, hash: hash ?? '', start: base + pos, end: base + next, byPort})
    return false
  }
}

/** Pass 1: every line of the source, in pieces of `pieceBytes`, through the sorter. */
function sortLines(
  reader: ByteReader,
  sorter: LineSorter,
  pieceBytes: number,
): {lineCount: number; endsWithNewline: boolean} {
  let piece = new Uint8Array(pieceBytes)
  let bytes = Buffer.from(piece.buffer, 0, piece.length)
  const {readNow, readNowIdx, readNowAt} = sorter
  /** Source offset of piece[0], and how many bytes of the piece are filled. */
  let base = 0
  let filled = 0
  let lineCount = 0
  let lastByte = -1
  for (let eof = false; !eof;) {
    // Fill the piece after the part line carried over from the last one.
    while (filled < piece.length) {
      const n = reader.readInto(piece, filled, base + filled, piece.length - filled)
      if (n === 0) {
        eof = true
        break
      }
      filled += n
    }
    if (filled > 0) lastByte = piece[filled - 1]!
    let pos = 0
    /** Where the run of lines read now started in this piece, or -1. */
    let run = -1
    for (;;) {
      const nl = findNewline(bytes, pos, filled)
      if (nl === filled && !eof) break
      const next = nl === filled ? nl : nl + 1
      const idx = lineCount++
      if (sorter.sort(piece, bytes, base, idx, pos, nl, next)) {
        if (run < 0) run = pos
        readNowIdx.push(idx)
        readNowAt.push(readNow.length + pos - run)
      } else if (run >= 0) {
        readNow.append(piece, run, pos)
        run = -1
      }
      if (nl === filled) {
        // The last line: unterminated, or the empty piece after a final newline (not a line to read).
        if (
          pos === filled &&
          readNowIdx.length > 0 &&
          readNowIdx.data[readNowIdx.length - 1] === idx
        ) {
          readNowIdx.length--
          readNowAt.length--
        }
        pos = filled
        break
      }
      pos = next
    }
    if (run >= 0) readNow.append(piece, run, pos)
    if (eof) break
    if (pos === 0) {
      // One line longer than the piece: a bigger piece.
      const grown = new Uint8Array(piece.length * 2)
      grown.set(piece)
      piece = grown
      bytes = Buffer.from(piece.buffer, 0, piece.length)
    } else {
      piece.copyWithin(0, pos, filled)
      base += pos
      filled -= pos
    }
  }
  return {lineCount, endsWithNewline: lastByte === 10}
}

let primed = false
const PRIME_ROUNDS = 16

/**
 * Sorts a small dump with a line of every kind once per process before the real one. A dump
 * comes in long runs of one kind of line (all SEP declarations, then all SEP rules, ...); V8
 * optimizes the sorter for the kinds it has seen run and drops that code at the first line of a
 * kind it has not, so each new run started slow again (six times on a 10,000-service dump).
 * Having seen every kind first, the sorter is optimized once for them all.
 */
function primeSorter(): void {
  if (primed) return
  primed = true
  const h = 'PRIMEPRIMEPRIME0'
  const [svc, sep] = [`${SVC_CHAIN_PREFIX}${h}`, `${SEP_PREFIX}${h}`]
  const sample = [
    '*nat',
    `:${KUBE_SERVICES} - [0:0]`,
    `:${svc} - [0:0]`,
    `:${sep} - [0:0]`,
    `-A ${KUBE_SERVICES} -d 192.0.2.1/32 -p tcp -m comment --comment "ns/name:p cluster IP" -j ${svc}`,
    `-A ${sep} -s 192.0.2.2/32 -m comment --comment "ns/name:p" -j ${KUBE_MARK_MASQ}`,
    `-A ${sep} -p tcp -m comment --comment "ns/name:p" -j DNAT --to-destination 192.0.2.2:80`,
    `-A ${svc} ! -s 192.0.2.0/24 -d 192.0.2.1/32 -p tcp --dport 80 -j ${KUBE_MARK_MASQ}`,
    `-A ${svc} -j ${sep}`,
    'COMMIT',
    '',
  ].join('\n')
  const source = memoryBytes(Buffer.from(sample, 'utf8'))
  // V8 keeps no feedback for a function's first few calls: a few rounds, so every line counts.
  for (let round = 0; round < PRIME_ROUNDS; round++)
    sortLines(source.open(), new LineSorter(0, ['192.0.2.1']), 1024)
}

function selectFrom(
  reader: ByteReader,
  needles: readonly string[],
  pieceBytes: number,
  portNeedles: readonly string[],
): FocusedLines | null {
  primeSorter()
  const sorter = new LineSorter(reader.size, needles)
  const {lineCount, endsWithNewline} = sortLines(reader, sorter, pieceBytes)
  if (!sorter.sawTableHeader || sorter.oddSpelling) return null
  const {
    readNow,
    readNowIdx,
    readNowAt,
    pending,
    perServiceRules,
    perServiceDeclarations,
    sepRules,
    sepDeclarations,
    markSeps,
    evidenceChains,
    firstInternalChain,
  } = sorter

  // Dispatch rules: to a fixed point, since a chosen rule brings in its service's name and hash.
  const chosenHashes = new Set<string>()
  const allNeedles = [...needles]
  const knownNeedles = new Set(allNeedles)
  const late: Array<{idx: number; start: number; end: number}> = []
  const chosenPending = new Set<number>()
  for (let changed = true; changed;) {
    changed = false
    for (const p of pending) {
      if (chosenPending.has(p.idx)) continue
      if (!(
        chosenHashes.has(p.hash) ||
        allNeedles.some((n) => p.line.includes(n)) ||
        (p.byPort && portNeedles.some((n) => p.line.includes(n)))
      ))
        continue
      chosenPending.add(p.idx)
      late.push(p)
      changed = true
      if (p.hash !== '') chosenHashes.add(p.hash)
      const spn = commentSpn(p.line)
      if (spn !== null && !knownNeedles.has(spn)) {
        knownNeedles.add(spn)
        allNeedles.push(spn)
      }
    }
  }

  /** The lines of `list` whose run's name key is in `keys`, read again, each kept when `decide` says yes. */
  const pick = (
    list: LateLines,
    keys: ReadonlySet<number>,
    decide: (line: string) => boolean,
  ): void => {
    if (keys.size === 0) return
    const d = list.data
    const chosen: number[] = []
    for (let at = 0; at < list.length * 4; at += 4) if (keys.has(d[at + 3]!)) chosen.push(at)
    const starts = chosen.map((at) => d[at + 1]!)
    const ends = chosen.map((at) => d[at + 2]!)
    readRanges(reader, starts, ends, (i, run) => {
      const at = chosen[i]!
      const runStart = starts[i]!
      for (let idx = d[at]!, from = 0; from < run.length; idx++) {
        let to = run.indexOf(10, from)
        to = to < 0 ? run.length : to + 1
        if (decide(run.toString('utf8', from, to)))
          late.push({idx, start: runStart + from, end: runStart + to})
        from = to
      }
    })
  }
  for (const hash of sorter.needleHashes) chosenHashes.add(hash)
  const chosen = chosenBytes(perServiceRules, new Set([...chosenHashes].map(stringKey)))
  if (chosen > MIN_CHOSEN_FALLBACK_BYTES && chosen > reader.size * MAX_CHOSEN_SHARE) return null
  // Per-service chains of a chosen hash: their jumps to SEP chains, and so which SEP chains are chosen.
  const chosenSeps = new Set<string>()
  pick(perServiceRules, new Set([...chosenHashes].map(stringKey)), (line) => {
    const hash = perServiceHash(chainNameOf(line))
    if (hash === null || !chosenHashes.has(hash)) return false
    const target = targetOf(line)
    if (target?.startsWith(SEP_PREFIX)) chosenSeps.add(target)
    return true
  })
  // Per-service chains are declared when any of their rules is read, and one KUBE-SVC/SVL chain anyway.
  const declaredChains = new Set(evidenceChains)
  if (firstInternalChain !== null) declaredChains.add(firstInternalChain)
  const declaredHashes = new Set([...declaredChains].map((name) => perServiceHash(name) ?? ''))
  pick(
    perServiceDeclarations,
    new Set([...chosenHashes, ...declaredHashes].map(stringKey)),
    (line) => {
      const name = chainNameOf(line)
      return declaredChains.has(name) || chosenHashes.has(perServiceHash(name) ?? '')
    },
  )
  // The chosen SEP chains, whole, and their declarations (no invented undeclared chains).
  pick(sepRules, new Set([...chosenSeps].map(stringKey)), (line) =>
    chosenSeps.has(chainNameOf(line)),
  )
  const declared = new Set([...chosenSeps, ...markSeps])
  pick(sepDeclarations, new Set([...declared].map(stringKey)), (line) =>
    declared.has(chainNameOf(line)),
  )
  return joinChosenLines(
    reader,
    {bytes: readNow, idx: readNowIdx, at: readNowAt},
    late,
    lineCount,
    endsWithNewline,
  )
}

/** The bytes of the runs of `list` whose name key is in `keys` (an upper bound: a key may stand for other names too). */
function chosenBytes(list: LateLines, keys: ReadonlySet<number>): number {
  let total = 0
  const d = list.data
  if (keys.size > 0)
    for (let at = 0; at < list.length * 4; at += 4)
      if (keys.has(d[at + 3]!)) total += d[at + 2]! - d[at + 1]!
  return total
}

/**
 * What a per-service rule that does not jump to a SEP chain tells about the node, as a string:
 * the rule with its chain name cut to its prefix, its comment to the kind of comment, and its
 * destination and port left out. Two rules with one signature give the builder the same node
 * evidence (pod CIDR or interface of the local-traffic detector, masquerade-all, the mark), so a
 * focused read reads the first of each: on a 10,000-service dump, one rule instead of 10,000.
 */
export function evidenceSignature(line: string): string {
  const {words} = tokenizeLine(line)
  const out: string[] = []
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    out.push(w.quoted ? JSON.stringify(w.text) : w.text)
    if (w.quoted) continue
    const value = words[i + 1]
    if (value === undefined) break
    switch (w.text) {
      case '-A':
        out.push(perServicePrefix(value.text))
        break
      case '--comment':
        out.push(`(${parseServiceComment(value.text)?.kind ?? value.text})`)
        break
      case '-d':
      case '--destination':
      case '--dport':
      case '--destination-port':
        break
      default:
        continue
    }
    i++
  }
  return out.join(' ')
}

/** KUBE-SVC-ABC -> KUBE-SVC- (the name itself when it is not a per-service chain's). */
function perServicePrefix(name: string): string {
  const ps = perServiceChain(name)
  return ps === null ? name : PREFIX_OF_KIND[ps.kind]
}
