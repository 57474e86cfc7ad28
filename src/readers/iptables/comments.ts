/**
 * The comments kube-proxy writes on its iptables rules, across its generations (docs/kube-proxy-layouts.md §2.4,
 * §2.7), parsed by fixed prefixes and suffixes (no regex per line). A comment is where a
 * service port's name lives: `ns/name:port` (SPN), or `ns/name` for an unnamed port. Very old
 * releases wrote an unnamed port as `ns/name:` (an empty port after the colon); that spelling
 * is kept in `spn` as written because the chain hashes were computed over it.
 */

export type ServiceCommentKind =
  | 'cluster-ip' //                "C cluster IP"
  | 'external-ip' //               "C external IP"
  | 'loadbalancer-ip' //           "C loadbalancer IP" (KUBE-SERVICES and KUBE-FW)
  | 'no-endpoints' //              "C has no endpoints" (filter REJECT)
  | 'no-local-endpoints' //        "C has no local endpoints" (filter DROP; 1.24 SVL / old XLB -> KUBE-MARK-DROP)
  | 'health-check' //              "C health check node port"
  | 'firewall-drop' //             "C traffic not accepted by KUBE-FW-H"
  | 'ext-masquerade' //            "masquerade traffic for C external destinations"
  | 'ext-pod' //                   "pod traffic for C external destinations"; 1.24: "Redirect pods trying to reach external loadbalancer VIP to clusterIP" (no C)
  | 'ext-local-masquerade' //      "masquerade LOCAL traffic for C external destinations"; 1.24: "... for C LB IP"
  | 'ext-local-route' //           "route LOCAL traffic for C external destinations"; 1.24: "... for C LB IP to service chain"
  | 'fw-other' //                  "other traffic to C will be dropped by KUBE-PROXY-FIREWALL"
  | 'endpoint' //                  "C -> EP" (SVC/SVL -> SEP)
  | 'balancing' //                 "Balancing rule N for C" (old KUBE-XLB local dispatch)
  | 'bare' //                      "C" (NodePort rules, SEP rules, 1.24 SVC -> SEP, large-cluster-less old dumps)

export interface ServiceComment {
  kind: ServiceCommentKind
  /** The service port name as written; null only for the 1.24 "Redirect pods ..." comment. */
  spn: string | null
  /** `ip:port` / `[v6]:port` of an `endpoint` comment. */
  endpoint: string | null
}

const SUFFIXES: ReadonlyArray<[string, ServiceCommentKind]> = [
  [' cluster IP', 'cluster-ip'],
  [' external IP', 'external-ip'],
  [' loadbalancer IP', 'loadbalancer-ip'],
  [' has no local endpoints', 'no-local-endpoints'],
  [' has no endpoints', 'no-endpoints'],
  [' health check node port', 'health-check'],
]

const WRAPPED: ReadonlyArray<[string, string, ServiceCommentKind]> = [
  ['masquerade traffic for ', ' external destinations', 'ext-masquerade'],
  ['pod traffic for ', ' external destinations', 'ext-pod'],
  ['masquerade LOCAL traffic for ', ' external destinations', 'ext-local-masquerade'],
  ['masquerade LOCAL traffic for ', ' LB IP', 'ext-local-masquerade'],
  ['route LOCAL traffic for ', ' external destinations', 'ext-local-route'],
  ['route LOCAL traffic for ', ' LB IP to service chain', 'ext-local-route'],
  ['other traffic to ', ' will be dropped by KUBE-PROXY-FIREWALL', 'fw-other'],
]

const REDIRECT_PODS_1_24 = 'Redirect pods trying to reach external loadbalancer VIP to clusterIP'

/** `ns/name[:port]` with no blanks: what ServicePortName.String() can produce. */
export function looksLikeServicePortName(text: string): boolean {
  const slash = text.indexOf('/')
  if (slash <= 0 || slash === text.length - 1) return false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c <= 32 || c === 34 || c === 39) return false
  }
  return text.indexOf('/', slash + 1) < 0
}

function spnOrNull(
  spn: string,
  kind: ServiceCommentKind,
  endpoint: string | null = null,
): ServiceComment | null {
  return looksLikeServicePortName(spn) ? {kind, spn, endpoint} : null
}

export function parseServiceComment(comment: string | null): ServiceComment | null {
  if (comment === null) return null
  for (const [suffix, kind] of SUFFIXES) {
    if (comment.endsWith(suffix)) return spnOrNull(comment.slice(0, -suffix.length), kind)
  }
  const notAccepted = comment.indexOf(' traffic not accepted by ')
  if (notAccepted > 0) return spnOrNull(comment.slice(0, notAccepted), 'firewall-drop')
  for (const [prefix, suffix, kind] of WRAPPED) {
    if (
      comment.startsWith(prefix) &&
      comment.endsWith(suffix) &&
      comment.length > prefix.length + suffix.length
    ) {
      return spnOrNull(comment.slice(prefix.length, -suffix.length), kind)
    }
  }
  if (comment === REDIRECT_PODS_1_24) return {kind: 'ext-pod', spn: null, endpoint: null}
  if (comment.startsWith('Balancing rule ')) {
    const forAt = comment.indexOf(' for ')
    if (forAt > 0) return spnOrNull(comment.slice(forAt + 5), 'balancing')
  }
  const arrow = comment.indexOf(' -> ')
  if (arrow > 0) return spnOrNull(comment.slice(0, arrow), 'endpoint', comment.slice(arrow + 4))
  return spnOrNull(comment, 'bare')
}

export interface ServicePortNameParts {
  namespace: string
  name: string
  /** "" for an unnamed port (written `ns/name`, or `ns/name:` by very old releases). */
  portName: string
}

export function splitServicePortName(spn: string): ServicePortNameParts {
  const slash = spn.indexOf('/')
  const rest = spn.slice(slash + 1)
  const colon = rest.indexOf(':')
  return colon < 0
    ? {namespace: spn.slice(0, slash), name: rest, portName: ''}
    : {namespace: spn.slice(0, slash), name: rest.slice(0, colon), portName: rest.slice(colon + 1)}
}
