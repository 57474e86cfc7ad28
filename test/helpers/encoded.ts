/** B as `kp diff`'s worker thread sends it (src/readers/read-worker.ts): the ports as codes, the rest as it is. */
import {encodePorts, type EncodedState} from '../../src/core/port-codec.js'
import {serviceKey} from '../../src/core/state.js'
import type {ProxyState} from '../../src/model/types.js'

export function encodedState(state: ProxyState): EncodedState {
  return {state: {...state, services: []}, ports: encodePorts(state.services, serviceKey)}
}
