/**
 * Frontends keyed as an IPVS virtual server sees them, so the IPVS reader can find which service
 * port of the cluster objects a virtual server belongs to.
 */
import {parseIpSloppy} from '../../core/address.js'
import {pushTo} from '../../core/arrays.js'
import type {Frontend, Protocol, ServicePort} from '../../model/types.js'

/**
 * The key of a frontend as an IPVS virtual server sees it: `address|port|protocol`. A NodePort
 * frontend (ip null) is keyed with `*`: a NodePort VS on any node address, `nodeIP:nodePort`,
 * matches `frontendKey(null, nodePort, protocol)`.
 */
export function frontendKey(ip: string | null, port: number | null, protocol: Protocol): string {
  const addr = ip === null ? '*' : (parseIpSloppy(ip)?.text ?? ip)
  return `${addr}|${port ?? '?'}|${protocol}`
}

export interface FrontendMatch {
  service: ServicePort
  frontend: Frontend
}

/**
 * Indexes every frontend of the given service ports by frontendKey. Several service ports can
 * share a key (e.g. the same externalIP on two Services), so each key maps to a list.
 */
export function indexFrontends(services: ServicePort[]): Map<string, FrontendMatch[]> {
  const index = new Map<string, FrontendMatch[]>()
  for (const service of services) {
    for (const frontend of service.frontends) {
      pushTo(index, frontendKey(frontend.ip, frontend.port, service.protocol), {service, frontend})
    }
  }
  return index
}
