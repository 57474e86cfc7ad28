/**
 * What every migration check reads: the state, the direction, and the node facts that are not
 * part of the model (sysctls from a bundle or live collection). Plus the small helpers the
 * checks share to name services, addresses and evidence the same way.
 */
import {joinHostPort} from '../../core/address.js'
import type {Finding} from '../findings.js'
import {displayName, uniqueSourceRefs} from '../../core/state.js'
import type {Frontend, ProxyState, ServicePort, SourceRef} from '../../model/types.js'
import type {KubeProxyVersion} from '../../kube-proxy/versions.js'

export type ProxyMode = 'iptables' | 'ipvs' | 'nftables'

/** Settings the operator already chose for the target mode (kp migrate flags); a caveat they settle is not reported. */
export interface TargetSettings {
  nodePortAddresses?: string[]
  localhostNodePorts?: boolean
  conntrackInvalidDrop?: boolean
}

export interface MigrationContext {
  state: ProxyState
  /** The mode the node runs today; null when the input does not say (cluster objects without --from). */
  from: ProxyMode | null
  to: ProxyMode
  /** sysctls from a bundle or live collection (BundleFacts.sysctls); null when the input has none. */
  sysctls: Record<string, string> | null
  target: TargetSettings
  /** The kube-proxy release whose layout the target is rendered in (`--kube-proxy-version`). */
  kubeProxyVersion: KubeProxyVersion
}

export type Check = (ctx: MigrationContext) => Finding[]

/** Upstream pages the findings point to (docs/ipvs-layouts.md, "Source" of each caveat). */
export const DOCS = {
  virtualIps: 'https://kubernetes.io/docs/reference/networking/virtual-ips/',
  migrateToNftables:
    'https://kubernetes.io/docs/reference/networking/virtual-ips/#migrating-from-iptables-mode-to-nftables',
  trafficPolicies: 'https://kubernetes.io/docs/reference/networking/virtual-ips/#traffic-policies',
  sessionAffinity: 'https://kubernetes.io/docs/reference/networking/virtual-ips/#session-affinity',
  nftablesBlog: 'https://kubernetes.io/blog/2025/02/28/nftables-kube-proxy/',
  ipvsDeprecation: 'https://github.com/kubernetes/enhancements/issues/5495',
  kubeProxyConfig: 'https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/',
  platformCleanup:
    'https://github.com/kubernetes/kubernetes/blob/master/cmd/kube-proxy/app/server_linux.go',
  localFallback: 'https://github.com/kubernetes/kubernetes/pull/97081',
  affinityTemplates: 'https://github.com/kubernetes/kubernetes/issues/89358',
  vipAllPorts: 'https://github.com/kubernetes/kubernetes/issues/72236',
  gracefulTermination: 'https://github.com/kubernetes/kubernetes/issues/92019',
  metallbStrictArp: 'https://metallb.universe.tf/installation/#preparation',
  firewallForward: 'https://github.com/kubernetes/kubernetes/issues/98465',
} as const

export function finding(f: Finding): Finding {
  return {
    ...f,
    services: unique(f.services),
    addresses: unique(f.addresses),
    evidence: uniqueSourceRefs(f.evidence),
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)]
}

/**
 * Where a service port was seen. The first position is enough to find it in the input;
 * listing every rule of every service would bury the evidence that matters.
 */
export function serviceEvidence(sps: ServicePort[]): SourceRef[] {
  return sps.flatMap((sp) => sp.rules.slice(0, 1))
}

export function serviceNames(sps: ServicePort[]): string[] {
  return sps.map(displayName)
}

export function frontendAddress(f: Frontend): string {
  return joinHostPort(f.ip ?? '*', f.port)
}

export const isExternal = (f: Frontend): boolean =>
  f.type === 'ExternalIP' || f.type === 'LoadBalancer' || f.type === 'External'
export const isNodePort = (f: Frontend): boolean => f.type === 'NodePort'

/** Reachable from outside the cluster network: a NodePort, an externalIP or a LoadBalancer IP. */
export function externallyAccessible(sp: ServicePort): boolean {
  return sp.frontends.some((f) => isExternal(f) || isNodePort(f))
}

/**
 * `major.minor[.patch]` from a version string such as "5.10.0-23-amd64" or "1.0.6"; null when
 * there is none. Compared numerically, never as text ("5.9" < "5.13").
 */
export function parseVersion(text: string | null): number[] | null {
  if (text === null) return null
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text)
  if (!m) return null
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)]
}

export function versionBelow(v: number[], min: readonly number[]): boolean {
  for (let i = 0; i < min.length; i++) {
    const a = v[i] ?? 0
    const b = min[i] ?? 0
    if (a !== b) return a < b
  }
  return false
}

export function sysctl(ctx: MigrationContext, name: string): string | null {
  return ctx.sysctls?.[name]?.trim() ?? null
}

export const from = (ctx: MigrationContext, ...modes: ProxyMode[]): boolean =>
  ctx.from !== null && modes.includes(ctx.from)
