import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import type {DiffResult} from '../analyze/diff.js'
import type {FleetDiffResult} from '../analyze/fleet.js'
import {KpCommand, type KpFlags} from '../cli/base-command.js'
import {type FleetInput, fleetFlags, fleetInputOf, fleetUsage} from '../cli/fleet/input.js'
import {remoteOptionsFrom} from '../cli/remote-flags.js'
import {EXIT, UsageError} from '../errors.js'
import type {Mode, ServicePort} from '../model/types.js'

export default class Diff extends KpCommand {
  static override summary = 'Compare two states: do they proxy the same service ports the same way?'
  static override description = `Each of A and B is a dump file, "-" for stdin, a bundle folder from \`kp collect\`, a saved state, cluster objects (with --node), or "live" for this node. They may be of different modes. Service ports are matched by name (or by ClusterIP when one side has no names); chain names, counters, comments and rule order are ignored.

Over a fleet (--fleet DIR, --all-nodes, -l SELECTOR; then the only argument is an optional SERVICE, ns/name[:port]) it answers "which nodes are not like the others": for each service port the nodes that program it alike, the majority, and every other group with how it differs (a service only some nodes have is stale rules, or a node that missed an update). What differs by design between nodes (which endpoints are local, and so what a Local-policy frontend does) is not compared; with --cluster OBJECTS each node is also compared with the objects read from its own point of view, which checks that too.

Exit status: ${EXIT.ok.code} when the states are equal, ${EXIT.found.code} when they differ (as kubectl diff), ${EXIT.input.code} or ${EXIT.environment.code} on errors.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> before/iptables-save.txt after/nft-ruleset.txt',
    '<%= config.bin %> <%= command.id %> live cluster.yaml --node worker-1',
    '<%= config.bin %> <%= command.id %> node-a-bundle/ node-b-bundle/ --json',
    '<%= config.bin %> <%= command.id %> --fleet /tmp/fleet    # which nodes are not like the others',
    '<%= config.bin %> <%= command.id %> --fleet /tmp/fleet kube-system/kube-dns --cluster cluster.yaml',
    '<%= config.bin %> <%= command.id %> --all-nodes --parallel 10 --json',
    '<%= config.bin %> <%= command.id %> node/worker-1 node/worker-2    # two nodes of the cluster, through kubectl',
  ]

  // -f names one node's inputs; diff takes two, as arguments. Kept (hidden) only to give a clear error.
  static override baseFlags = {
    ...KpCommand.baseFlags,
    file: Flags.string({
      char: 'f',
      multiple: true,
      hidden: true,
      helpGroup: 'INPUT',
      description: 'Not used by diff: give A and B as arguments.',
    }),
  }

  static override flags = fleetFlags

  static override args = {
    a: Args.string({
      description:
        'The first state: FILE, -, a folder (a kp collect bundle, or several dumps of one node), live, or node/NAME (a node of the cluster, through kubectl). Over a fleet: the SERVICE to compare (optional).',
    }),
    b: Args.string({description: 'The second state: FILE, -, a folder, live, or node/NAME.'}),
  }

  async run(): Promise<DiffResult | FleetDiffResult> {
    const {args, flags} = await this.parse(Diff)
    const fleet = fleetInputOf(flags, 'diff')
    if (fleet !== null) {
      if (args.b !== undefined)
        throw fleetUsage('over a fleet, diff takes at most one argument, the SERVICE', 'diff')
      return this.diffFleet(fleet, args.a ?? null, flags)
    }
    if (flags.file && flags.file.length > 0)
      throw new UsageError(
        'kp diff takes its two inputs as arguments A and B, not -f',
        'USAGE_DIFF_FILE_FLAG',
        ['kp diff A.txt B.txt'],
      )
    if (args.a === undefined || args.b === undefined)
      throw new UsageError(
        `Missing ${args.a === undefined ? '2 required args: a, b' : '1 required arg: b'}`,
        'USAGE_INVALID',
        ['kp diff A B, or kp diff --fleet DIR [SERVICE]'],
      )
    if (args.a === '-' && args.b === '-')
      throw new UsageError('stdin (-) can be only one of A and B', 'USAGE_DIFF_STDIN_TWICE')
    const [a, b] = await this.loadStatePair(args.a, args.b, flags)
    const {diffStates} = await import('../analyze/diff.js')
    const result = diffStates(a, b)
    if (!this.jsonEnabled()) {
      const {formatDiff} = await import('../cli/views/diff.js')
      const {terminalWidth} = await import('../cli/wrap.js')
      const color = Boolean(process.stdout.isTTY) && !flags['no-color'] && !process.env.NO_COLOR
      this.log(formatDiff(result, {color, width: terminalWidth()}))
    }
    // Differences found in incomplete input still end with exit 3 (setExitStatus).
    if (!result.equal) this.setExitStatus('found')
    return result
  }

  /** Which nodes of a fleet are not like the others (and, with --cluster, not like the objects). */
  private async diffFleet(
    input: FleetInput,
    service: string | null,
    flags: KpFlags<typeof Diff>,
  ): Promise<FleetDiffResult> {
    const keep = serviceFilter(service)
    const {fleetSources, readFleet, fleetExit, setFleetExit} = await import('../cli/fleet/read.js')
    const sources = await fleetSources(
      input,
      {
        mode: flags.mode as Mode | undefined,
        cluster: flags.cluster,
        servicesOnly: true,
      },
      remoteOptionsFrom(flags),
    )
    const {oddOneOut, clusterDiff} = await import('../analyze/fleet.js')
    // The objects are read once, before any node: a bad path is one error, not one per node.
    const {loadInputs} = await import('../readers/load.js')
    const {readState} = await import('../readers/read-state.js')
    const objects = flags.cluster ? (await loadInputs(flags.cluster)).sources : null
    // Only the service ports asked about are kept: a large fleet is held as little as it can be.
    const fleet = await readFleet(
      sources,
      {parallel: flags.parallel, nodeTimeout: flags['node-timeout'], verbose: flags.verbose},
      async (node, {state}) => {
        state.services = state.services.filter(keep)
        if (objects === null) return {state, against: null}
        // The objects as kube-proxy on this node would program them (its local endpoints).
        const expected = await readState({sources: objects}, {node, servicesOnly: true})
        expected.services = expected.services.filter(keep)
        return {state, against: clusterDiff(node, expected, state)}
      },
    )
    const states = fleet.answers.map((a) => ({node: a.node, state: a.value.state}))
    const services = oddOneOut(states)
    const against = objects === null ? null : fleet.answers.map((a) => a.value.against!)
    const odd = new Set<string>()
    for (const s of services) for (const v of s.odd) for (const n of v.nodes) odd.add(n)
    for (const c of against ?? []) if (c.services.length > 0) odd.add(c.node)
    const result: FleetDiffResult = {
      schemaVersion: 1,
      kind: 'FleetDiffResult',
      service,
      nodes: fleet.nodes,
      services,
      oddNodes: [...odd].sort(),
      cluster: against,
      // Alike only when there was something to compare: two nodes read, and none failed.
      equal:
        odd.size === 0 && fleet.answers.length >= 2 && fleet.answers.length === fleet.nodes.length,
    }
    if (!this.jsonEnabled()) {
      const {renderFleetDiff} = await import('../cli/views/fleet.js')
      const {outputStyle} = await import('../cli/views/style.js')
      this.log(renderFleetDiff(result, outputStyle(Boolean(flags['no-color']))))
    }
    setFleetExit(fleetExit(fleet.nodes, !result.equal))
    return result
  }
}

/** SERVICE over a fleet: `ns/name` or `ns/name:port` (a port name or number); null keeps all. */
function serviceFilter(service: string | null): (sp: ServicePort) => boolean {
  if (service === null) return () => true
  const m = /^([^/\s]+)\/([^/:\s]+)(?::([^/\s]+))?$/.exec(service)
  if (!m)
    throw new UsageError(`"${service}" is not ns/name or ns/name:port`, 'USAGE_BAD_SERVICE', [
      'kp diff --fleet DIR kube-system/kube-dns',
    ])
  const [, namespace, name, port] = m
  return (sp) =>
    sp.namespace === namespace &&
    sp.name === name &&
    (port === undefined ||
      sp.portName === port ||
      sp.frontends.some((f) => f.type === 'ClusterIP' && String(f.port) === port))
}
