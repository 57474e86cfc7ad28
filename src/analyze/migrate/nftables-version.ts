/**
 * Caveats that depend on the kube-proxy release the node will run in nftables mode
 * (`--kube-proxy-version`; docs/kube-proxy-layouts.md §3.10).
 */
import {servicePortName} from '../../core/state.js'
import {NFT_COMMENT_MAX_BYTES} from '../../kube-proxy/nftables-names.js'
import {nftRenderChoices} from '../../kube-proxy/nftables-layouts.js'
import type {ServicePort} from '../../model/types.js'
import {type Check, finding, serviceEvidence, serviceNames} from './context.js'

const COMMENT_FIX = 'https://github.com/kubernetes/kubernetes/pull/139516'

/**
 * A service port whose `ns/name:port` is over 128 bytes: kube-proxy before 1.37 writes it whole
 * as an element comment, nft rejects the transaction, and every sync fails (kubernetes #139515).
 */
export const nftCommentTooLong: Check = (ctx) => {
  if (ctx.to !== 'nftables' || nftRenderChoices(ctx.kubeProxyVersion).cutsComments) return []
  const long: ServicePort[] = ctx.state.services.filter((sp) => {
    const spn = servicePortName(sp)
    return spn !== null && Buffer.byteLength(spn) > NFT_COMMENT_MAX_BYTES
  })
  if (long.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_NFT_COMMENT_TOO_LONG',
      severity: 'error',
      title: `${long.length} service port name(s) longer than ${NFT_COMMENT_MAX_BYTES} bytes break every nftables sync of kube-proxy ${ctx.kubeProxyVersion}`,
      message: `kube-proxy ${ctx.kubeProxyVersion} writes a service port's name (namespace/name:port) as an nftables element comment, and nft rejects comments over ${NFT_COMMENT_MAX_BYTES} bytes: the whole sync fails, so no Service (kube-dns included) works on the node. kube-proxy 1.37 cuts the comment. The rendered file cuts it too, so it loads, but it is not what kube-proxy ${ctx.kubeProxyVersion} would program.`,
      services: serviceNames(long),
      addresses: [],
      evidence: serviceEvidence(long),
      action:
        'Run kube-proxy 1.37 or newer in nftables mode, or shorten the namespace, Service or port names first.',
      docs: COMMENT_FIX,
    }),
  ]
}

export const nftablesVersionChecks: Check[] = [nftCommentTooLong]
