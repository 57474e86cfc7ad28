import type {BundleFacts} from '../readers/bundle.js'
import type {Mode} from '../model/types.js'
import type {SourceText} from '../readers/types.js'
import {EnvironmentError} from '../errors.js'

export interface LiveCollection {
  sources: SourceText[]
  facts: BundleFacts
  warnings: string[]
}

// Placeholder until live collection lands.
export async function collectLive(_opts: {mode?: Mode}): Promise<LiveCollection> {
  throw new EnvironmentError('live collection is not available yet; pass -f FILE', 'LIVE_UNAVAILABLE')
}
