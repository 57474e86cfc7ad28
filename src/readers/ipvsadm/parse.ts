/**
 * Reads what `ipvsadm` prints about virtual servers (ipvsadm(8), version 1.31):
 *
 * * the list format, `ipvsadm -Ln`, and its variants `--stats`, `--rate`, `--persistent-conn`,
 *   `--thresholds`, and single-service listings (`-Ln -t VIP:PORT`, no version line);
 * * the rule format, `ipvsadm -Sn` / `ipvsadm-save -n` (`-A` service and `-a` destination lines);
 * * the kernel's `/proc/net/ip_vs`, the list layout with hex addresses (./proc-hex.ts, b.6).
 *
 * Layouts follow docs/ipvs-layouts.md b.1–b.3. Lines are split on whitespace, never
 * on column offsets: IPv6 names longer than the 28-character column shift every column after them
 * (kube-vip issue 784; fixtures/ipvsadm/variants), and pasted copies lose the trailing padding.
 * Output without `-n` (resolved names, cut ports; fixtures/ipvsadm/non-numeric) is refused with
 * one error that says to use `-n`.
 */
import {diag} from '../../core/state.js'
import type {Diagnostic, Family, Protocol, SourceRef} from '../../model/types.js'
import type {ParsedSource, SourceText} from '../types.js'
import {joinHostPort, parseHostPort, parseIp} from '../../core/address.js'
import {parseProtocol} from './protocol.js'
import {readCutLine} from './truncation.js'
import {
  isProcListing,
  parseProcHostPort,
  parseProcMark,
  readProcServiceOptions,
} from './proc-hex.js'
import {isRedacted} from '../../core/redaction.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

/** Which `ipvsadm -L` variant printed the listing; 'save' for `-S`. */
export type IpvsadmLayout =
  'list' | 'stats' | 'rate' | 'persistent-conn' | 'thresholds' | 'save' | 'proc'

export interface IpvsRealServer {
  ip: string
  port: number
  /** 'Masq', 'Local' (gatewaying), 'Tunnel', 'Route'; null when the layout does not show it. */
  forward: string | null
  /** null when the layout does not show it (`--stats`, `--rate`, `--thresholds`). */
  weight: number | null
  activeConn: number | null
  inactConn: number | null
  line: number
  /**
   * For an address the input redacted (`x.x.x.x:8080`): its place among the virtual server's
   * redacted real servers, 1, 2, ...; it keeps two of them with one placeholder apart.
   */
  redacted?: number
}

export interface IpvsVirtualServer {
  /** `TCP 10.96.0.1 443`, `FWM 100 IPv4`: unique per listing, equal across listings of one node. */
  key: string
  /** null for a firewall-mark service. */
  protocol: Protocol | null
  family: Family
  /** null for a firewall-mark service. */
  ip: string | null
  port: number | null
  fwmark: number | null
  /** null when the layout does not show it (`--stats`, `--rate`). */
  scheduler: string | null
  /** Scheduler flags as ipvsadm names them: `mh-port`, `sh-fallback`, `flag-1`, ... */
  schedulerFlags: string[]
  /** `persistent N`; null when not persistent, when the layout does not show it (see `showsConfig`), or in /proc/net/ip_vs (jiffies). */
  persistentTimeout: number | null
  /** Persistent (session affinity), whether or not the timeout in seconds is known. */
  persistent: boolean
  /** `mask M`: printed only when not the full host mask, which kube-proxy always uses. */
  persistenceMask: string | null
  persistenceEngine: string | null
  onePacket: boolean
  /** false for `--stats` / `--rate`, which show neither scheduler, flags nor persistence. */
  showsConfig: boolean
  realServers: IpvsRealServer[]
  line: number
  /** The line where the input was cut inside this virtual server's rows: it may have more real servers. */
  cutAt?: number
}

export interface IpvsadmListing {
  layout: IpvsadmLayout
  /** From `IP Virtual Server version 1.2.1 (size=4096)`; absent from single-service listings and `-S`. */
  kernelVersion: string | null
  connectionTableSize: number | null
  virtualServers: IpvsVirtualServer[]
}

// Compiled once for the whole module: readers never build a regex per line.
const WHITESPACE = /\s+/
const VERSION_LINE = /^IP Virtual Server version (\S+) \(size=(\d+)\)/
const SCALED_NUMBER = /^\d+[KMGT]?$/
const UINT = /^\d+$/
/** Longest line worth tokenising; a longer one is garbage and gets a diagnostic instead. */
const MAX_LINE = 64 * 1024

const FORWARD_FLAG = new Map<string, string>([
  ['-m', 'Masq'],
  ['--masquerading', 'Masq'],
  ['-g', 'Route'],
  ['--gatewaying', 'Route'],
  ['-i', 'Tunnel'],
  ['--ipip', 'Tunnel'],
])

/** Marks, timeouts, weights and connection counts are 32-bit unsigned in the kernel: ipvsadm never prints more. */
const UINT32_MAX = 0xffff_ffff

/** A 32-bit unsigned number as ipvsadm prints it; null for anything else (99999999999999999999 included). */
function uint(text: string | undefined): number | null {
  if (text === undefined || !UINT.test(text)) return null
  const n = Number(text)
  return n <= UINT32_MAX ? n : null
}

interface NonNumeric {
  first: SourceRef
  count: number
}

/** Parses one `ipvsadm -Ln` / `-Sn` output. Never throws: problems become IPVS_* diagnostics. */
export function parseIpvsadm(
  text: string,
  path: string,
): {listing: IpvsadmListing; diagnostics: Diagnostic[]} {
  const diagnostics: Diagnostic[] = []
  const listing: IpvsadmListing = {
    layout: 'list',
    kernelVersion: null,
    connectionTableSize: null,
    virtualServers: [],
  }
  const byKey = new Map<string, IpvsVirtualServer>()
  let layoutSeen = false
  // Column names of the rows, from the header lines: destination rows may differ from service rows.
  let destColumns: string[] = ['Forward', 'Weight', 'ActiveConn', 'InActConn']
  let serviceShowsConfig = true
  let current: IpvsVirtualServer | null = null
  let skippingService = false
  let nonNumeric: NonNumeric | null = null
  let connectionEntries: {first: SourceRef; count: number} | null = null
  // /proc/net/ip_vs has ipvsadm's header: only its hex rows tell it apart.
  const proc = isProcListing(text)
  const hostPort = proc ? parseProcHostPort : parseHostPort

  const at = (line: number): SourceRef => ({path, line})
  const warn = (code: DiagnosticCode, message: string, line: number) =>
    diagnostics.push(diag('warning', code, message, at(line)))
  /** The seconds of `persistent N` (list) or `-p N` (save); a number no kernel timeout holds is said and read as not persistent. */
  const persistentSeconds = (text: string, line: number): number | null => {
    const seconds = uint(text)
    if (seconds === null)
      warn(
        'IPVS_BAD_SERVICE',
        `persistent timeout "${text}" is not a number of seconds; read as not persistent`,
        line,
      )
    return seconds
  }
  const markNonNumeric = (line: number) => {
    if (nonNumeric) nonNumeric.count++
    else nonNumeric = {first: at(line), count: 1}
  }
  const setLayout = (layout: IpvsadmLayout, line: number) => {
    if (layoutSeen && listing.layout !== (proc && layout === 'list' ? 'proc' : layout)) {
      warn(
        'IPVS_MIXED_LAYOUTS',
        `this ${layout} line follows ${listing.layout} output; one input should hold one ipvsadm listing`,
        line,
      )
    }
    if (!layoutSeen) listing.layout = proc && layout === 'list' ? 'proc' : layout
    layoutSeen = true
  }
  const addVirtualServer = (vs: IpvsVirtualServer): IpvsVirtualServer => {
    const seen = byKey.get(vs.key)
    if (seen) {
      warn(
        'IPVS_DUPLICATE_VIRTUAL_SERVER',
        `virtual server ${vs.key} is listed again (first on line ${seen.line}); its real servers are merged`,
        vs.line,
      )
      return seen
    }
    byKey.set(vs.key, vs)
    listing.virtualServers.push(vs)
    return vs
  }

  const lines = text.split(/\r?\n/)
  // ipvsadm ends every line with a newline: a last line without one was cut in the middle.
  const cutLine = lines[lines.length - 1]!.trim() === '' ? 0 : lines.length
  let cutLineRead = false
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1
    const raw = lines[i]!
    if (raw.length > MAX_LINE) {
      warn(
        'IPVS_LINE_TOO_LONG',
        `line of ${raw.length} characters is not ipvsadm output; skipped`,
        lineNo,
      )
      continue
    }
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const tokens = line.split(WHITESPACE)
    const head = tokens[0]!
    if (lineNo === cutLine) {
      cutLineRead = readCutLine(raw, tokens, lineNo, at(lineNo), diagnostics)
      // A real server row cut before its address still leaves its virtual server's list short.
      if (!cutLineRead && head === '->' && current) current.cutAt = lineNo
      if (!cutLineRead) continue
    }

    if (connectionEntries) {
      // `ipvsadm -Lnc` rows until the end: connections, not configuration.
      connectionEntries.count++
      continue
    }
    const version = VERSION_LINE.exec(line)
    if (version) {
      listing.kernelVersion = version[1]!
      listing.connectionTableSize = Number(version[2])
      continue
    }
    // The header names the columns of every variant (b.2): `--stats` / `--rate` / `--persistent-conn`
    // put their columns on this line and leave `  -> RemoteAddress:Port` bare
    // (fixtures/ipvs/generated/ipvsadm-Ln--stats.txt lines 2-3).
    if (head === 'Prot' && tokens[1] === 'LocalAddress:Port') {
      const columns = tokens.slice(2)
      if (columns[0] === 'Conns') setLayout('stats', lineNo)
      else if (columns[0] === 'CPS') setLayout('rate', lineNo)
      else if (columns[0] === 'Weight') setLayout('persistent-conn', lineNo)
      else if (columns[0] === 'Scheduler') setLayout('list', lineNo)
      else
        warn(
          'IPVS_UNKNOWN_HEADER',
          columns.length === 0
            ? 'ipvsadm header without columns after LocalAddress:Port'
            : `unknown ipvsadm header columns: ${columns.join(' ')}`,
          lineNo,
        )
      serviceShowsConfig = columns[0] === 'Scheduler' || columns[0] === 'Weight'
      destColumns = columns[0] === 'Scheduler' ? destColumns : columns
      continue
    }
    if (head === '->' && tokens[1] === 'RemoteAddress:Port') {
      const columns = tokens.slice(2)
      if (columns.length > 0) {
        destColumns = columns
        if (columns[0] === 'Uthreshold' && listing.layout === 'list') listing.layout = 'thresholds'
      }
      continue
    }
    if (head === 'IPVS' && tokens[1] === 'connection' && tokens[2] === 'entries') {
      connectionEntries = {first: at(lineNo), count: 0}
      continue
    }
    if (head === 'Timeout' || head === 'master' || head === 'backup') {
      diagnostics.push(
        diag(
          'info',
          'IPVS_NOT_VIRTUAL_SERVERS',
          `not a virtual server listing (\`ipvsadm -L --timeout\` / \`--daemon\`); not read: ${line}`,
          at(lineNo),
        ),
      )
      continue
    }

    if (head === '-A' || head === '--add-service' || head === '-a' || head === '--add-server') {
      setLayout('save', lineNo)
      parseRuleLine(tokens, lineNo)
      continue
    }
    if (head === '->') {
      if (!current) {
        // The real servers of a virtual server that was refused above go with it (its diagnostic says so).
        if (skippingService) {
          const addr = tokens[1]
          if (addr !== undefined && !hostPort(addr) && looksResolved(addr)) markNonNumeric(lineNo)
          continue
        }
        warn(
          'IPVS_ORPHAN_REAL_SERVER',
          'real server line before any virtual server; skipped',
          lineNo,
        )
        continue
      }
      parseDestinationRow(tokens, lineNo, current)
      continue
    }
    if (head === 'FWM' || head === 'TCP' || head === 'UDP' || head === 'SCTP') {
      if (!layoutSeen) {
        // A pasted listing without its header lines: the list layout is the only one whose service
        // rows carry a scheduler, so the third token tells list from stats/rate.
        setLayout(
          tokens.length === 7 && tokens.slice(2).every((t) => SCALED_NUMBER.test(t))
            ? 'stats'
            : 'list',
          lineNo,
        )
        if (listing.layout === 'stats') {
          serviceShowsConfig = false
          destColumns = ['Conns', 'InPkts', 'OutPkts', 'InBytes', 'OutBytes']
        }
      }
      current = parseServiceRow(tokens, lineNo)
      skippingService = current === null
      continue
    }
    warn('IPVS_UNKNOWN_LINE', `not ipvsadm -Ln / -Sn output; skipped`, lineNo)
  }

  // The cut line was read into the virtual server it belongs to, or starts one: that one may have more.
  if (cutLineRead && current !== null) (current as IpvsVirtualServer).cutAt = cutLine
  if (nonNumeric) {
    const n = nonNumeric as NonNumeric
    diagnostics.push(
      diag(
        'error',
        'IPVS_NOT_NUMERIC',
        `ipvsadm output with resolved names or ports (${n.count} line${n.count === 1 ? '' : 's'}): names are cut and ports lost without -n; collect it again with \`ipvsadm -Ln\` (or \`ipvsadm -Sn\`)`,
        n.first,
      ),
    )
  }
  if (connectionEntries) {
    const c = connectionEntries as {first: SourceRef; count: number}
    diagnostics.push(
      diag(
        'warning',
        'IPVS_CONNECTION_LISTING',
        `\`ipvsadm -Lnc\` connection entries (${c.count}) are not virtual servers and were not read; give \`ipvsadm -Ln\``,
        c.first,
      ),
    )
  }
  if (listing.virtualServers.length === 0 && !nonNumeric) {
    diagnostics.push(
      diag('info', 'IPVS_NO_VIRTUAL_SERVERS', 'no virtual servers in this ipvsadm output', at(1)),
    )
  }
  return {listing, diagnostics}

  // --- list format --------------------------------------------------------------------------

  function parseServiceRow(tokens: string[], lineNo: number): IpvsVirtualServer | null {
    const head = tokens[0]!
    let vs: IpvsVirtualServer
    let rest: string[]
    if (head === 'FWM') {
      // `FWM  100 rr` or `FWM  100 IPv6 rr` (b.1); `FWM  00000064 rr` in /proc/net/ip_vs (b.6).
      const mark = proc ? parseProcMark(tokens[1]) : uint(tokens[1])
      if (mark === null) {
        warn(
          'IPVS_BAD_SERVICE',
          `firewall mark "${tokens[1] ?? ''}" is not a number; virtual server and its real servers skipped`,
          lineNo,
        )
        return null
      }
      const v6 = tokens[2] === 'IPv6'
      vs = newVirtualServer(null, v6 ? 'IPv6' : 'IPv4', null, null, mark, lineNo)
      rest = tokens.slice(v6 ? 3 : 2)
    } else {
      const protocol = parseProtocol(head)!
      const addr =
        tokens[1] === undefined ? null : (hostPort(tokens[1]) ?? parseRedactedHostPort(tokens[1]))
      if (!addr) {
        if (tokens[1] !== undefined && !proc && looksResolved(tokens[1])) markNonNumeric(lineNo)
        else
          warn(
            'IPVS_BAD_SERVICE',
            `"${tokens[1] ?? ''}" is not ADDRESS:PORT; virtual server and its real servers skipped`,
            lineNo,
          )
        return null
      }
      vs = newVirtualServer(protocol, addr.family, addr.ip, addr.port, null, lineNo)
      // Two redacted virtual servers may share a placeholder: each listing row is its own.
      if ('redacted' in addr) vs.key += ` #${lineNo}`
      rest = tokens.slice(2)
    }
    if (proc) readProcOptions(vs, rest, lineNo)
    else if (serviceShowsConfig) readServiceOptions(vs, rest, lineNo)
    else {
      vs.showsConfig = false
      checkCounters(rest, lineNo)
    }
    return addVirtualServer(vs)
  }

  /** `rr (mh-port) persistent 10800 mask 255.255.255.0 pe sip ops`, in ipvsadm's print order. */
  function readServiceOptions(vs: IpvsVirtualServer, rest: string[], lineNo: number): void {
    if (rest.length === 0) {
      warn('IPVS_BAD_SERVICE', 'virtual server line without a scheduler', lineNo)
      return
    }
    vs.scheduler = rest[0]!
    for (let j = 1; j < rest.length; j++) {
      const t = rest[j]!
      if (t.startsWith('(') && t.endsWith(')'))
        vs.schedulerFlags = t.slice(1, -1).split(',').filter(Boolean)
      else if (t === 'persistent' && rest[j + 1] !== undefined) {
        vs.persistentTimeout = persistentSeconds(rest[++j]!, lineNo)
        vs.persistent = vs.persistentTimeout !== null
      } else if (t === 'mask' && rest[j + 1] !== undefined) vs.persistenceMask = rest[++j]!
      else if (t === 'pe' && rest[j + 1] !== undefined) vs.persistenceEngine = rest[++j]!
      else if (t === 'ops') vs.onePacket = true
      else warn('IPVS_UNKNOWN_OPTION', `unknown virtual server option "${t}"`, lineNo)
    }
  }

  /** `rr ops persistent 2700000 FFFFFFFF` (b.6): the kernel's own spelling, timeout in jiffies. */
  function readProcOptions(vs: IpvsVirtualServer, rest: string[], lineNo: number): void {
    if (rest.length === 0) {
      warn('IPVS_BAD_SERVICE', 'virtual server line without a scheduler', lineNo)
      return
    }
    vs.scheduler = rest[0]!
    const o = readProcServiceOptions(rest.slice(1), vs.family)
    vs.onePacket = o.onePacket
    vs.persistenceMask = o.persistenceMask
    for (const t of o.unknown)
      warn('IPVS_UNKNOWN_OPTION', `unknown virtual server option "${t}"`, lineNo)
    if (o.badTimeout !== null)
      warn(
        'IPVS_BAD_SERVICE',
        `persistent timeout "${o.badTimeout}" is not a number of jiffies; read as not persistent`,
        lineNo,
      )
    if (o.persistentJiffies === null) return
    vs.persistent = true
    diagnostics.push(
      diag(
        'info',
        'IPVS_PROC_TIMEOUT_JIFFIES',
        `persistent ${o.persistentJiffies} is in jiffies: ${o.persistentJiffies / 250} s at CONFIG_HZ=250, ${o.persistentJiffies / 1000} s at 1000; the file does not say which, so the affinity timeout is left unknown`,
        at(lineNo),
      ),
    )
  }

  function checkCounters(values: string[], lineNo: number): void {
    if (!values.every((v) => SCALED_NUMBER.test(v)))
      warn('IPVS_BAD_COUNTERS', `counters "${values.join(' ')}" are not numbers`, lineNo)
  }

  function parseDestinationRow(tokens: string[], lineNo: number, vs: IpvsVirtualServer): void {
    const addrText = tokens[1]
    const addr =
      addrText === undefined
        ? null
        : (hostPort(addrText) ?? parseRedactedHostPort(addrText, vs.family))
    if (!addr) {
      if (addrText !== undefined && !proc && looksResolved(addrText)) markNonNumeric(lineNo)
      else
        warn(
          'IPVS_BAD_REAL_SERVER',
          `"${addrText ?? ''}" is not ADDRESS:PORT; real server skipped`,
          lineNo,
        )
      return
    }
    const values = tokens.slice(2)
    const column = (name: string): string | undefined => {
      const idx = destColumns.indexOf(name)
      return idx < 0 ? undefined : values[idx]
    }
    if (values.length !== destColumns.length) {
      warn(
        'IPVS_BAD_REAL_SERVER',
        `expected ${destColumns.length} columns (${destColumns.join(' ')}) after the address, found ${values.length}`,
        lineNo,
      )
    }
    const weightText = column('Weight')
    const weight = weightText === undefined ? null : uint(weightText)
    if (weightText !== undefined && weight === null)
      warn('IPVS_BAD_REAL_SERVER', `weight "${weightText}" is not a number`, lineNo)
    addRealServer(
      vs,
      {
        ip: addr.ip,
        port: addr.port,
        forward: column('Forward') ?? null,
        weight,
        activeConn: uint(column('ActiveConn')),
        inactConn: uint(column('InActConn')),
        line: lineNo,
        ...('redacted' in addr ? {redacted: 0} : {}),
      },
      addr.family,
    )
  }

  // --- rule format (-S) ---------------------------------------------------------------------

  function parseRuleLine(tokens: string[], lineNo: number): void {
    const isService = tokens[0] === '-A' || tokens[0] === '--add-service'
    let protocol: Protocol | null = null
    let addrText: string | null = null
    let fwmark: number | null = null
    let v6Mark = false
    const opts = {
      scheduler: null as string | null,
      persistent: null as number | null,
      mask: null as string | null,
      pe: null as string | null,
      ops: false,
      flags: [] as string[],
    }
    const rs = {
      addr: null as string | null,
      forward: null as string | null,
      weight: null as number | null,
      weightGiven: false,
    }
    for (let j = 1; j < tokens.length; j++) {
      const t = tokens[j]!
      const value = (): string | null => {
        const v = tokens[j + 1]
        if (v === undefined) {
          warn('IPVS_BAD_RULE', `option ${t} needs a value`, lineNo)
          return null
        }
        j++
        return v
      }
      switch (t) {
        case '-t':
        case '--tcp-service':
          protocol = 'TCP'
          addrText = value()
          break
        case '-u':
        case '--udp-service':
          protocol = 'UDP'
          addrText = value()
          break
        case '--sctp-service':
          protocol = 'SCTP'
          addrText = value()
          break
        case '-f':
        case '--fwmark-service':
          fwmark = uint(value() ?? undefined)
          break
        case '-6':
        case '--ipv6':
          v6Mark = true
          break
        case '-s':
        case '--scheduler':
          opts.scheduler = value()
          break
        case '-p':
        case '--persistent':
          // ipvsadm -S always prints the timeout after -p; without one, ipvsadm's default.
          opts.persistent = UINT.test(tokens[j + 1] ?? '')
            ? persistentSeconds(tokens[++j]!, lineNo)
            : 300
          break
        case '-M':
        case '--netmask':
          opts.mask = value()
          break
        case '--pe':
          opts.pe = value()
          break
        case '-o':
        case '--ops':
          opts.ops = true
          break
        case '-b':
        case '--sched-flags':
          opts.flags = (value() ?? '').split(',').filter(Boolean)
          break
        case '-r':
        case '--real-server':
          rs.addr = value()
          break
        case '-w':
        case '--weight': {
          const w = value()
          rs.weightGiven = true
          rs.weight = uint(w ?? undefined)
          if (w !== null && rs.weight === null)
            warn('IPVS_BAD_REAL_SERVER', `weight "${w}" is not a number`, lineNo)
          break
        }
        case '-x':
        case '--u-threshold':
        case '-y':
        case '--l-threshold':
        case '--tun-type':
        case '--tun-port':
          value()
          break
        case '--tun-nocsum':
        case '--tun-csum':
        case '--tun-remcsum':
          break
        default: {
          const forward = FORWARD_FLAG.get(t)
          if (forward) rs.forward = forward
          else warn('IPVS_UNKNOWN_OPTION', `unknown ipvsadm option "${t}"`, lineNo)
        }
      }
    }

    let vsKey: string
    let family: Family
    let ip: string | null = null
    let port: number | null = null
    if (addrText !== null && protocol !== null) {
      const addr = parseHostPort(addrText)
      if (!addr) {
        if (looksResolved(addrText)) markNonNumeric(lineNo)
        else warn('IPVS_BAD_RULE', `"${addrText}" is not ADDRESS:PORT; line skipped`, lineNo)
        return
      }
      family = addr.family
      ip = addr.ip
      port = addr.port
      vsKey = virtualServerKey(protocol, family, ip, port, null)
    } else if (fwmark !== null) {
      family = v6Mark ? 'IPv6' : 'IPv4'
      vsKey = virtualServerKey(null, family, null, null, fwmark)
    } else {
      warn('IPVS_BAD_RULE', 'no -t, -u, --sctp-service or -f service in this line; skipped', lineNo)
      return
    }

    if (isService) {
      const vs = newVirtualServer(protocol, family, ip, port, fwmark, lineNo)
      vs.scheduler = opts.scheduler
      vs.persistentTimeout = opts.persistent
      vs.persistent = opts.persistent !== null
      vs.persistenceMask = opts.mask
      vs.persistenceEngine = opts.pe
      vs.onePacket = opts.ops
      vs.schedulerFlags = opts.flags
      current = addVirtualServer(vs)
      return
    }
    let vs = byKey.get(vsKey)
    if (!vs) {
      warn(
        'IPVS_ORPHAN_REAL_SERVER',
        `real server of ${vsKey}, which no -A line added before; the virtual server is kept with an unknown scheduler`,
        lineNo,
      )
      vs = addVirtualServer(newVirtualServer(protocol, family, ip, port, fwmark, lineNo))
    }
    if (rs.addr === null) {
      warn('IPVS_BAD_RULE', '-a line without -r REAL-SERVER; skipped', lineNo)
      return
    }
    const real =
      parseHostPort(rs.addr) ??
      parseBareHost(rs.addr, port) ??
      parseRedactedHostPort(rs.addr, vs.family)
    if (!real) {
      if (looksResolved(rs.addr)) markNonNumeric(lineNo)
      else
        warn(
          'IPVS_BAD_REAL_SERVER',
          `"${rs.addr}" is not ADDRESS:PORT; real server skipped`,
          lineNo,
        )
      return
    }
    // Without -w ipvsadm's default, 1; with a -w kp cannot read, unknown (as in the list layout).
    addRealServer(
      vs,
      {
        ip: real.ip,
        port: real.port,
        forward: rs.forward,
        weight: rs.weightGiven ? rs.weight : 1,
        activeConn: null,
        inactConn: null,
        line: lineNo,
        ...('redacted' in real ? {redacted: 0} : {}),
      },
      real.family,
    )
  }

  function addRealServer(vs: IpvsVirtualServer, real: IpvsRealServer, family: Family): void {
    if (real.redacted !== undefined) {
      real.redacted = vs.realServers.filter((r) => r.redacted !== undefined).length + 1
      family = vs.family
    }
    if (family !== vs.family && vs.fwmark === null) {
      warn(
        'IPVS_MIXED_FAMILY',
        `real server ${joinHostPort(real.ip, real.port, family)} is not of the virtual server's family ${vs.family}`,
        real.line,
      )
    }
    vs.realServers.push(real)
  }
}

/** A real server given as a bare address takes the virtual server's port (ipvsadm(8), -r). */
function parseBareHost(
  text: string,
  port: number | null,
): {ip: string; family: Family; port: number} | null {
  const ip = parseIp(text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text)
  return ip && port !== null ? {...ip, port} : null
}

/**
 * `x.x.x.x:8080`, `<IP>:53`, `[REDACTED]:80`: a redaction placeholder (src/core/redaction.ts) with a
 * numeric port. The placeholder is kept as the address; the last check of the state marks it
 * redacted (src/readers/valid-addresses.ts). Its family is the virtual server's, else IPv4.
 */
function parseRedactedHostPort(
  text: string,
  family: Family = 'IPv4',
): {ip: string; family: Family; port: number; redacted: true} | null {
  const colon = text.lastIndexOf(':')
  if (colon <= 0) return null
  const port = uint(text.slice(colon + 1))
  if (port === null || port > 65535) return null
  const host = text.slice(0, colon)
  return isRedacted(host) ? {ip: host, family, port, redacted: true} : null
}

/**
 * A host:port that failed numeric parsing because ipvsadm resolved it: `kube-dns.svc:domain`,
 * `ip-10-0-62-121.ec2.internal:` (port cut at the column width), `100.98.125.10:http`.
 */
function looksResolved(text: string): boolean {
  return text.includes(':') || text.includes('.')
}

export function virtualServerKey(
  protocol: Protocol | null,
  family: Family,
  ip: string | null,
  port: number | null,
  fwmark: number | null,
): string {
  if (fwmark !== null) return `FWM ${fwmark} ${family}`
  return `${protocol} ${joinHostPort(ip ?? '?', port, family)}`
}

function newVirtualServer(
  protocol: Protocol | null,
  family: Family,
  ip: string | null,
  port: number | null,
  fwmark: number | null,
  line: number,
): IpvsVirtualServer {
  return {
    key: virtualServerKey(protocol, family, ip, port, fwmark),
    protocol,
    family,
    ip,
    port,
    fwmark,
    scheduler: null,
    schedulerFlags: [],
    persistentTimeout: null,
    persistent: false,
    persistenceMask: null,
    persistenceEngine: null,
    onePacket: false,
    showsConfig: true,
    realServers: [],
    line,
  }
}

/** The registry's entry point: one source → its listing and diagnostics. */
export function parse(src: SourceText): ParsedSource<IpvsadmListing> {
  const {listing, diagnostics} = parseIpvsadm(src.text, src.path)
  // The version line is the kernel's IPVS version, not ipvsadm's: it stays in the listing, not in `tool`.
  return {
    format: 'ipvsadm',
    source: {path: src.path, format: 'ipvsadm', tool: src.tool ?? null},
    data: listing,
    diagnostics,
  }
}
