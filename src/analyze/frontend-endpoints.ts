/**
 * A frontend's own endpoints (`Frontend.endpoints`, docs/model.md): present only when the IPVS
 * virtual servers of one service port disagree (kubernetes #89923). explain, list -o wide, diff
 * and migrate all ask the same question of them: which endpoints does this frontend lack, and
 * which has it alone, against its service port's.
 */
import type {Endpoint, Frontend, ServicePort} from '../model/types.js'
import {endpointAddress} from './addresses.js'

export interface OwnEndpoints {
  endpoints: Endpoint[]
  /** The service port's endpoints this frontend does not have, as `ip:port`. */
  missing: string[]
  /** This frontend's endpoints the service port's list does not have, as `ip:port`. */
  extra: string[]
}

/** null when the frontend has no endpoints of its own: it uses the service port's. */
export function ownEndpoints(sp: ServicePort, fe: Frontend): OwnEndpoints | null {
  if (fe.endpoints === undefined) return null
  const mine = new Set(fe.endpoints.map(endpointAddress))
  const all = new Set(sp.endpoints.map(endpointAddress))
  return {
    endpoints: fe.endpoints,
    missing: [...all].filter((k) => !mine.has(k)),
    extra: [...mine].filter((k) => !all.has(k)),
  }
}

/** `lacks 10.244.3.3:8080; alone has 10.244.9.9:80`, or `other weights` when only weights differ. */
export function ownEndpointsDifference(own: OwnEndpoints): string {
  const parts: string[] = []
  if (own.missing.length > 0) parts.push(`lacks ${own.missing.join(', ')}`)
  if (own.extra.length > 0) parts.push(`alone has ${own.extra.join(', ')}`)
  return parts.length > 0 ? parts.join('; ') : 'other weights'
}

/** Whether any frontend of the service port has endpoints of its own. */
export function frontendsDisagree(sp: ServicePort): boolean {
  return sp.frontends.some((fe) => fe.endpoints !== undefined)
}
