/**
 * The fleet inputs shared by `kp migrate --check`, `kp diff` and `kp collect`: `--fleet DIR`
 * (offline), `--all-nodes` and `-l SELECTOR` (through the cluster), and how many nodes at once.
 */
import * as Flags from '@oclif/core/flags'
import {EnvironmentError, UsageError} from '../../errors.js'
import {DEFAULT_PARALLEL} from '../../live/fleet/defaults.js'

export const fleetFlags = {
  'all-nodes': Flags.boolean({
    helpGroup: 'FLEET',
    description: "Every node of the cluster (kubectl's current context), read through kubectl.",
  }),
  selector: Flags.string({
    char: 'l',
    helpGroup: 'FLEET',
    description: 'The nodes with these labels (as `kubectl get nodes -l`), read through kubectl.',
  }),
  fleet: Flags.string({
    helpGroup: 'FLEET',
    description: 'A folder written by `kp collect --all-nodes --out DIR`: one bundle per node.',
  }),
  parallel: Flags.integer({
    min: 1,
    default: DEFAULT_PARALLEL,
    helpGroup: 'FLEET',
    description: 'How many nodes are read (or collected) at once.',
  }),
  'node-timeout': Flags.integer({
    min: 1,
    default: 300,
    helpGroup: 'FLEET',
    description:
      'Seconds one node may take in all (each command within it still has --timeout); a node over it counts as failed.',
  }),
}

/** The flags of `kp collect` over a fleet: no --fleet (it writes one). */
export const fleetCollectFlags = {
  'all-nodes': fleetFlags['all-nodes'],
  selector: fleetFlags.selector,
  parallel: fleetFlags.parallel,
  'node-timeout': fleetFlags['node-timeout'],
}

export type FleetInput = {kind: 'dir'; dir: string} | {kind: 'cluster'; selector: string | null}

interface FleetFlagValues {
  'all-nodes'?: boolean
  selector?: string
  fleet?: string
  file?: string[]
  node?: string
}

/**
 * The fleet input the flags ask for, or null for none. Two fleet inputs, or one with -f or
 * --node (which name one node), are a usage error.
 */
export function fleetInputOf(flags: FleetFlagValues, command: string): FleetInput | null {
  const given = [
    flags['all-nodes'] ? '--all-nodes' : null,
    flags.selector !== undefined ? '-l' : null,
    flags.fleet !== undefined ? '--fleet' : null,
  ].filter((g): g is string => g !== null)
  if (given.length === 0) return null
  if (given.length > 1)
    throw fleetUsage(`${given.join(' and ')} each name a fleet: give one of them`, command)
  const single = [
    flags.file && flags.file.length > 0 ? '-f' : null,
    flags.node !== undefined ? '--node' : null,
  ].filter((g): g is string => g !== null)
  if (single.length > 0)
    throw fleetUsage(`${given[0]} reads many nodes; ${single.join(' and ')} name one`, command)
  if (flags.fleet !== undefined) return {kind: 'dir', dir: flags.fleet}
  return {kind: 'cluster', selector: flags.selector ?? null}
}

export function fleetUsage(message: string, command: string): UsageError {
  return new UsageError(`kp ${command}: ${message}`, 'USAGE_FLEET_INPUT', [
    `kp ${command} --fleet DIR, --all-nodes or -l SELECTOR; one node with -f FILE`,
  ])
}

/**
 * --all-nodes / -l before this build can reach a cluster: say so and what works instead.
 * (Reading nodes through kubectl comes with src/live/remote/.)
 */
export function clusterUnreachable(): EnvironmentError {
  return new EnvironmentError(
    'this kp cannot read nodes through the cluster yet (--all-nodes, -l)',
    'LIVE_NEEDS_CLUSTER',
    null,
    null,
    ['save each node with `kp collect --out DIR` and read them with --fleet'],
  )
}
