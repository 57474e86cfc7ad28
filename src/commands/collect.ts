import * as Flags from '@oclif/core/flags'
import {KpCommand, type KpFlags} from '../cli/base-command.js'
import {clusterNodes, fleetCollectFlags, fleetUsage} from '../cli/fleet/input.js'
import {remoteOptionsFrom} from '../cli/remote-flags.js'
import type {FleetIndex} from '../readers/fleet.js'
import {escapeControl} from '../cli/escape.js'
import {EXIT, UsageError} from '../errors.js'
import type {Mode} from '../model/types.js'
import type {BundleManifest} from '../readers/bundle.js'
import {FORMAT_IDS} from '../readers/registry.js'

export default class Collect extends KpCommand {
  static override summary =
    "Save this node's kube-proxy state into a folder to read anywhere with -f"
  static override description = `Runs the same read-only commands kp reads live (iptables-save of both backends and families, nft -j list table ip|ip6 kube-proxy, ipvsadm -Sn and -Ln, ipset save, ip -j addr show kube-ipvs0) plus the kernel release (/proc/sys/kernel/osrelease), the tool versions and the sysctls that change how the rules behave, and writes their raw outputs with a manifest.json. \`kp list -f DIR\` (and every other command) then reads the folder as if it were this node. Leftovers of other modes are saved too, but not read.

A program that is missing or fails is recorded in the manifest; kp exits ${EXIT.environment.code} only when no ruleset at all could be saved (for example without root).

With --all-nodes or -l SELECTOR it collects every node (or those with the labels) through the cluster, --parallel at a time, into DIR/nodes/NAME with an index DIR/fleet.json; \`kp migrate --check --fleet DIR\` and \`kp diff --fleet DIR\` read it. Progress goes to stderr (a bar on a terminal, a line per node otherwise). A node that fails leaves no files; kp exits ${EXIT.environment.code} listing the failures when some failed. Ctrl-C stops the run: unfinished bundles are removed, finished ones kept and listed in fleet.json, and kp exits ${EXIT.interrupted.code}.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --out /tmp/node-a',
    '<%= config.bin %> <%= command.id %> --out /tmp/node-a --force --json',
    '<%= config.bin %> <%= command.id %> --node worker-1 --out /tmp/worker-1    # through kubectl, from your machine',
    '<%= config.bin %> <%= command.id %> --cleanup    # delete collector pods (--collector-pod) left behind',
    'tar czf node-a.tgz -C /tmp node-a    # attach to a ticket; read with: kp list -f node-a/',
    '<%= config.bin %> <%= command.id %> --all-nodes --out /tmp/fleet --parallel 10',
    '<%= config.bin %> <%= command.id %> -l node-role.kubernetes.io/worker --out /tmp/workers',
  ]

  // Collect reads a node, never files: of the shared input flags only --mode and --node (a node
  // of the cluster, through kubectl) apply. The others stay parseable (hidden) so that giving one
  // is a clear usage error, not "unknown flag".
  static override baseFlags = {
    ...KpCommand.baseFlags,
    file: Flags.string({char: 'f', multiple: true, hidden: true}),
    format: Flags.option({options: FORMAT_IDS, hidden: true})(),
    cluster: Flags.string({multiple: true, hidden: true}),
    node: Flags.string({
      helpGroup: 'INPUT',
      description:
        'Collect node NAME of the cluster through kubectl (its kube-proxy pod; see the CLUSTER flags) instead of this host.',
    }),
  }

  static override flags = {
    ...fleetCollectFlags,
    out: Flags.string({
      description:
        'The folder to write (created if missing; must be empty unless --force). Required but with --cleanup.',
    }),
    cleanup: Flags.boolean({
      description:
        'Delete the collector pods (--collector-pod) a killed kp left in the cluster, and exit.',
    }),
    force: Flags.boolean({
      description:
        'Write into a folder that already holds files (kp overwrites its own file names only).',
    }),
  }

  async run(): Promise<BundleManifest | FleetIndex | {removed: number}> {
    const {flags} = await this.parse(Collect)
    if (flags.cleanup) {
      const {cleanupRemote} = await import('../live/remote/index.js')
      const removed = await cleanupRemote(remoteOptionsFrom(flags))
      if (!this.jsonEnabled()) this.log(`Deleted ${removed} collector pod(s).`)
      return {removed}
    }
    if (flags.out === undefined)
      throw new UsageError(
        'Missing required flag --out (kp collect needs --out DIR)',
        'USAGE_COLLECT_INPUT',
        ['kp collect --out DIR, then kp list -f DIR'],
      )
    if (flags['all-nodes'] || flags.selector !== undefined)
      return this.collectFleet(flags, flags.out)
    const fileFlags = (['file', 'format', 'cluster'] as const).filter(
      (name) => flags[name] !== undefined,
    )
    if (fileFlags.length > 0) {
      throw new UsageError(
        `kp collect reads this node; --${fileFlags.join(', --')} does not apply`,
        'USAGE_COLLECT_INPUT',
        ['kp collect --out DIR, then kp list -f DIR'],
      )
    }
    const mode = flags.mode as Mode | undefined
    const createdBy = `kp/${this.config.version}`
    let manifest: BundleManifest
    if (flags.node !== undefined) {
      const {collectRemoteBundle} = await import('../live/remote/index.js')
      manifest = await collectRemoteBundle(
        {...remoteOptionsFrom(flags), mode},
        flags.node,
        flags.out,
        {
          force: flags.force,
          createdBy,
        },
      )
      const t = manifest.reachedThrough
      if (t && flags.verbose)
        process.stderr.write(
          `${escapeControl(
            `kp: reached node/${t.node} through ${t.kubectl} (${t.kubectlVersion ?? 'version unknown'}), ${t.collectorPod ? 'collector pod' : 'pod'} ${t.pod} container ${t.container}`,
          )}\n`,
        )
    } else {
      const {collectBundle} = await import('../live/collect-bundle.js')
      manifest = await collectBundle({
        outDir: flags.out,
        force: flags.force,
        mode,
        timeoutMs: flags.timeout * 1000,
        createdBy,
      })
    }
    for (const w of manifest.warnings) this.warnLine(w)
    if (!this.jsonEnabled()) {
      const saved = manifest.files.filter((f) => f.path !== null)
      this.log(
        `Saved ${saved.length} outputs and manifest.json into ${escapeControl(flags.out)} (mode: ${manifest.mode ?? 'none found'}).`,
      )
      for (const f of manifest.files) {
        const cmd = escapeControl(f.command.join(' '))
        const status =
          f.path === null
            ? `not saved: ${escapeControl(f.error ?? '')}`
            : f.error
              ? `failed: ${escapeControl(f.error)}`
              : f.read
                ? 'read by kp -f'
                : 'kept for reference'
        this.log(`  ${(f.path ?? '-').padEnd(28)} ${cmd.padEnd(36)} ${status}`)
      }
      this.log(`Read it anywhere with: kp list -f ${escapeControl(flags.out)}`)
    }
    return manifest
  }

  /** --all-nodes / -l: one bundle per node, then fleet.json; failures listed, Ctrl-C exits 130. */
  private async collectFleet(flags: KpFlags<typeof Collect>, out: string): Promise<FleetIndex> {
    if (flags['all-nodes'] && flags.selector !== undefined)
      throw fleetUsage('--all-nodes and -l each name a fleet: give one of them', 'collect')
    const single = (['node', 'file', 'format', 'cluster'] as const).filter(
      (name) => flags[name] !== undefined,
    )
    if (single.length > 0)
      throw fleetUsage(
        `--all-nodes and -l collect every node; --${single.join(', --')} does not apply`,
        'collect',
      )
    const remote = remoteOptionsFrom(flags)
    const selector = flags.selector ?? null
    const names = await clusterNodes(remote, selector)
    const {collectRemoteBundle, cleanupRemote} = await import('../live/remote/index.js')
    const createdBy = `kp/${this.config.version}`
    const collectors = names.map((name) => ({
      name,
      async collect(dir: string, signal: AbortSignal): Promise<void> {
        await collectRemoteBundle(
          {...remote, signal, mode: flags.mode as Mode | undefined},
          name,
          dir,
          {
            createdBy,
          },
        )
      },
    }))
    const {runFleetCollect} = await import('../cli/fleet/collect-run.js')
    // The fleet run stops on Ctrl-C itself: partial bundles removed, then every pod swept below.
    const {interruptHandledByCaller} = await import('../live/remote/collector.js')
    interruptHandledByCaller(true)
    try {
      return await runFleetCollect(
        collectors,
        {...flags, out},
        {
          createdBy,
          selector,
          log: this.jsonEnabled() ? null : (line) => this.log(line),
        },
      )
    } catch (error) {
      // Stopped: a pod whose create was under way when Ctrl-C came may have escaped its own
      // delete; sweep kp's collector pods (as --cleanup does) before exiting 130.
      if (remote.collectorPod && (error as {code?: string}).code === 'LIVE_INTERRUPTED')
        await cleanupRemote(remote).catch(() => 0)
      throw error
    } finally {
      interruptHandledByCaller(false)
    }
  }
}
