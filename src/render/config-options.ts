/**
 * The render options kube-proxy's own configuration settles (kp migrate --kube-proxy-config), so
 * that the operator does not have to guess flags. A flag given on the command line wins; what the
 * configuration leaves unset stays unset, and the renderer uses kube-proxy's default and says so.
 */
import type {KubeProxyConfig} from '../model/types.js'
import type {RenderOptions} from './types.js'

export function renderOptionsFromConfig(config: KubeProxyConfig): RenderOptions {
  const o: RenderOptions = {}
  if (config.localDetector !== null) o.localDetector = config.localDetector
  if (config.localInterface !== null) o.localInterface = config.localInterface
  // NodeCIDR detects by the node's own pod CIDR (node.spec.podCIDRs), not by clusterCIDR.
  if (
    config.clusterCIDRs !== null &&
    config.clusterCIDRs.length > 0 &&
    config.detectLocalMode !== 'NodeCIDR'
  )
    o.podCIDRs = config.clusterCIDRs
  // An empty list is kube-proxy's default, which differs by mode: leave it to the renderer.
  if (config.nodePortAddresses !== null && config.nodePortAddresses.length > 0)
    o.nodePortAddresses = config.nodePortAddresses
  if (config.masqueradeBit !== null)
    o.masqueradeMark = `0x${(2 ** config.masqueradeBit).toString(16)}`
  if (config.masqueradeAll !== null) o.masqueradeAll = config.masqueradeAll
  if (config.localhostNodePorts !== null) o.localhostNodePorts = config.localhostNodePorts
  // kube-proxy leaves out its INVALID-drop rule when conntrack is told to be liberal.
  if (config.conntrackTcpBeLiberal === true) o.conntrackInvalidDrop = false
  if (config.ipvsScheduler !== null && config.ipvsScheduler !== '')
    o.scheduler = config.ipvsScheduler
  return o
}

/** `flags` over `fromConfig`: an option the command line gives wins. */
export function withConfigDefaults(flags: RenderOptions, fromConfig: RenderOptions): RenderOptions {
  const out: RenderOptions = {...fromConfig}
  for (const [k, v] of Object.entries(flags) as Array<[keyof RenderOptions, unknown]>)
    if (v !== undefined) (out as Record<string, unknown>)[k] = v
  return out
}
