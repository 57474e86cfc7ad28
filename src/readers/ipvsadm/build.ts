import {emptyState} from '../../core/state.js'
import type {ProxyState} from '../../model/types.js'
import type {ParsedSource, ReadOptions} from '../types.js'

// Placeholder until this builder lands.
export function buildIpvsState(_parsed: ParsedSource[], _opts: ReadOptions): ProxyState {
  return emptyState('ipvs')
}
