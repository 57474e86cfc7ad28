/**
 * What `kp explain SERVICE` was asked about. People name a service the way kube-proxy's
 * comments and `kp list` show it (`ns/name`, `ns/name:port`, `ns/name:port/tcp`, `name -n ns`),
 * or paste the address they are debugging (`172.30.0.41:80/tcp`, `[fd00::1]:80`, `fd00::1`,
 * `:3001` for a NodePort on any node address).
 */
import type {Protocol} from '../model/types.js'
import {canonicalIp, parsePort} from '../core/address.js'

export type ServiceQuery =
  | {
      by: 'name'
      text: string
      /** null: any namespace. */
      namespace: string | null
      name: string
      /** A port name, or a port number written as digits; null: every port of the service. */
      port: string | null
      protocol: Protocol | null
    }
  | {
      by: 'address'
      text: string
      /** Canonical spelling; null for `:PORT`, a NodePort on any node address. */
      ip: string | null
      port: number | null
      protocol: Protocol | null
    }

export interface InvalidQuery {
  invalid: string
}

const PROTOCOLS: Record<string, Protocol> = {tcp: 'TCP', udp: 'UDP', sctp: 'SCTP'}

// [v6]:port, v4:port, *:port and :port, each with an optional /proto.
const BRACKETED = /^\[([^\]]+)\](?::([^/]*))?$/
const HOST_PORT = /^([0-9.]*|\*):([^:/]*)$/

/** A service port: parsePort's, less 0. */
function servicePort(text: string): number | null {
  const n = parsePort(text)
  return n === 0 ? null : n
}

function splitProtocol(text: string): {
  rest: string
  protocol: Protocol | null
  bad: string | null
} {
  const slash = text.lastIndexOf('/')
  if (slash < 0) return {rest: text, protocol: null, bad: null}
  const suffix = text.slice(slash + 1).toLowerCase()
  const protocol = PROTOCOLS[suffix]
  return protocol
    ? {rest: text.slice(0, slash), protocol, bad: null}
    : {rest: text, protocol: null, bad: suffix}
}

function parseAddress(text: string): ServiceQuery | InvalidQuery | null {
  const {rest, protocol, bad} = splitProtocol(text)
  // An address with a suffix that is no protocol (`10.96.0.1:80/icmp`) is that, not a ns/name to look up.
  if (bad !== null) {
    const before = text.slice(0, text.lastIndexOf('/'))
    if (parseAddress(before) === null) return null
    // `10.0.0.0/8`: a prefix length after a bare address is a CIDR, which names no one service port.
    if (/^\d{1,3}$/.test(bad) && canonicalIp(before) !== null)
      return {invalid: `${text} is a CIDR; give one address (IP, IP:PORT or IP:PORT/PROTO)`}
    return {invalid: `unknown protocol "${bad}" (expected tcp, udp or sctp)`}
  }
  const address = (
    ipText: string | null,
    portText: string | undefined,
  ): ServiceQuery | InvalidQuery => {
    const ip = ipText === null ? null : canonicalIp(ipText)
    if (ipText !== null && ip === null) return {invalid: `"${ipText}" is not an IP address`}
    let port: number | null = null
    if (portText !== undefined) {
      port = servicePort(portText)
      if (port === null) return {invalid: `"${portText}" is not a port number (1-65535)`}
    }
    if (ip === null && port === null) return {invalid: 'a NodePort query needs a port, like :30080'}
    return {by: 'address', text, ip, port, protocol}
  }
  const bracketed = BRACKETED.exec(rest)
  if (bracketed) return address(bracketed[1]!, bracketed[2])
  if (canonicalIp(rest) !== null) return address(rest, undefined)
  const hostPort = HOST_PORT.exec(rest)
  if (hostPort) {
    const host = hostPort[1]!
    if (host === '' || host === '*') return address(null, hostPort[2])
    if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return address(host, hostPort[2])
  }
  return null
}

/**
 * Reads a SERVICE argument (and `-n`). Returns `{invalid}` with a reason for text that is
 * neither a service name nor an address.
 */
export function parseServiceQuery(
  input: string,
  namespaceFlag?: string,
): ServiceQuery | InvalidQuery {
  const text = input.trim()
  if (text === '') return {invalid: 'the service is empty'}
  const asAddress = parseAddress(text)
  if (asAddress) {
    if (namespaceFlag !== undefined && 'by' in asAddress)
      return {invalid: '-n/--namespace applies to a service name, not to an address'}
    return asAddress
  }

  const slashes = text.split('/').length - 1
  // A protocol suffix is only read off `ns/name/proto` or `ns/name:port/proto`, so that a
  // service really called "tcp" can still be asked for as `ns/tcp`.
  let rest = text
  let protocol: Protocol | null = null
  const split = splitProtocol(text)
  if (slashes === 2) {
    if (split.bad !== null)
      return {invalid: `unknown protocol "${split.bad}" (expected tcp, udp or sctp)`}
    ;({rest, protocol} = split)
  } else if (
    slashes === 1 &&
    split.protocol !== null &&
    (namespaceFlag !== undefined || split.rest.includes(':'))
  ) {
    // `name/tcp -n ns` or `name:port/tcp`: a namespace never holds a colon.
    ;({rest, protocol} = split)
  }
  const parts = rest.split('/')
  if (parts.length > 2) return {invalid: `"${text}" is not ns/name[:port][/proto] nor an address`}
  const namespace = parts.length === 2 ? parts[0]! : (namespaceFlag ?? null)
  if (parts.length === 2 && namespaceFlag !== undefined && namespaceFlag !== namespace) {
    return {invalid: `the namespace is given twice ("${namespace}" and -n "${namespaceFlag}")`}
  }
  const nameAndPort = parts[parts.length - 1]!
  const colon = nameAndPort.indexOf(':')
  const name = colon < 0 ? nameAndPort : nameAndPort.slice(0, colon)
  const port = colon < 0 ? null : nameAndPort.slice(colon + 1)
  if (namespace === '') return {invalid: `"${text}" has an empty namespace`}
  if (name === '') return {invalid: `"${text}" has an empty service name`}
  if (port === '') return {invalid: `"${text}" has an empty port after ":"`}
  return {by: 'name', text, namespace, name, port, protocol}
}

/**
 * The substrings every rule of a matching service holds, for a focused read (ReadOptions.focus):
 * kube-proxy's comments name the service port `ns/name[:port]`, so `ns/name` (or `/name` when
 * any namespace matches) is in each of them. Null when the reader must read everything: an
 * address may also match a NodePort on any node address, which no rule text names.
 */
export function focusNeedles(query: ServiceQuery): string[] | null {
  if (query.by !== 'name') return null
  return [query.namespace === null ? `/${query.name}` : `${query.namespace}/${query.name}`]
}
