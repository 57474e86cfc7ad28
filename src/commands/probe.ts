import {readFile} from 'node:fs/promises'
import * as Args from '@oclif/core/args'
import {Command} from '@oclif/core/command'
import type {ProbeSpec} from '../live/verify/probe.js'

/**
 * `kp verify`'s probe program, run by kp itself inside a sandbox namespace (`ip netns exec NS kp
 * probe SPEC`): the same executable works in the npm build and the single executable, where no
 * `node` may be on PATH. Hidden: it is not meant to be typed.
 */
export default class Probe extends Command {
  static override hidden = true
  static override summary =
    'Internal: open the probe connections of kp verify (SPEC is a JSON file)'
  static override args = {spec: Args.string({required: true, description: 'the probes, as JSON'})}

  async run(): Promise<void> {
    const {args} = await this.parse(Probe)
    const spec = JSON.parse(await readFile(args.spec, 'utf8')) as {
      probes: ProbeSpec[]
      waitMs: number
      listen?: number[]
      listenUdp?: number[]
    }
    const {listen, runProbes} = await import('../live/verify/probe.js')
    if (spec.listen) {
      await listen(spec.listen, spec.listenUdp ?? [])
      this.log('ready')
      // Holds the listeners until kp verify stops this process.
      await new Promise(() => undefined)
    }
    this.log(JSON.stringify(await runProbes(spec.probes, spec.waitMs)))
  }
}
