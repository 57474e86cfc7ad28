/**
 * The fleet inputs shared by `kp migrate --check`, `kp diff` and `kp collect`: `--fleet DIR`
 * (offline), `--all-nodes` and `-l SELECTOR` (through the cluster), and how many nodes at once.
 */
import * as Flags from '@oclif/core/flags'
import {EnvironmentError, KpError, UsageError} from '../../errors.js'
import type {RemoteOptions} from '../../live/remote/index.js'
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
 * The nodes --all-nodes / -l name, listed through kubectl. A failure that is not already one of
 * kp's (exit 4 with kubectl's message) is said as LIVE_NEEDS_CLUSTER, never as a crash.
 */
export async function clusterNodes(
  remote: RemoteOptions,
  selector: string | null,
): Promise<string[]> {
  const {listNodes} = await import('../../live/remote/index.js')
  let names: string[]
  try {
    names = await listNodes(remote, selector ?? undefined)
  } catch (error) {
    if (error instanceof KpError) throw error
    throw new EnvironmentError(
      `cannot list the cluster's nodes: ${(error as Error).message}`,
      'LIVE_NEEDS_CLUSTER',
      null,
      null,
      [
        'check that `kubectl get nodes` works; or read nodes saved by `kp collect` with --fleet DIR',
      ],
    )
  }
  if (names.length === 0)
    throw new EnvironmentError(
      selector === null ? 'the cluster has no nodes' : `no node matches -l ${selector}`,
      'LIVE_NEEDS_CLUSTER',
    )
  return [...new Set(names)].sort()
}
