/**
 * Reads `ip addr show [dev kube-ipvs0]` (iproute2 ip-address(8)) in its three shapes: the default
 * multi-line text, the one-line `ip -o addr`, and JSON (`ip -j addr`, also pretty-printed with
 * `-p`); and the commands that bind the addresses (`ip link add kube-ipvs0 type dummy`, `ip addr
 * add IP/32 dev kube-ipvs0`), as `kp migrate --to ipvs` writes them in kube-ipvs0.sh. What IPVS mode needs from it: the addresses bound to kube-ipvs0 (every ClusterIP, and
 * the externalIPs / LB IPs that are not node addresses, docs/ipvs-layouts.md a.2), and, when the whole
 * `ip addr` is given, the node's own addresses (where NodePort virtual servers listen).
 */
import {diag} from '../../core/state.js'
import {indexAtOrBefore} from '../../core/text.js'
import type {Diagnostic, Family, SourceRef} from '../../model/types.js'
import {parseIp} from '../../core/address.js'
import {jsonSyntaxError} from '../json-lines.js'
import type {ParsedSource, SourceText} from '../types.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'

export interface IpAddress {
  ip: string
  family: Family
  prefixLength: number | null
  scope: string | null
  line: number
}

export interface IpInterface {
  index: number | null
  /** Without the `@peer` suffix of veth / vlan names. */
  name: string
  flags: string[]
  state: string | null
  addresses: IpAddress[]
  line: number
}

export interface IpAddrDump {
  layout: 'text' | 'oneline' | 'json' | 'commands'
  interfaces: IpInterface[]
}

const WHITESPACE = /\s+/
const MAX_LINE = 64 * 1024
/** `3: kube-ipvs0: <BROADCAST,NOARP> mtu 1500 ...` (text) or `3: kube-ipvs0    inet ...` (-o). */
const INTERFACE_LINE = /^(\d+):\s+([^\s:]+?)(?:@[^\s:]+)?(:?)\s+(.*)$/
const PREFIX = /^(.+)\/(\d{1,3})$/

/** Parses one `ip addr` output (text, -o or -j). Never throws: problems become IPADDR_* diagnostics. */
export function parseIpAddr(
  text: string,
  path: string,
): {dump: IpAddrDump; diagnostics: Diagnostic[]} {
  const trimmed = text.trimStart()
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return parseJson(text, path)
  return parseText(text, path)
}

function parseText(text: string, path: string): {dump: IpAddrDump; diagnostics: Diagnostic[]} {
  const diagnostics: Diagnostic[] = []
  const dump: IpAddrDump = {layout: 'text', interfaces: []}
  const byKey = new Map<string, IpInterface>()
  /** The interfaces the commands name (`ip addr add ... dev NAME`), which have no index. */
  const byName = new Map<string, IpInterface>()
  const at = (line: number): SourceRef => ({path, line})
  const warn = (code: DiagnosticCode, message: string, line: number) =>
    diagnostics.push(diag('warning', code, message, at(line)))
  let current: IpInterface | null = null

  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1
    const raw = lines[i]!
    if (raw.length > MAX_LINE) {
      warn(
        'IPADDR_LINE_TOO_LONG',
        `line of ${raw.length} characters is not ip addr output; skipped`,
        lineNo,
      )
      continue
    }
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const head = INTERFACE_LINE.exec(line)
    if (head) {
      const index = Number(head[1])
      const name = head[2]!
      const key = `${index} ${name}`
      current = byKey.get(key) ?? null
      if (!current) {
        current = {index, name, flags: [], state: null, addresses: [], line: lineNo}
        byKey.set(key, current)
        dump.interfaces.push(current)
      }
      const rest = head[4]!
      if (head[3] === ':') {
        // Link line: `<BROADCAST,NOARP> mtu 1500 qdisc noop state DOWN group default`.
        const tokens = rest.split(WHITESPACE)
        const flags = tokens[0]
        if (flags?.startsWith('<') && flags.endsWith('>'))
          current.flags = flags.slice(1, -1).split(',').filter(Boolean)
        const state = tokens.indexOf('state')
        if (state >= 0 && tokens[state + 1] !== undefined) current.state = tokens[state + 1]!
      } else {
        // `ip -o addr`: the address follows the name on the same line and `\` stands for the line
        // breaks of the long form (fixtures/ip-addr/real-netns/ip-o-addr-show-kube-ipvs0.txt).
        dump.layout = 'oneline'
        readAddressWords(rest.split(WHITESPACE), lineNo, current)
      }
      continue
    }
    const tokens = line.split(WHITESPACE)
    const word = tokens[0]!
    if (word === 'ip') {
      readCommand(tokens, lineNo)
      continue
    }
    if (word === 'inet' || word === 'inet6') {
      if (!current) {
        warn('IPADDR_ORPHAN_ADDRESS', 'address line before any interface line; skipped', lineNo)
        continue
      }
      readAddressWords(tokens, lineNo, current)
      continue
    }
    // link/ether, valid_lft, altname, link-netns...: facts about the link kp has no use for.
    if (
      word.startsWith('link/') ||
      word === 'valid_lft' ||
      word === 'altname' ||
      word === 'link-netnsid' ||
      word === 'link-netns'
    )
      continue
    if (line.startsWith('Device "') && line.endsWith('does not exist.')) {
      warn(
        'IPADDR_NO_DEVICE',
        `${line} (kube-proxy is not in IPVS mode on this node, or it was cleaned up)`,
        lineNo,
      )
      continue
    }
    warn('IPADDR_UNKNOWN_LINE', 'not ip addr output; skipped', lineNo)
  }
  if (dump.interfaces.length === 0)
    diagnostics.push(
      diag('warning', 'IPADDR_NO_INTERFACES', 'no interfaces in this ip addr output', at(1)),
    )
  return {dump, diagnostics}

  /** The interface of that name, made (without an index) when a command names it first. */
  function namedInterface(name: string, lineNo: number): IpInterface {
    const found = byName.get(name)
    if (found) return found
    const made: IpInterface = {
      index: null,
      name,
      flags: [],
      state: null,
      addresses: [],
      line: lineNo,
    }
    byName.set(name, made)
    dump.interfaces.push(made)
    return made
  }

  /** `ip link add NAME type dummy` and `ip [-4|-6] addr|address add CIDR dev NAME`; any other command is not read. */
  function readCommand(tokens: string[], lineNo: number): void {
    let k = 1
    while (tokens[k] === '-4' || tokens[k] === '-6') k++
    const object = tokens[k]
    const verb = tokens[k + 1]
    dump.layout = 'commands'
    if (object === 'link' && verb === 'add' && tokens[k + 2] !== undefined) {
      namedInterface(tokens[k + 2]!, lineNo)
      return
    }
    const dev = tokens.indexOf('dev', k + 2)
    if (
      (object === 'addr' || object === 'address' || object === 'a') &&
      verb === 'add' &&
      dev > 0 &&
      tokens[dev + 1] !== undefined &&
      tokens[k + 2] !== undefined
    ) {
      const cidr = tokens[k + 2]!
      const m = PREFIX.exec(cidr)
      const ip = parseIp(m ? m[1]! : cidr)
      if (!ip) {
        warn('IPADDR_BAD_ADDRESS', `"${cidr}" is not an IP address`, lineNo)
        return
      }
      namedInterface(tokens[dev + 1]!, lineNo).addresses.push({
        ...ip,
        prefixLength: m ? Number(m[2]) : null,
        scope: null,
        line: lineNo,
      })
      return
    }
    warn(
      'IPADDR_UNKNOWN_LINE',
      'an ip command other than `ip link add NAME` or `ip addr add ADDRESS dev NAME`; skipped',
      lineNo,
    )
  }

  function readAddressWords(tokens: string[], lineNo: number, iface: IpInterface): void {
    const word = tokens[0]
    if (word !== 'inet' && word !== 'inet6') {
      warn(
        'IPADDR_UNKNOWN_LINE',
        `expected inet or inet6 after the interface name, found "${word ?? ''}"`,
        lineNo,
      )
      return
    }
    const cidr = tokens[1] ?? ''
    const m = PREFIX.exec(cidr)
    const ip = parseIp(m ? m[1]! : cidr)
    if (!ip || (ip.family === 'IPv6') !== (word === 'inet6')) {
      warn(
        'IPADDR_BAD_ADDRESS',
        `"${cidr}" is not an ${word === 'inet6' ? 'IPv6' : 'IPv4'} address`,
        lineNo,
      )
      return
    }
    const scope = tokens.indexOf('scope')
    iface.addresses.push({
      ...ip,
      prefixLength: m ? Number(m[2]) : null,
      scope: scope >= 0 ? (tokens[scope + 1] ?? null) : null,
      line: lineNo,
    })
  }
}

interface JsonAddrInfo {
  family?: unknown
  local?: unknown
  prefixlen?: unknown
  scope?: unknown
}

function parseJson(text: string, path: string): {dump: IpAddrDump; diagnostics: Diagnostic[]} {
  const diagnostics: Diagnostic[] = []
  const dump: IpAddrDump = {layout: 'json', interfaces: []}
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    const problem = jsonSyntaxError(text)
    diagnostics.push(
      diag(
        'error',
        'IPADDR_BAD_JSON',
        `not valid JSON (${problem.message}); expected \`ip -j addr\` output`,
        {path, line: problem.line},
      ),
    )
    return {dump, diagnostics}
  }
  if (!Array.isArray(data)) {
    diagnostics.push(
      diag('error', 'IPADDR_BAD_JSON', 'expected the JSON array that `ip -j addr` prints', {
        path,
        line: 1,
      }),
    )
    return {dump, diagnostics}
  }
  // JSON.parse forgets positions; find each interface and address in the text in order (one
  // forward scan, so the whole walk stays linear) to give diagnostics and rules a line.
  const lineStarts = lineStartOffsets(text)
  let cursor = 0
  const lineOfNext = (needle: string): number => {
    const found = text.indexOf(needle, cursor)
    if (found < 0) return lineAt(lineStarts, cursor)
    cursor = found + needle.length
    return lineAt(lineStarts, found)
  }
  for (const entry of data as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue
    const e = entry as {
      ifindex?: unknown
      ifname?: unknown
      flags?: unknown
      operstate?: unknown
      addr_info?: unknown
    }
    if (typeof e.ifname !== 'string') {
      diagnostics.push(
        diag('warning', 'IPADDR_BAD_JSON', 'interface without "ifname"; skipped', {
          path,
          line: lineAt(lineStarts, cursor),
        }),
      )
      continue
    }
    const iface: IpInterface = {
      index: typeof e.ifindex === 'number' ? e.ifindex : null,
      name: e.ifname,
      flags: Array.isArray(e.flags)
        ? e.flags.filter((f): f is string => typeof f === 'string')
        : [],
      state: typeof e.operstate === 'string' ? e.operstate : null,
      addresses: [],
      line: lineOfNext('"ifname"'),
    }
    dump.interfaces.push(iface)
    const infos = Array.isArray(e.addr_info) ? (e.addr_info as JsonAddrInfo[]) : []
    for (const info of infos) {
      const local = typeof info?.local === 'string' ? info.local : null
      const line = local === null ? lineAt(lineStarts, cursor) : lineOfNext(`"${local}"`)
      const ip = local === null ? null : parseIp(local)
      if (!ip) {
        // Not String(info.local): an object whose "toString" is not a function (`{"toString": 1}`) makes it throw.
        const raw = info?.local
        const shown =
          typeof raw === 'object' && raw !== null
            ? Array.isArray(raw)
              ? 'an array'
              : 'an object'
            : JSON.stringify(raw)
        const message =
          shown === undefined
            ? `an address of ${iface.name} has no "local"; skipped`
            : `address ${shown} of ${iface.name} is not an IP address; skipped`
        diagnostics.push(diag('warning', 'IPADDR_BAD_ADDRESS', message, {path, line}))
        continue
      }
      iface.addresses.push({
        ...ip,
        prefixLength: typeof info.prefixlen === 'number' ? info.prefixlen : null,
        scope: typeof info.scope === 'string' ? info.scope : null,
        line,
      })
    }
  }
  if (dump.interfaces.length === 0)
    diagnostics.push(
      diag('warning', 'IPADDR_NO_INTERFACES', 'no interfaces in this ip -j addr output', {
        path,
        line: 1,
      }),
    )
  return {dump, diagnostics}
}

function lineStartOffsets(text: string): number[] {
  const starts = [0]
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1)
  return starts
}

/** 1-based line of an offset, by binary search over the line starts. */
function lineAt(starts: number[], offset: number): number {
  return indexAtOrBefore(starts, offset) + 1
}

/** The registry's entry point: one source → its interfaces and diagnostics. */
export function parse(src: SourceText): ParsedSource<IpAddrDump> {
  const {dump, diagnostics} = parseIpAddr(src.text, src.path)
  return {
    format: 'ip-addr',
    source: {path: src.path, format: 'ip-addr', tool: src.tool ?? null},
    data: dump,
    diagnostics,
  }
}
