/**
 * The last check of a state a reader built from dumps: every address, CIDR and port in it is one
 * a saved state (kp-json) accepts, so `kp list --json` output can always be read back, and no
 * renderer writes a corrupt value into rules. A reader that took a word of a damaged line for an
 * address (`--to-destination 10.180.0.3::80`, `-s COMMIT`, an nft element cut in the middle:
 * found by mutating the fixtures) leaves it here, as an error at the line that holds it (looked
 * for among the service port's rules first): the value is left out and the rest of the state stands.
 * A redaction placeholder (`x.x.x.x`, `<IP>`: src/core/redaction.ts) is no damage: a frontend or
 * endpoint keeps its place with a null address marked `redacted`, and a warning says so.
 */
import {isCidr, isIp, isIpOrCidr} from '../core/address.js'
import {isRedacted} from '../core/redaction.js'
import {diag, displayName} from '../core/state.js'
import {indexAtOrBefore} from '../core/text.js'
import type {Diagnostic, ProxyState, ServicePort, SourceRef} from '../model/types.js'
import type {SourceText} from './types.js'

const CODE = 'INPUT_BAD_ADDRESS'
const REDACTED = 'INPUT_REDACTED'
/** How much of a bad value a message quotes. */
const QUOTE_CHARS = 80

/**
 * Where a value a reader took for an address is: the first of the `near` lines (the service
 * port's rules) that holds it, else the first line of the sources that does.
 */
export type Locate = (value: string, near?: readonly SourceRef[]) => SourceRef | null

function quote(value: string): string {
  return JSON.stringify(value.length > QUOTE_CHARS ? `${value.slice(0, QUOTE_CHARS)}...` : value)
}

/**
 * Locate over these sources. A value not found as it is may be one a reader made from a word
 * (`x/32` of `-s x`): the part before its slash is looked for then. Found nowhere: the first
 * source's first line. Only the few bad values are looked for, so the sources' lines are indexed
 * only then.
 */
export function locateIn(sources: readonly SourceText[]): Locate {
  const starts = new Map<string, number[]>()
  const lineStarts = (src: SourceText): number[] => {
    let list = starts.get(src.path)
    if (!list) {
      list = [0]
      const text = src.text
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) list.push(i + 1)
      starts.set(src.path, list)
    }
    return list
  }
  const lineHolds = (src: SourceText, line: number, needle: string): boolean => {
    const list = lineStarts(src)
    const from = list[line - 1]
    if (from === undefined) return false
    const to = list[line] ?? src.text.length
    const at = src.text.indexOf(needle, from)
    return at >= 0 && at + needle.length <= to
  }
  return (value, near = []) => {
    const slash = value.indexOf('/')
    const needles = slash > 0 ? [value, value.slice(0, slash)] : [value]
    for (const needle of needles) {
      for (const ref of near) {
        const src = sources.find((s) => s.path === ref.path)
        if (src && lineHolds(src, ref.line, needle)) return ref
      }
    }
    for (const needle of needles) {
      for (const src of sources) {
        const at = src.text.indexOf(needle)
        if (at < 0) continue
        return {path: src.path, line: indexAtOrBefore(lineStarts(src), at) + 1}
      }
    }
    return sources[0] ? {path: sources[0].path, line: 1} : null
  }
}

function isPortOrNull(port: number | null): boolean {
  return port === null || (Number.isInteger(port) && port >= 0 && port <= 65535)
}

/** Removes what is not an address, CIDR or port where the model wants one; says so for each. */
export function dropInvalidAddresses(state: ProxyState, locate: Locate): Diagnostic[] {
  const out: Diagnostic[] = []
  const {node} = state
  const badCidrs = node.podCIDRs.filter((c) => !isCidr(c))
  if (badCidrs.length > 0) {
    for (const c of badCidrs)
      out.push(
        isRedacted(c)
          ? diag('warning', REDACTED, `pod CIDR ${quote(c)} is redacted; left out`, locate(c))
          : diag('error', CODE, `pod CIDR ${quote(c)} is not a CIDR; left out`, locate(c)),
      )
    node.podCIDRs = node.podCIDRs.filter((c) => isCidr(c))
  }
  if (node.nodePortAddresses !== null && node.nodePortAddresses.some((c) => !isIpOrCidr(c))) {
    for (const c of node.nodePortAddresses)
      if (!isIpOrCidr(c))
        out.push(
          isRedacted(c)
            ? diag(
                'warning',
                REDACTED,
                `nodePortAddresses entry ${quote(c)} is redacted; left out`,
                locate(c),
              )
            : diag(
                'error',
                CODE,
                `nodePortAddresses entry ${quote(c)} is not an address or CIDR; left out`,
                locate(c),
              ),
        )
    node.nodePortAddresses = node.nodePortAddresses.filter((c) => isIpOrCidr(c))
  }
  for (const sp of state.services) checkServicePort(sp, out, locate)
  return out
}

function checkServicePort(sp: ServicePort, out: Diagnostic[], locate: Locate): void {
  /** The line of the value where it can be found, else the service port's first rule. */
  const say = (what: string, value: string): void => {
    out.push(
      diag(
        'error',
        CODE,
        `${displayName(sp)}: ${what}; left out`,
        locate(value, sp.rules) ?? sp.rules[0] ?? null,
      ),
    )
  }
  const sayRedacted = (what: string, value: string): void => {
    out.push(
      diag(
        'warning',
        REDACTED,
        `${displayName(sp)}: ${what} ${quote(value)} is redacted; kept without its address`,
        locate(value, sp.rules) ?? sp.rules[0] ?? null,
      ),
    )
  }
  let frontendsOk = true
  for (const f of sp.frontends) {
    if (f.ip !== null && !isIp(f.ip)) {
      if (!isRedacted(f.ip)) frontendsOk = false
      else {
        sayRedacted(`${f.type} address`, f.ip)
        f.ip = null
        f.redacted = true
      }
    }
    if (f.sourceRanges.some((r) => !isCidr(r) && isRedacted(r))) {
      // A hidden range is kept as hidden: dropping it would let fewer clients in than the node does.
      const hidden = f.sourceRanges.filter((r) => !isCidr(r) && isRedacted(r))
      for (const r of hidden) sayRedacted(`${f.type} source range`, r)
      f.redactedSourceRanges = [...(f.redactedSourceRanges ?? []), ...hidden]
      f.sourceRanges = f.sourceRanges.filter((r) => !hidden.includes(r))
    }
    if (!isPortOrNull(f.port) || f.sourceRanges.some((r) => !isCidr(r))) frontendsOk = false
  }
  if (!frontendsOk) {
    sp.frontends = sp.frontends.filter((f) => {
      if (f.ip !== null && !isIp(f.ip)) {
        say(`${f.type} address ${quote(f.ip)} is not an IP address`, f.ip)
        return false
      }
      if (!isPortOrNull(f.port)) {
        say(`${f.type} port ${f.port} is not a port`, String(f.port))
        return false
      }
      const bad = f.sourceRanges.filter((r) => !isCidr(r))
      // A range left out would let more clients in: the frontend goes with it.
      if (bad.length > 0) {
        say(
          `${f.type} ${f.ip ?? '*'}:${f.port ?? '?'} source range ${quote(bad[0]!)} is not a CIDR, so who may connect is not known`,
          bad[0]!,
        )
        return false
      }
      return true
    })
  }
  if (sp.healthCheckNodePort !== null && !isPortOrNull(sp.healthCheckNodePort)) {
    say(
      `health check NodePort ${sp.healthCheckNodePort} is not a port`,
      String(sp.healthCheckNodePort),
    )
    sp.healthCheckNodePort = null
  }
  let endpointsOk = true
  for (const ep of sp.endpoints) {
    if (!isPortOrNull(ep.port)) endpointsOk = false
    else if (ep.ip !== null && !isIp(ep.ip)) {
      if (!isRedacted(ep.ip)) endpointsOk = false
      else {
        // Counted, with its port, share and locality; only its address is hidden.
        sayRedacted('endpoint address', ep.ip)
        ep.ip = null
        ep.redacted = true
      }
    }
  }
  if (!endpointsOk) {
    sp.endpoints = sp.endpoints.filter((ep) => {
      if ((ep.ip === null || isIp(ep.ip)) && isPortOrNull(ep.port)) return true
      const ip = ep.ip ?? ''
      say(
        `endpoint ${quote(ip)}${ep.port === null ? '' : ` port ${ep.port}`} is not an IP address and port`,
        ip,
      )
      return false
    })
  }
}
