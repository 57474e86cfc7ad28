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
  lineStarts: number[]
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

function chainKind(name: string): ChainKind {
  if (DISPATCH_CHAINS.has(name)) return ChainKind.Dispatch
  if (name.startsWith(SEP_PREFIX)) return ChainKind.Sep
  for (const p of PER_SERVICE_PREFIXES) if (name.startsWith(p)) return ChainKind.PerService
  return ChainKind.Other
}

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

/**
 * Chooses the lines to read for the service ports the needles name. Returns null when the
 * text is not a dump with table headers (the `-S` reader infers tables from all the rules, so
 * it must see them all).
 */
export function selectFocusedLines(text: string, needles: readonly string[]): FocusedLines | null {
  const lineStarts: number[] = []
  /** Per line: its chain's id, or -1 for a line that names no chain. */
  const lineChain: number[] = []
  /** Per line: true for a `:CHAIN` declaration. */
  const declarations: number[] = []
  const chainIds = new Map<string, number>()
  const chainNames: string[] = []
  const kinds: ChainKind[] = []
  const dispatchLines: number[] = []
  let sawTableHeader = false

  const idOf = (name: string): number => {
    let id = chainIds.get(name)
    if (id === undefined) {
      id = chainNames.length
      chainIds.set(name, id)
      chainNames.push(name)
      kinds.push(chainKind(name))
    }
    return id
  }

  let pos = 0
  while (pos <= text.length) {
    let nl = text.indexOf('\n', pos)
    if (nl < 0) nl = text.length
    const idx = lineStarts.length
    lineStarts.push(pos)
    let chain = -1
    const c = text.charCodeAt(pos)
    if (c === 42 /* * */) sawTableHeader = true
    let nameStart = -1
    if (c === 58 /* : */) {
      nameStart = pos + 1
      declarations.push(idx)
    } else {
      // `-A CHAIN ...`, or `[pkts:bytes] -A CHAIN ...` from `iptables-save -c`.
      let at = pos
      if (c === 91 /* [ */) {
        const close = text.indexOf('] ', pos)
        at = close >= 0 && close < nl ? close + 2 : nl
      }
      if (text.startsWith('-A ', at)) nameStart = at + 3
    }
    if (nameStart >= 0) {
      let end = text.indexOf(' ', nameStart)
      if (end < 0 || end > nl) end = nl
      if (end > nameStart && text.charCodeAt(end - 1) === 13 /* \r */) end--
      chain = idOf(text.slice(nameStart, end))
      if (c !== 58 && kinds[chain] === ChainKind.Dispatch) dispatchLines.push(idx)
    }
    lineChain.push(chain)
    pos = nl + 1
  }
  if (!sawTableHeader) return null

  const lineText = (idx: number): string => {
    const start = lineStarts[idx]!
    const next = idx + 1 < lineStarts.length ? lineStarts[idx + 1]! - 1 : text.length
    return text.slice(start, next)
  }
  const include = new Uint8Array(lineStarts.length)
  const chosenHashes = new Set<string>()
  const allNeedles = [...needles]
  const knownNeedles = new Set(allNeedles)

  // Dispatch rules: to a fixed point, since a chosen rule brings in its service's name and hash.
  const pending: Array<{idx: number; line: string; hash: string}> = []
  for (const idx of dispatchLines) {
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

  // Per-service and SEP chains.
  const chosenChain = new Uint8Array(chainNames.length)
  for (let id = 0; id < chainNames.length; id++) {
    if (kinds[id] !== ChainKind.PerService) continue
    const hash = perServiceHash(chainNames[id]!)
    if (hash !== null && chosenHashes.has(hash)) chosenChain[id] = 1
  }
  /** SEP chains with a line read: their declaration is read too (no invented undeclared chains). */
  const sepRead = new Uint8Array(chainNames.length)
  for (let idx = 0; idx < lineChain.length; idx++) {
    const id = lineChain[idx]!
    if (id < 0) {
      include[idx] = 1
      continue
    }
    const kind = kinds[id]!
    if (kind === ChainKind.Other) include[idx] = 1
    if (kind !== ChainKind.PerService || text.charCodeAt(lineStarts[idx]!) === 58 /* : */) continue
    const target = targetOf(lineText(idx))
    const jumpsToSep = target !== null && target.startsWith(SEP_PREFIX)
    if (chosenChain[id] === 1) {
      include[idx] = 1
      if (jumpsToSep) {
        const sep = chainIds.get(target)
        if (sep !== undefined) chosenChain[sep] = 1
      }
    } else if (!jumpsToSep) {
      include[idx] = 1
    }
  }
  // SEP rules, once the chosen SEP chains are known (they may come before the chains that jump to them).
  for (let idx = 0; idx < lineChain.length; idx++) {
    const id = lineChain[idx]!
    if (id < 0 || kinds[id] !== ChainKind.Sep) continue
    if (text.charCodeAt(lineStarts[idx]!) === 58 /* : */) continue
    if (chosenChain[id] === 1 || targetOf(lineText(idx)) === 'MARK') {
      include[idx] = 1
      sepRead[id] = 1
    }
  }
  for (const idx of declarations) {
    const id = lineChain[idx]!
    if (id < 0) continue
    const kind = kinds[id]!
    // Every per-service chain is declared, as in a full read: that a KUBE-SVC chain exists is node evidence.
    if (kind !== ChainKind.Sep || chosenChain[id] === 1 || sepRead[id] === 1) include[idx] = 1
  }
  return {lineStarts, include}
}
