import {describe, expect, it} from 'vitest'
import {
  KUBE_PROXY_VERSIONS,
  NEWEST_KUBE_PROXY_VERSION,
  parseKubeProxyVersion,
  versionAtLeast,
} from '../../src/kube-proxy/versions.js'

describe('kube-proxy versions', () => {
  it('reads the spellings kubectl and release notes use', () => {
    expect(parseKubeProxyVersion('1.36')).toBe('1.36')
    expect(parseKubeProxyVersion('v1.37.2')).toBe('1.37')
    expect(parseKubeProxyVersion(' v1.35.0-rc.1 ')).toBe('1.35')
    expect(parseKubeProxyVersion('1.034')).toBe('1.34')
  })

  it('refuses versions kp does not know and text that is not a version', () => {
    expect(parseKubeProxyVersion('1.33')).toBeNull()
    expect(parseKubeProxyVersion('1.38')).toBeNull()
    expect(parseKubeProxyVersion('latest')).toBeNull()
    expect(parseKubeProxyVersion('1')).toBeNull()
  })

  it('orders releases', () => {
    expect(versionAtLeast('1.37', '1.36')).toBe(true)
    expect(versionAtLeast('1.36', '1.36')).toBe(true)
    expect(versionAtLeast('1.35', '1.36')).toBe(false)
    expect(KUBE_PROXY_VERSIONS.at(-1)).toBe(NEWEST_KUBE_PROXY_VERSION)
  })
})
