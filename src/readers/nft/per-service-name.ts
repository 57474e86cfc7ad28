/**
 * Per-service nftables object names (`PREFIX-HASH8-ns/svc/proto/port[__IP/PORT]`) taken apart:
 * how kp tells a service's chains and sets from kube-proxy's own (docs/kube-proxy-layouts.md §3.6).
 */
import {NFT_PER_SERVICE_PREFIXES, type PerServicePrefix} from '../../kube-proxy/nftables-names.js'

type ChainPrefix = PerServicePrefix
const PREFIXES = NFT_PER_SERVICE_PREFIXES

/**
 * A per-service object name `PREFIX-HASH8-ns/svc/proto/port[__IP/PORT]` taken apart. The parts
 * are cut out when asked: a large dump has 100,000+ such names, each taken apart twice or
 * more, and most parts are never looked at.
 */
export class PerServiceName {
  constructor(
    readonly full: string,
    readonly prefix: ChainPrefix,
    /** Where the hash starts (after `PREFIX-`). */
    private readonly hashAt: number,
    /** Where `__` is, or -1. */
    private readonly sep: number,
    /** The three slashes of `ns/svc/proto/portName`. */
    private readonly slashes: readonly [number, number, number],
  ) {}

  get hash(): string {
    return this.full.slice(this.hashAt, this.hashAt + 8)
  }

  /** What the hash was computed over: everything after `HASH8-`. */
  get hashed(): string {
    return this.full.slice(this.hashAt + 9)
  }

  /** `ns/svc/proto/portName`. */
  get base(): string {
    return this.sep < 0
      ? this.full.slice(this.hashAt + 9)
      : this.full.slice(this.hashAt + 9, this.sep)
  }

  get namespace(): string {
    return this.full.slice(this.hashAt + 9, this.slashes[0])
  }

  get name(): string {
    return this.full.slice(this.slashes[0] + 1, this.slashes[1])
  }

  get protocol(): string {
    return this.full.slice(this.slashes[1] + 1, this.slashes[2])
  }

  get portName(): string {
    return this.sep < 0
      ? this.full.slice(this.slashes[2] + 1)
      : this.full.slice(this.slashes[2] + 1, this.sep)
  }

  /** `IP/PORT` of an endpoint or affinity name (IPv6 with `.` for `:`); null otherwise. */
  get endpointPart(): string | null {
    return this.sep < 0 ? null : this.full.slice(this.sep + 2)
  }

  get truncated(): boolean {
    return this.full.endsWith('...')
  }
}

function isBase32(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i)
    if (!((c >= 65 && c <= 90) || (c >= 50 && c <= 55))) return false
  }
  return true
}

export function parsePerServiceName(full: string): PerServiceName | null {
  const dash = full.indexOf('-')
  if (dash < 0) return null
  let prefix: ChainPrefix | undefined
  for (const p of PREFIXES) if (p.length === dash && full.startsWith(p)) prefix = p
  if (prefix === undefined || full.charCodeAt(dash + 9) !== 45) return null
  if (!isBase32(full, dash + 1, dash + 9)) return null
  const hashedAt = dash + 10
  // A name with "/" is always a per-service object (§3.6); kube-proxy's own names have none.
  if (full.indexOf('/', hashedAt) < 0) return null
  const sep = full.indexOf('__', hashedAt)
  const baseEnd = sep < 0 ? full.length : sep
  // ns/svc/proto/portName: exactly three slashes.
  const slash1 = full.indexOf('/', hashedAt)
  const slash2 = full.indexOf('/', slash1 + 1)
  const slash3 = slash2 < 0 ? -1 : full.indexOf('/', slash2 + 1)
  if (slash1 >= baseEnd || slash2 < 0 || slash2 >= baseEnd || slash3 < 0 || slash3 >= baseEnd)
    return null
  const slash4 = full.indexOf('/', slash3 + 1)
  if (slash4 >= 0 && slash4 < baseEnd) return null
  return new PerServiceName(full, prefix, dash + 1, sep, [slash1, slash2, slash3])
}
