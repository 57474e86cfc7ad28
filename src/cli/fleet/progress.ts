/**
 * Progress of a fleet run on stderr: on a terminal one bar redrawn in place (failures printed
 * above it as they happen); into a pipe or file one plain line per node, which a CI log keeps.
 */
import type {FleetEvent} from '../../live/fleet/runner.js'
import {escapeControl} from '../escape.js'
import {shortError} from './short-error.js'

export interface FleetProgress {
  onEvent: (e: FleetEvent) => void
  /** Clears the bar (a terminal) so the summary starts on a clean line. */
  end: () => void
}

const BAR_WIDTH = 24

export function fleetProgress(
  stream: NodeJS.WriteStream,
  verb: string,
  opts: {quiet?: boolean} = {},
): FleetProgress {
  if (opts.quiet) return {onEvent: () => {}, end: () => {}}
  if (!stream.isTTY) {
    return {
      onEvent: (e) => {
        if (e.kind === 'start') return
        const what =
          e.kind === 'done' ? 'ok' : `failed: ${escapeControl(shortError(e.error ?? ''))}`
        stream.write(`kp: [${e.finished}/${e.total}] ${escapeControl(e.node)}: ${what}\n`)
      },
      end: () => {},
    }
  }
  const running = new Set<string>()
  let drawn = false
  const clear = () => {
    if (drawn) stream.write('\r\u001b[K')
    drawn = false
  }
  const draw = (e: FleetEvent) => {
    const filled = e.total === 0 ? BAR_WIDTH : Math.round((e.finished / e.total) * BAR_WIDTH)
    const bar = '#'.repeat(filled) + '.'.repeat(BAR_WIDTH - filled)
    const failed = e.failed > 0 ? `, ${e.failed} failed` : ''
    const now = [...running].slice(0, 3).map(escapeControl).join(' ')
    const line = `kp: ${verb} [${bar}] ${e.finished}/${e.total} nodes${failed}  ${now}`
    const width = stream.columns ?? 80
    clear()
    stream.write(line.length >= width ? line.slice(0, width - 1) : line)
    drawn = true
  }
  return {
    onEvent: (e) => {
      if (e.kind === 'start') running.add(e.node)
      else running.delete(e.node)
      if (e.kind === 'failed') {
        clear()
        stream.write(
          `kp: ${escapeControl(e.node)}: failed: ${escapeControl(shortError(e.error ?? ''))}\n`,
        )
      }
      draw(e)
    },
    end: clear,
  }
}
