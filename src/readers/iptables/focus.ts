/**
 * The focused read behind `kp explain NAME` (ReadOptions.focus): which lines of an
 * iptables-save dump the parser needs to read one service completely, chosen without
 * tokenising the dump.
 *
 * One cheap pass indexes every line by the chain its `-A CHAIN` / `:CHAIN` names. Then:
 * * dispatch chains (KUBE-SERVICES, KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES,
 *   KUBE-PROXY-FIREWALL, nat and filter): a rule into a per-service chain, or a filter
 *   REJECT/DROP/ACCEPT service rule, is read only when its text holds a needle, or when it
 *   jumps into a service already chosen. The service port names in the comments of the chosen
 *   rules become needles too, so a rule naming the service only by name (a health check) comes
 *   in. Every other dispatch rule (the `-j KUBE-NODEPORTS` last rule, old masquerade rules,
 *   the localhost NodePort copies) is node evidence and is read;
 * * per-service chains (KUBE-SVC/SVL/EXT/FW/XLB-<hash>) of a chosen hash are read whole, and
 *   the KUBE-SEP chains they jump to with them (large-cluster SEP rules have no comment, so
 *   they are reached by jump, not by needle);
 * * of the other per-service chains only the rules that do not jump to a KUBE-SEP chain are
 *   read (masquerade and short-circuit rules: where the node's pod CIDR and local-traffic
 *   detector show), and of the other SEP chains only a 2015-era `-j MARK` (masquerade mark);
 *   so the node settings come out as in a full read;
 * * every other line (headers, COMMIT, fixed chains, foreign chains) is read.
 * Choosing more than needed is harmless (a needle `ns/a` also picks `ns/ab`): every service it
 * picks is read whole. Groups picked only for node evidence have no frontend and are dropped.
 */
import {tokenizeLine} from './tokenize.js'
import {parseServiceComment} from './comments.js'

export interface FocusedLines {
  /** Offset of each line's first character in the text (line i is line number i + 1). */
  lineStarts: Int32Array
  /** 1 for each line the parser reads. */
  include: Uint8Array
}

const DISPATCH_CHAINS: ReadonlySet<string> = new Set(['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL'])
const PER_SERVICE_PREFIXES = ['KUBE-SVC-', 'KUBE-SVL-', 'KUBE-EXT-', 'KUBE-FW-', 'KUBE-XLB-']
const SEP_PREFIX = 'KUBE-SEP-'
/** Targets of kube-proxy's per-service filter rules (no endpoints, health check, firewall drop). */
const FILTER_SERVICE_TARGETS: ReadonlySet<string> = new Set(['REJECT', 'DROP', 'ACCEPT'])
/** The localhost copy of a NodePort rule sets a node setting (spec §2.4). */
const LOCALHOST_V4 = '127.0.0.0/8'

/** What a chain is to the selection. */
type ChainKind = 0 | 1 | 2 | 3
const ChainKind = {Other: 0, Dispatch: 1, PerService: 2, Sep: 3} as const

/** The hash of a per-service chain name (the part after KUBE-SVC- etc.), or null. */
function perServiceHash(name: string): string | null {
  for (const p of PER_SERVICE_PREFIXES) if (name.startsWith(p)) return name.slice(p.length)
  return null
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
    if (!words[i]!.quoted && words[i]!.text === '--comment') return parseServiceComment(words[i + 1]!.text)?.spn ?? null
  }
  return null
}

/** Where the chain name of line `pos..nl` starts (`:CHAIN`, `-A CHAIN`, `[p:b] -A CHAIN`), or -1. */
function chainNameStart(text: string, pos: number, nl: number): number {
  const c = text.charCodeAt(pos)
  if (c === 58 /* : */) return pos + 1
  let at = pos
  if (c === 91 /* [ */) {
    // `[pkts:bytes] -A CHAIN ...` from `iptables-save -c`.
    const close = text.indexOf('] ', pos)
    if (close < 0 || close >= nl) return -1
    at = close + 2
  }
  return text.startsWith('-A ', at) ? at + 3 : -1
}

/** Where the chain name starting at `start` ends (a blank, a CR, or the end of the line). */
function chainNameEnd(text: string, start: number, nl: number): number {
  let end = text.indexOf(' ', start)
  if (end < 0 || end > nl) end = nl
  if (end > start && text.charCodeAt(end - 1) === 13 /* \r */) end--
  return end
}

/** The kind of the chain named at `start..end`, told by its prefix without cutting the name out. */
function chainKindAt(text: string, start: number, end: number): ChainKind {
  if (!text.startsWith('KUBE-', start)) return ChainKind.Other
  if (text.startsWith(SEP_PREFIX, start)) return ChainKind.Sep
  for (const p of PER_SERVICE_PREFIXES) if (text.startsWith(p, start)) return ChainKind.PerService
  for (const name of DISPATCH_CHAINS) if (end - start === name.length && text.startsWith(name, start)) return ChainKind.Dispatch
  return ChainKind.Other
}

/** A list of non-negative integers that grows without boxing: one per line of a 430,000-line dump. */
class IntList {
  data: Int32Array
  length = 0
  constructor(capacity: number) {
    this.data = new Int32Array(Math.max(16, capacity))
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    this.data[this.length++] = value
  }
}

/**
 * Chooses the lines to read for the service ports the needles name. Returns null when the
 * text is not a dump with table headers (the `-S` reader infers tables from all the rules, so
 * it must see them all).
 *
 * One walk sorts the lines by what their chain is, from the name's prefix alone: no map
 * lookup, no string cut out and no object made per line (this pass is most of what
 * `kp explain` costs on a 430,000-line dump). Names and targets are cut out only for the few
 * lines that decide something.
 */
export function selectFocusedLines(text: string, needles: readonly string[]): FocusedLines | null {
  const expectedLines = (text.length >> 6) + 16
  const lineStarts = new IntList(expectedLines)
  const dispatchLines = new IntList(1024)
  /** Rule lines of per-service and SEP chains, with where their chain name starts. */
  const perServiceLines = new IntList(1024)
  const perServiceNames = new IntList(1024)
  const sepLines = new IntList(1024)
  const sepNames = new IntList(1024)
  /** Declarations of per-service and SEP chains (the other declarations are read). */
  const serviceDeclarations = new IntList(1024)
  let sawTableHeader = false

  let pos = 0
  while (pos <= text.length) {
    let nl = text.indexOf('\n', pos)
    if (nl < 0) nl = text.length
    const idx = lineStarts.length
    lineStarts.push(pos)
    const first = text.charCodeAt(pos)
    if (first === 42 /* * */) sawTableHeader = true
    const nameStart = chainNameStart(text, pos, nl)
    if (nameStart >= 0) {
      const kind = chainKindAt(text, nameStart, chainNameEnd(text, nameStart, nl))
      const declaration = first === 58 /* : */
      // A line in one of these lists is left out unless a later step picks it; every other line is read.
      if (kind !== ChainKind.Other && !(declaration && kind === ChainKind.Dispatch)) {
        if (declaration) serviceDeclarations.push(idx)
        else if (kind === ChainKind.Dispatch) dispatchLines.push(idx)
        else if (kind === ChainKind.PerService) {
          perServiceLines.push(idx)
          perServiceNames.push(nameStart)
        } else {
          sepLines.push(idx)
          sepNames.push(nameStart)
        }
      }
    }
    pos = nl + 1
  }
  if (!sawTableHeader) return null
  const lineCount = lineStarts.length
  const starts = lineStarts.data
  /** Where line idx ends (its newline, or the end of the text). */
  const lineEnd = (idx: number): number => (idx + 1 < lineCount ? starts[idx + 1]! - 1 : text.length)
  const lineText = (idx: number): string => text.slice(starts[idx]!, lineEnd(idx))
  const nameAt = (idx: number, nameStart: number): string => text.slice(nameStart, chainNameEnd(text, nameStart, lineEnd(idx)))
  /** Where the `-j`/`-g` target of rule line idx starts, or -1: a search back from its end, within the line, making no string. */
  const targetStart = (idx: number): number => {
    const start = starts[idx]!
    for (let i = lineEnd(idx) - 4; i >= start; i--) {
      if (text.charCodeAt(i) !== 32 || text.charCodeAt(i + 1) !== 45 /* - */ || text.charCodeAt(i + 3) !== 32) continue
      const c = text.charCodeAt(i + 2)
      if (c === 106 /* j */ || c === 103 /* g */) return i + 4
    }
    return -1
  }
  /** The target of rule line idx is `name`, or starts with it when `prefix`. */
  const targetIs = (idx: number, name: string, prefix: boolean): boolean => {
    const at = targetStart(idx)
    if (at < 0 || !text.startsWith(name, at)) return false
    if (prefix) return true
    const after = at + name.length
    const c = after < lineEnd(idx) ? text.charCodeAt(after) : 32
    return c === 32 || c === 13 /* \r */
  }

  const include = new Uint8Array(lineCount).fill(1)
  for (const list of [dispatchLines, perServiceLines, sepLines, serviceDeclarations]) {
    for (let k = 0; k < list.length; k++) include[list.data[k]!] = 0
  }
  const chosenHashes = new Set<string>()
  const allNeedles = [...needles]
  const knownNeedles = new Set(allNeedles)

  // Dispatch rules: to a fixed point, since a chosen rule brings in its service's name and hash.
  const pending: Array<{idx: number; line: string; hash: string}> = []
  for (let k = 0; k < dispatchLines.length; k++) {
    const idx = dispatchLines.data[k]!
    const line = lineText(idx)
    const target = targetOf(line)
    const hash = target === null ? null : perServiceHash(target)
    const serviceRule = hash !== null || (target !== null && FILTER_SERVICE_TARGETS.has(target))
    if (!serviceRule || (hash !== null && line.includes(LOCALHOST_V4))) include[idx] = 1
    else pending.push({idx, line, hash: hash ?? ''})
  }
  for (let changed = true; changed; ) {
    changed = false
    for (const p of pending) {
      if (include[p.idx] === 1) continue
      if (!(chosenHashes.has(p.hash) || allNeedles.some((n) => p.line.includes(n)))) continue
      include[p.idx] = 1
      changed = true
      if (p.hash !== '') chosenHashes.add(p.hash)
      const spn = commentSpn(p.line)
      if (spn !== null && !knownNeedles.has(spn)) {
        knownNeedles.add(spn)
        allNeedles.push(spn)
      }
    }
  }

  // Per-service chains: a chosen one whole (and the SEP chains it jumps to), the others without their jumps to SEP chains.
  const chosenSeps = new Set<string>()
  for (let k = 0; k < perServiceLines.length; k++) {
    const idx = perServiceLines.data[k]!
    if (!targetIs(idx, SEP_PREFIX, true)) {
      include[idx] = 1
      continue
    }
    const hash = chosenHashes.size > 0 ? perServiceHash(nameAt(idx, perServiceNames.data[k]!)) : null
    if (hash !== null && chosenHashes.has(hash)) {
      include[idx] = 1
      const target = targetOf(lineText(idx))
      if (target !== null) chosenSeps.add(target)
    }
  }
  // SEP rules, once the chosen SEP chains are known (they may come before the chains that jump to them).
  /** SEP chains with a line read: their declaration is read too (no invented undeclared chains). */
  const sepRead = new Set<string>()
  // A 2015-era `-j MARK` (the masquerade mark) is node evidence in any SEP chain; newer dumps have none, so one search spares the per-line check.
  const anyMark = text.includes(' -j MARK')
  for (let k = 0; k < sepLines.length; k++) {
    const idx = sepLines.data[k]!
    const mark = anyMark && targetIs(idx, 'MARK', false)
    if (!mark && chosenSeps.size === 0) continue
    const name = nameAt(idx, sepNames.data[k]!)
    if (mark || chosenSeps.has(name)) {
      include[idx] = 1
      sepRead.add(name)
    }
  }
  for (let k = 0; k < serviceDeclarations.length; k++) {
    const idx = serviceDeclarations.data[k]!
    // Every per-service chain is declared, as in a full read: that a KUBE-SVC chain exists is node evidence.
    const start = starts[idx]!
    if (!text.startsWith(SEP_PREFIX, start + 1)) include[idx] = 1
    else if (chosenSeps.size > 0 || sepRead.size > 0) {
      const name = nameAt(idx, start + 1)
      if (chosenSeps.has(name) || sepRead.has(name)) include[idx] = 1
    }
  }
  return {lineStarts: starts.subarray(0, lineCount), include}
}
