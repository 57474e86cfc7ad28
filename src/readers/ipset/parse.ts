/**
 * Reads `ipset save` (`create` / `add` lines; `ipset restore` input also has `flush`) and `ipset list` (Name/Type/Header/.../Members
 * blocks), ipset(8) 6.x–7.x, as in docs/ipvs-layouts.md b.4. Every set is kept; the
 * members of the types kube-proxy uses are split into address, protocol and port:
 *
 *   hash:ip            10.96.0.1
 *   hash:ip,port       10.96.0.10,udp:53           (IPv6 bare: fd00:10:96::a,udp:53)
 *   hash:ip,port,ip    10.244.1.5,tcp:8080,10.244.1.5
 *   hash:ip,port,net   10.0.100.10,tcp:443,192.0.2.0/24
 *   bitmap:port        30080
 *
 * Member order is hash order (arbitrary), so nothing here depends on it.
 */
import {diag} from '../../core/state.js'
import type {Diagnostic, Family, Protocol, SourceRef} from '../../model/types.js'
import {parseIp, parsePort} from '../../core/address.js'
import {parseProtocol} from '../ipvsadm/protocol.js'
import type {ParsedSource, SourceText} from '../types.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

export interface IpsetMember {
  /** The element as written (options such as `timeout 300` cut off). */
  text: string
  ip: string | null
  protocol: Protocol | null
  port: number | null
  /** The third part of hash:ip,port,ip (an address) or hash:ip,port,net (a CIDR). */
  third: string | null
  line: number
}

export interface IpsetSet {
  name: string
  type: string
  /** From `family inet|inet6`; null for bitmap sets, which have none. */
  family: Family | null
  /** The create options / `Header:` as written. */
  header: string
  /** `References:` of `ipset list` (iptables rules using the set); null in `ipset save`. */
  references: number | null
  members: IpsetMember[]
  line: number
}

export interface IpsetDump {
  layout: 'save' | 'list'
  sets: IpsetSet[]
}

const WHITESPACE = /\s+/
const UINT = /^\d+$/
const MAX_LINE = 64 * 1024
const FAMILY_OPTION = /(?:^|\s)family (inet6?)(?:\s|$)/
/** Set types whose members this reader splits; others are kept as text. */
const KNOWN_TYPES = new Set([
  'hash:ip',
  'hash:ip,port',
  'hash:ip,port,ip',
  'hash:ip,port,net',
  'bitmap:port',
])

function familyOf(header: string): Family | null {
  const m = FAMILY_OPTION.exec(header)
  if (!m) return null
  return m[1] === 'inet6' ? 'IPv6' : 'IPv4'
}

/** Parses one `ipset save` or `ipset list` output. Never throws: problems become IPSET_* diagnostics. */
export function parseIpset(
  text: string,
  path: string,
): {dump: IpsetDump; diagnostics: Diagnostic[]} {
  const diagnostics: Diagnostic[] = []
  const dump: IpsetDump = {layout: 'save', sets: []}
  const byName = new Map<string, IpsetSet>()
  /** The sets `add` lines filled since the last `flush` of every set (ipset restore input). */
  const filledSince = new Set<IpsetSet>()
  const at = (line: number): SourceRef => ({path, line})
  const warn = (code: DiagnosticCode, message: string, line: number) =>
    diagnostics.push(diag('warning', code, message, at(line)))

  // State of the `ipset list` block being read.
  let block: IpsetSet | null = null
  let inMembers = false
  let declaredEntries: {count: number; line: number} | null = null
  const closeBlock = () => {
    if (block && declaredEntries && declaredEntries.count !== block.members.length) {
      warn(
        'IPSET_ENTRY_COUNT',
        `set ${block.name} says "Number of entries: ${declaredEntries.count}" but lists ${block.members.length} members; the input may be cut`,
        declaredEntries.line,
      )
    }
    block = null
    inMembers = false
    declaredEntries = null
  }
  const cut = (what: string, line: number) =>
    diagnostics.push(
      diag(
        'error',
        'IPSET_TRUNCATED',
        `the dump is cut off: it ${what}; sets and members after it are missing`,
        at(line),
      ),
    )
  /**
   * `ipset list` prints every block whole, so a last block short of its `Members:` line or of its
   * `Number of entries` is where the input was cut, even at a line boundary.
   */
  const closeLastBlock = () => {
    if (block && cutLine === 0) {
      if (!inMembers)
        cut(`stops in the header of set ${block.name}, before its Members: line`, block.line)
      else if (declaredEntries && declaredEntries.count > block.members.length)
        cut(
          `stops in the members of set ${block.name} (${block.members.length} of the ${declaredEntries.count} its "Number of entries" says)`,
          declaredEntries.line,
        )
    }
    // A cut block's short count is the cut already reported, not a second problem.
    if (cutLine !== 0 || diagnostics.some((d) => d.code === 'IPSET_TRUNCATED'))
      declaredEntries = null
    closeBlock()
  }
  const addSet = (set: IpsetSet): IpsetSet => {
    const seen = byName.get(set.name)
    if (seen) {
      warn(
        'IPSET_DUPLICATE_SET',
        `set ${set.name} appears again (first on line ${seen.line}); members are merged`,
        set.line,
      )
      return seen
    }
    byName.set(set.name, set)
    dump.sets.push(set)
    return set
  }

  const lines = text.split(/\r?\n/)
  // ipset ends every line with a newline: a last line without one was cut in the middle.
  const cutLine = lines[lines.length - 1]!.trim() === '' ? 0 : lines.length
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1
    const raw = lines[i]!
    if (lineNo === cutLine) {
      // Any word of it may be cut (`10.96.0.10,tcp:9153` → `10.96.0.10,tcp:91`): not read.
      cut(
        `ends in the middle of line ${lineNo} (no newline after it); that line was not read`,
        lineNo,
      )
      break
    }
    if (raw.length > MAX_LINE) {
      warn(
        'IPSET_LINE_TOO_LONG',
        `line of ${raw.length} characters is not ipset output; skipped`,
        lineNo,
      )
      continue
    }
    const line = raw.trim()
    if (line === '') {
      // The empty string after the final newline ends the input, not a block: closeLastBlock does.
      if (i < lines.length - 1) closeBlock()
      continue
    }
    if (line.startsWith('#')) continue

    if (line.startsWith('Name: ')) {
      closeBlock()
      dump.layout = 'list'
      block = addSet({
        name: line.slice(6).trim(),
        type: '',
        family: null,
        header: '',
        references: null,
        members: [],
        line: lineNo,
      })
      continue
    }
    if (block && !inMembers) {
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + 1).trim()
      switch (field) {
        case 'Type':
          block.type = value
          continue
        case 'Header':
          block.header = value
          block.family = familyOf(value)
          continue
        case 'References':
          block.references = UINT.test(value) ? Number(value) : null
          continue
        case 'Number of entries':
          declaredEntries = {count: UINT.test(value) ? Number(value) : -1, line: lineNo}
          continue
        case 'Members':
          inMembers = true
          continue
        case 'Revision':
        case 'Size in memory':
          continue
      }
      warn('IPSET_UNKNOWN_LINE', `unknown field in the block of set ${block.name}; skipped`, lineNo)
      continue
    }
    if (block && inMembers) {
      addMember(block, line, lineNo)
      continue
    }

    const tokens = line.split(WHITESPACE)
    if (tokens[0] === 'create' && tokens.length >= 3) {
      addSet({
        name: tokens[1]!,
        type: tokens[2]!,
        family: null,
        header: tokens.slice(3).join(' '),
        references: null,
        members: [],
        line: lineNo,
      }).family = familyOf(tokens.slice(3).join(' '))
      continue
    }
    if (tokens[0] === 'add' && tokens.length >= 3) {
      const set = byName.get(tokens[1]!)
      if (!set) {
        warn(
          'IPSET_UNKNOWN_SET',
          `member of set ${tokens[1]}, which no create line declared; skipped`,
          lineNo,
        )
        continue
      }
      addMember(set, tokens.slice(2).join(' '), lineNo)
      filledSince.add(set)
      continue
    }
    if (tokens[0] === 'flush' && tokens.length <= 2) {
      // `ipset restore` input (what kp migrate --to ipvs writes): the set is emptied, so only the
      // members added after this line are in it.
      const named = tokens[1]
      if (named === undefined) {
        // Only the sets filled since the last such flush have members to drop (no pass over every set per line).
        for (const set of filledSince) set.members = []
        filledSince.clear()
      } else {
        const set = byName.get(named)
        if (set) set.members = []
        else
          warn(
            'IPSET_UNKNOWN_SET',
            `flush of set ${named}, which no create line declared; skipped`,
            lineNo,
          )
      }
      continue
    }
    warn('IPSET_UNKNOWN_LINE', 'not ipset save / ipset list output; skipped', lineNo)
  }
  closeLastBlock()
  if (dump.sets.length === 0)
    diagnostics.push(diag('warning', 'IPSET_NO_SETS', 'no ipset sets in this input', at(1)))
  return {dump, diagnostics}

  function addMember(set: IpsetSet, text: string, lineNo: number): void {
    // `10.96.0.10,udp:53 timeout 300 packets 0 bytes 0`: the element is the first word.
    const element = text.split(WHITESPACE, 1)[0]!
    const member: IpsetMember = {
      text: element,
      ip: null,
      protocol: null,
      port: null,
      third: null,
      line: lineNo,
    }
    set.members.push(member)
    if (!KNOWN_TYPES.has(set.type)) return
    const bad = (why: string): void =>
      void warn(
        'IPSET_BAD_MEMBER',
        `member "${element}" of ${set.name} (${set.type}): ${why}`,
        lineNo,
      )
    const parts = element.split(',')
    if (set.type === 'bitmap:port') {
      member.port = parsePort(element)
      // kube-proxy never writes a range (b.4); a range here is a hand edit or another tool.
      if (member.port === null) bad('not a port')
      return
    }
    const wanted = set.type.split(',').length
    if (parts.length !== wanted) return bad(`expected ${wanted} comma-separated parts`)
    const ip = parseIp(parts[0]!)
    if (!ip) return bad('not an IP address')
    if (set.family && ip.family !== set.family)
      return bad(`an ${ip.family} address in an ${set.family} set`)
    member.ip = ip.ip
    if (wanted === 1) return
    // `udp:53`; ipset(8): a port without a protocol is TCP.
    const protoPort = parts[1]!
    const colon = protoPort.indexOf(':')
    member.protocol = colon < 0 ? 'TCP' : parseProtocol(protoPort.slice(0, colon))
    member.port = parsePort(colon < 0 ? protoPort : protoPort.slice(colon + 1))
    if (member.protocol === null || member.port === null)
      return bad('not PROTOCOL:PORT with tcp, udp or sctp')
    if (wanted === 3) {
      const third = parts[2]!
      if (set.type === 'hash:ip,port,net') {
        const slash = third.indexOf('/')
        const net = parseIp(slash < 0 ? third : third.slice(0, slash))
        const max = net?.family === 'IPv6' ? 128 : 32
        const lenText = slash < 0 ? String(max) : third.slice(slash + 1)
        const len = Number(lenText)
        if (!net || !UINT.test(lenText) || len > max) return bad('not a CIDR')
        member.third = `${net.ip}/${len}`
      } else {
        const second = parseIp(third)
        if (!second) return bad('third part is not an IP address')
        member.third = second.ip
      }
    }
  }
}

/** The registry's entry point: one source → its sets and diagnostics. */
export function parse(src: SourceText): ParsedSource<IpsetDump> {
  const {dump, diagnostics} = parseIpset(src.text, src.path)
  return {
    format: 'ipset',
    source: {path: src.path, format: 'ipset', tool: src.tool ?? null},
    data: dump,
    diagnostics,
  }
}
