/**
 * The generations of kube-proxy's nftables layout, and what in a dump tells them apart
 * (docs/kube-proxy-layouts.md §3.10). Each sign was introduced by one release or removed by one;
 * a dump's layout is the range of releases every sign it shows agrees with, and signs that no
 * release writes together mean the dump mixes generations (an upgrade half done, stale chains).
 */
import {KUBE_PROXY_VERSIONS, type KubeProxyVersion} from './versions.js'

export type NftLayoutSign =
  | 'mark-for-masquerade'
  | 'endpoint-chain-per-endpoint'
  | 'hairpin-connections'
  | 'services-masquerade-mark'
  | 'inline-numgen-dnat'
  | 'single-endpoint-numgen'
  | 'single-endpoint-dnat'
  | 'single-endpoint-addr-port-dnat'
  | 'localhost-nodeport-reject'

interface SignRange {
  /** The first release that writes it; null: every release before `until` does. */
  since: KubeProxyVersion | null
  /** The first release that no longer writes it; null: still written by the newest. */
  until: KubeProxyVersion | null
  what: string
}

export const NFT_LAYOUT_SIGNS: Record<NftLayoutSign, SignRange> = {
  'mark-for-masquerade': {since: null, until: '1.36', what: 'the mark-for-masquerade chain'},
  'endpoint-chain-per-endpoint': {
    since: null,
    until: '1.36',
    what: 'endpoint chains for a service without session affinity',
  },
  'hairpin-connections': {since: '1.36', until: null, what: 'the hairpin-connections set'},
  'services-masquerade-mark': {
    since: '1.36',
    until: null,
    what: 'the ClusterIP masquerade mark set in the services chain',
  },
  'inline-numgen-dnat': {
    since: '1.36',
    until: null,
    what: 'dnat to numgen … map in service chains',
  },
  // 1.36 picks even a single endpoint through `numgen random mod 1 map`; 1.37 DNATs it directly.
  'single-endpoint-numgen': {since: '1.36', until: '1.37', what: 'numgen random mod 1 map'},
  'single-endpoint-dnat': {
    since: '1.37',
    until: null,
    what: 'a service chain that DNATs its single endpoint directly',
  },
  // PR #140723's form, replaced a week later by `dnat to IP:PORT` (PR #140960): 1.37 pre-releases.
  'single-endpoint-addr-port-dnat': {
    since: '1.37',
    until: null,
    what: 'dnat ip addr . port to IP . PORT (a 1.37 pre-release)',
  },
  'localhost-nodeport-reject': {
    since: '1.37',
    until: null,
    what: 'the localhost-nodeport-reject-ports map',
  },
}

export interface NftLayout {
  /** Labels of the layouts seen, e.g. ["1.36+"]; two or more when the dump mixes generations. */
  labels: string[]
  mixed: boolean
  /** When mixed: the signs of the older and of the newer generation, for the warning. */
  older: NftLayoutSign[]
  newer: NftLayoutSign[]
}

const rank = (v: KubeProxyVersion): number => KUBE_PROXY_VERSIONS.indexOf(v)

/** "1.36+", "1.36", "before 1.36", "1.36 to 1.37": the releases `[since, until)` write. */
export function layoutLabel(
  since: KubeProxyVersion | null,
  until: KubeProxyVersion | null,
): string {
  if (since === null && until === null) return 'any'
  if (since === null) return `before ${until}`
  if (until === null) return `${since}+`
  const last = KUBE_PROXY_VERSIONS[rank(until) - 1]!
  return last === since ? since : `${since} to ${last}`
}

/** The layout the signs of one dump agree on; no labels when none was seen. */
export function nftLayoutOf(signs: ReadonlySet<NftLayoutSign>): NftLayout {
  let since: KubeProxyVersion | null = null
  let until: KubeProxyVersion | null = null
  for (const s of signs) {
    const r = NFT_LAYOUT_SIGNS[s]
    if (r.since !== null && (since === null || rank(r.since) > rank(since))) since = r.since
    if (r.until !== null && (until === null || rank(r.until) < rank(until))) until = r.until
  }
  if (signs.size === 0) return {labels: [], mixed: false, older: [], newer: []}
  if (since === null || until === null || rank(since) < rank(until))
    return {labels: [layoutLabel(since, until)], mixed: false, older: [], newer: []}
  // No release writes both: the signs a release up to `since` stopped writing are the older
  // generation; the newer are those first written once the older ones were gone (signs every
  // generation writes are in neither).
  const older = [...signs].filter((s) => {
    const u = NFT_LAYOUT_SIGNS[s].until
    return u !== null && rank(u) <= rank(since)
  })
  const gone = Math.min(...older.map((s) => rank(NFT_LAYOUT_SIGNS[s].until!)))
  const newer = [...signs].filter((s) => {
    const v = NFT_LAYOUT_SIGNS[s].since
    return v !== null && rank(v) >= gone
  })
  const range = (list: NftLayoutSign[]): string => {
    let a: KubeProxyVersion | null = null
    let b: KubeProxyVersion | null = null
    for (const s of list) {
      const r = NFT_LAYOUT_SIGNS[s]
      if (r.since !== null && (a === null || rank(r.since) > rank(a))) a = r.since
      if (r.until !== null && (b === null || rank(r.until) < rank(b))) b = r.until
    }
    return layoutLabel(a, b)
  }
  return {labels: [...new Set([range(older), range(newer)])], mixed: true, older, newer}
}

/** What a renderer writes differently for one release (§3.10); the one place the versions differ. */
export interface NftRenderChoices {
  /** 1.36+: no mark-for-masquerade chain; rules set the mark themselves. */
  inlineMasquerade: boolean
  /** 1.36+: the hairpin-connections set drives masquerading of a pod reaching itself. */
  hairpinSet: boolean
  /** 1.36+: service chains DNAT through `numgen … map`; endpoint chains only for affinity. */
  inlineDnat: boolean
  /** 1.37+: a single endpoint is DNATed directly (`dnat to IP:PORT`), not through `mod 1 map`. */
  singleEndpointDirect: boolean
  /** 1.37+: element comments cut at NFT_COMMENT_MAX_BYTES. */
  cutsComments: boolean
}

export function nftRenderChoices(version: KubeProxyVersion): NftRenderChoices {
  const since = (v: KubeProxyVersion): boolean => rank(version) >= rank(v)
  return {
    inlineMasquerade: since('1.36'),
    hairpinSet: since('1.36'),
    inlineDnat: since('1.36'),
    singleEndpointDirect: since('1.37'),
    cutsComments: since('1.37'),
  }
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, never inside a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text
  let out = ''
  let bytes = 0
  for (const ch of text) {
    const n = Buffer.byteLength(ch)
    if (bytes + n > maxBytes) break
    out += ch
    bytes += n
  }
  return out
}
