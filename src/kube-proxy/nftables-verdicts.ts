/**
 * What kube-proxy's nftables drops and rejects mean (pkg/proxy/nftables/proxier.go): the chain or
 * map a verdict comes from names the reason.
 */
import {
  CLUSTER_IPS_CHECK_CHAIN,
  FIREWALL_CHECK_CHAIN,
  NO_ENDPOINT_NODEPORTS_MAP,
  perServiceName,
  NO_ENDPOINT_SERVICES_MAP,
  REJECT_CHAIN,
} from './nftables-names.js'

/**
 * Why a kube-proxy nftables rule drops or rejects a new connection: `chain` is the chain the
 * verdict is in, `map` the verdict map whose element gave it (null when none); null when it is
 * not one of kube-proxy's.
 */
export function nftablesDropReason(
  chain: string,
  map: string | null,
  verdict: 'drop' | 'reject',
  source: string,
): string | null {
  if (chain === REJECT_CHAIN)
    return 'the service has no endpoints, so kube-proxy rejects new connections'
  if (map === NO_ENDPOINT_SERVICES_MAP || map === NO_ENDPOINT_NODEPORTS_MAP)
    return verdict === 'drop'
      ? 'externalTrafficPolicy=Local and no endpoint of this service runs on this node'
      : 'the service has no endpoints, so kube-proxy rejects new connections'
  if (chain.startsWith(perServiceName('firewall', '')) && chain !== FIREWALL_CHECK_CHAIN)
    return `source ${source} is outside the service's loadBalancerSourceRanges`
  if (chain === CLUSTER_IPS_CHECK_CHAIN)
    return verdict === 'reject'
      ? 'no service uses this port of the ClusterIP: nftables mode rejects it (cluster-ips-check)'
      : 'no service has this address in the service CIDR: nftables mode drops it (cluster-ips-check)'
  return null
}
