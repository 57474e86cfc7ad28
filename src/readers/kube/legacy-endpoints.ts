/**
 * Legacy v1 Endpoints read as EndpointSlices, as the EndpointSliceMirroring controller would make
 * them, so the builder has one kind of input.
 */
import {parseIpSloppy} from '../../core/address.js'
import type {Family} from '../../model/types.js'
import type {KubeEndpointSlice, KubeLegacyEndpoints} from './parse.js'

/** Associates a slice with its Service (c.4); without it kube-proxy ignores the slice. */
export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name'

/**
 * Turns legacy v1 Endpoints into slices the way EndpointSliceMirroring would (c.2): one slice per
 * subset and family (a subset is one port set), addresses ready, notReadyAddresses not ready.
 */
export function slicesFromLegacy(ep: KubeLegacyEndpoints): KubeEndpointSlice[] {
  const slices: KubeEndpointSlice[] = []
  for (const [i, subset] of ep.subsets.entries()) {
    const byFamily = new Map<Family, KubeEndpointSlice>()
    const add = (addr: {ip: string; nodeName: string | null}, ready: boolean) => {
      // An address that is not an IP goes to an IPv4 slice, where the endpoint check reports it.
      const fam: Family = parseIpSloppy(addr.ip)?.family ?? 'IPv4'
      let slice = byFamily.get(fam)
      if (!slice) {
        slice = {
          ref: ep.ref,
          namespace: ep.namespace,
          name: `${ep.name} (Endpoints subset ${i}, ${fam})`,
          labels: {[LABEL_SERVICE_NAME]: ep.name},
          addressType: fam,
          ports: subset.ports,
          endpoints: [],
          synthesizedFrom: 'Endpoints',
        }
        byFamily.set(fam, slice)
        slices.push(slice)
      }
      slice.endpoints.push({
        addresses: [addr.ip],
        ready,
        serving: ready,
        terminating: false,
        nodeName: addr.nodeName,
        zone: null,
        zoneHints: [],
        nodeHints: [],
      })
    }
    for (const a of subset.addresses) add(a, true)
    for (const a of subset.notReadyAddresses) add(a, false)
  }
  return slices
}
