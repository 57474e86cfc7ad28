/**
 * The CLI half of `kp collect --all-nodes`: progress on stderr, Ctrl-C, the summary of what
 * failed and the exit status (4 when some nodes failed, 130 when stopped).
 */
import {EXIT} from '../../errors.js'
import type {NodeCollector} from '../../live/fleet/collect.js'
import type {FleetIndex} from '../../readers/fleet.js'
import {escapeControl} from '../escape.js'
import {interruptedError} from './read.js'
import {shortError} from './short-error.js'
import {fleetProgress} from './progress.js'

export interface FleetCollectFlags {
  out: string
  force?: boolean
  parallel: number
  'node-timeout': number
}

export async function runFleetCollect(
  collectors: NodeCollector[],
  flags: FleetCollectFlags,
  meta: {createdBy: string; selector: string | null; log: ((line: string) => void) | null},
): Promise<FleetIndex> {
  const {collectFleet} = await import('../../live/fleet/collect.js')
  const controller = new AbortController()
  const stop = () => controller.abort()
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  const progress = fleetProgress(process.stderr, 'collecting')
  let result
  try {
    result = await collectFleet(collectors, {
      outDir: flags.out,
      force: flags.force,
      parallel: flags.parallel,
      nodeTimeoutMs: flags['node-timeout'] * 1000,
      signal: controller.signal,
      onEvent: progress.onEvent,
      createdBy: meta.createdBy,
      selector: meta.selector,
    })
  } finally {
    progress.end()
    process.removeListener('SIGINT', stop)
    process.removeListener('SIGTERM', stop)
  }
  const {index} = result
  const saved = index.nodes.filter((n) => n.dir !== null)
  const failed = index.nodes.filter((n) => n.dir === null)
  if (result.interrupted) throw interruptedError(saved.length, index.nodes.length)
  if (meta.log) {
    meta.log(
      `Saved ${saved.length} of ${index.nodes.length} node bundle(s) and fleet.json into ${escapeControl(flags.out)}.`,
    )
    meta.log(`Read them with: kp migrate --to nftables --check --fleet ${escapeControl(flags.out)}`)
  }
  if (failed.length > 0) {
    process.stderr.write(
      `kp: ${failed.length} of ${index.nodes.length} node(s) not collected [LIVE_FLEET_PARTIAL]:\n`,
    )
    for (const n of failed)
      process.stderr.write(
        `kp:   ${escapeControl(n.name)}: ${escapeControl(shortError(n.error ?? ''))} [${n.code ?? ''}]\n`,
      )
    process.exitCode = EXIT.environment.code
  }
  return index
}
