/**
 * The kube-proxy releases whose layouts kp knows. The nftables layout changed in 1.36 (inline
 * masquerade marks, hairpin-connections, no per-endpoint chains but for affinity) and in 1.37
 * (single-endpoint DNAT, element comments cut at 128 bytes); readers detect the generation and
 * renderers write the version asked for (docs/kube-proxy-layouts.md).
 */
export const KUBE_PROXY_VERSIONS = ['1.34', '1.35', '1.36', '1.37'] as const
export type KubeProxyVersion = (typeof KUBE_PROXY_VERSIONS)[number]

/** What a renderer writes when no version is asked for. */
export const NEWEST_KUBE_PROXY_VERSION: KubeProxyVersion = '1.37'

/** `1.36`, `v1.36`, `1.36.2`, `v1.37.0-rc.1` → the minor release; null when kp does not know it. */
export function parseKubeProxyVersion(text: string): KubeProxyVersion | null {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.-]+)?$/.exec(text.trim())
  if (m === null) return null
  const minor = `${Number(m[1])}.${Number(m[2])}`
  return (KUBE_PROXY_VERSIONS as readonly string[]).includes(minor)
    ? (minor as KubeProxyVersion)
    : null
}

/** Is `version` the release `min` or a later one? */
export function versionAtLeast(version: KubeProxyVersion, min: KubeProxyVersion): boolean {
  return KUBE_PROXY_VERSIONS.indexOf(version) >= KUBE_PROXY_VERSIONS.indexOf(min)
}
