import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import * as Flags from '@oclif/core/flags'
import {EVIDENCE_REFS_PER_PORT, type Finding, sortFindings} from '../analyze/findings.js'
import {
  FAIL_ON,
  type KernelCheck,
  type ProxyMode,
  failsOn,
  planMigration,
  sourceMode,
} from '../analyze/migrate.js'
import {KpCommand, type KpFlags, MODES, remoteNodeOf} from '../cli/base-command.js'
import {
  EXIT,
  EnvironmentError,
  InputError,
  KpError,
  UsageError,
  formatDiagnostic,
} from '../errors.js'
import {renderOptionsFromConfig, withConfigDefaults} from '../render/config-options.js'
import type {KubeProxyConfig, Mode, ProxyState, Severity} from '../model/types.js'
import type {VerifyResult} from '../analyze/verify/types.js'
import type {RenderedFile, RenderOptions, RenderResult, TextSink} from '../render/types.js'
import {blockWhenPipe, bufferedStreamOut} from '../cli/json-out.js'
import {type FleetInput, fleetFlags, fleetInputOf, fleetUsage} from '../cli/fleet/input.js'
import {remoteOptionsFrom} from '../cli/remote-flags.js'
import type {FleetMigrateNode, FleetMigrateResult} from '../analyze/fleet.js'
import {writeTextFile} from '../cli/text-file.js'
import {makeDirectory} from '../core/directory.js'
import {inputErrors} from '../core/completeness.js'
import {incompleteHeader, withIncompleteHeader} from '../cli/incomplete-header.js'
import {invalidRenderOption, type CheckedSetting} from '../render/setting-values.js'
import {
  KUBE_PROXY_VERSIONS,
  type KubeProxyVersion,
  NEWEST_KUBE_PROXY_VERSION,
  parseKubeProxyVersion,
} from '../kube-proxy/versions.js'

export interface MigrateResult {
  schemaVersion: 1
  kind: 'MigrateResult'
  /** The mode the node runs today; null when the input (cluster objects) does not say. */
  from: ProxyMode | null
  to: ProxyMode
  /** The kube-proxy release whose layout the rules are written in (`--kube-proxy-version`). */
  kubeProxyVersion: KubeProxyVersion
  /**
   * What kube-proxy would program in the target mode (the primary file); null with --check, and
   * when it was streamed to --out or stdout without --json (the result is not printed then).
   */
  text: string | null
  /** Every file the target mode needs, the primary one first; [] whenever `text` is null. */
  files: RenderedFile[]
  findings: Finding[]
  /**
   * false when an error kept part of the input from being read: then no rules are written
   * (`text` null, `files` []) unless --allow-incomplete, which writes them with a header comment.
   */
  complete: boolean
  /** `--verify`: the rendered rules replayed in kp's sandbox against kp explain's answer for the input (docs/verify.md). */
  verify?: VerifyResult
}

/** The flag that gives each checked render option (src/render/setting-values.ts). */
const FLAG_OF_SETTING: Record<CheckedSetting, string> = {
  podCIDRs: 'pod-cidr',
  localInterface: 'local-interface',
  masqueradeMark: 'masquerade-mark',
  nodePortAddresses: 'nodeport-addresses',
  nodeIPs: 'node-ip',
  serviceCIDRs: 'service-cidr',
  scheduler: 'scheduler',
}

/** What a target's renderer (src/render/<mode>/render.ts) offers. */
interface TargetRenderer {
  render: (state: ProxyState, opts: RenderOptions) => RenderResult
  /**
   * For a target whose output is one file: renders it piece by piece into `sink` and returns
   * the findings, so that --out is written while it is rendered and the text is never held whole.
   */
  stream?: (state: ProxyState, opts: RenderOptions, sink: TextSink) => Finding[]
}

/** Each target's renderer, loaded only when used. */
async function loadRenderer(mode: ProxyMode): Promise<TargetRenderer> {
  switch (mode) {
    case 'iptables':
      return {render: (await import('../render/iptables/render.js')).renderIptables}
    case 'nftables': {
      const nftables = await import('../render/nftables/render.js')
      return {render: nftables.renderNftables, stream: nftables.writeNftables}
    }
    case 'ipvs':
      return {render: (await import('../render/ipvs/render.js')).renderIpvs}
  }
}

export default class Migrate extends KpCommand {
  static override summary =
    'Show what kube-proxy would program in another mode, and what will behave differently'
  static override description = `Writes the rules of the target mode to stdout (or --out FILE) and the migration findings to stderr: every caveat of switching this node from its current mode, each with the services or addresses affected, where in the input it was seen, what to do, and a link to the upstream documentation. What the input cannot show is reported as a "cannot verify" finding naming what to collect.

With --check only the findings are printed, and the exit status is ${EXIT.found.code} when a finding is at or above --fail-on (default error), else ${EXIT.ok.code}.

Over a fleet (--fleet DIR, --all-nodes, -l SELECTOR; with --check only) every node is checked and each finding is listed once with the nodes it hits; the exit status is taken over all nodes, and is ${EXIT.environment.code} when some node could not be read (they are listed).`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --to nftables -f iptables-save.txt > kube-proxy.nft',
    '<%= config.bin %> <%= command.id %> --to nftables --check -f node-bundle/',
    '<%= config.bin %> <%= command.id %> --to nftables --check --fail-on warning --json',
    '<%= config.bin %> <%= command.id %> --to nftables --from ipvs -f cluster.yaml --node worker-1 --check',
    '<%= config.bin %> <%= command.id %> --to nftables --check --fleet /tmp/fleet    # nodes saved by kp collect --all-nodes',
    '<%= config.bin %> <%= command.id %> --to nftables --check --all-nodes --parallel 10 --fail-on warning -o yaml',
    '<%= config.bin %> <%= command.id %> --to nftables --check --node worker-1    # through kubectl',
  ]

  static override flags = {
    ...fleetFlags,
    to: Flags.option({options: MODES, required: true, description: 'The mode to migrate to.'})(),
    from: Flags.option({
      options: MODES,
      description: 'The mode the node runs today, when the input cannot say (cluster objects).',
    })(),
    check: Flags.boolean({
      description: 'Print the findings only; exit 1 when one is at or above --fail-on.',
    }),
    'fail-on': Flags.option({
      options: FAIL_ON,
      default: 'error' as const,
      description: 'With --check: the lowest severity that makes the exit status 1.',
    })(),
    out: Flags.string({description: 'Write the target rules to this file instead of stdout.'}),
    'allow-incomplete': Flags.boolean({
      description:
        'Write the target rules even when part of the input could not be read; they start with a comment naming the errors (exit 3 still).',
    }),
    'out-dir': Flags.string({
      description:
        'Write every file the target mode needs (for example both families) into this folder.',
      exclusive: ['out'],
    }),
    // Target settings: each overrides what the input shows; without either the renderer uses
    // kube-proxy's default and says so in a finding (src/render/node-settings.ts resolveNodeSettings).
    'pod-cidr': Flags.string({
      multiple: true,
      delimiter: ',',
      helpGroup: 'TARGET',
      description:
        'Pod (cluster) CIDR(s) for the local-traffic detector; repeat it or separate with commas (10.244.0.0/16,fd00:10:244::/56).',
    }),
    'local-detector': Flags.option({
      options: ['cidr', 'interface', 'interface-prefix', 'none'] as const,
      helpGroup: 'TARGET',
      description: 'How kube-proxy tells pod traffic apart.',
    })(),
    'local-interface': Flags.string({
      helpGroup: 'TARGET',
      description: 'Bridge interface or interface prefix for the interface detectors.',
    }),
    'node-ip': Flags.string({
      multiple: true,
      delimiter: ',',
      helpGroup: 'TARGET',
      description:
        "The node's own IP(s), for NodePorts and LoadBalancer source ranges; repeat it or separate with commas.",
    }),
    'nodeport-addresses': Flags.string({
      multiple: true,
      delimiter: ',',
      helpGroup: 'TARGET',
      description:
        'nodePortAddresses of the target configuration: CIDRs, addresses, or the keywords primary, localhost, all; repeated or separated with commas.',
    }),
    'service-cidr': Flags.string({
      multiple: true,
      delimiter: ',',
      helpGroup: 'TARGET',
      description:
        'Service CIDR(s), for the nftables rule that drops traffic to unallocated ClusterIPs; repeat it or separate with commas.',
    }),
    'masquerade-mark': Flags.string({
      helpGroup: 'TARGET',
      description: 'The masquerade mark as written in rules, e.g. 0x4000.',
    }),
    'masquerade-all': Flags.boolean({
      allowNo: true,
      helpGroup: 'TARGET',
      description: 'masqueradeAll of the target configuration.',
    }),
    'random-fully': Flags.boolean({
      allowNo: true,
      helpGroup: 'TARGET',
      description: 'Whether MASQUERADE uses --random-fully (iptables, ipvs).',
    }),
    'localhost-nodeports': Flags.boolean({
      allowNo: true,
      helpGroup: 'TARGET',
      description: 'iptables.localhostNodePorts of the target configuration.',
    }),
    'conntrack-invalid-drop': Flags.boolean({
      allowNo: true,
      helpGroup: 'TARGET',
      description:
        'Whether iptables mode drops conntrack INVALID packets (nf_conntrack_tcp_be_liberal=0).',
    }),
    'kube-proxy-version': Flags.string({
      helpGroup: 'TARGET',
      description: `The kube-proxy release whose layout to write (${KUBE_PROXY_VERSIONS.join(', ')}; default ${NEWEST_KUBE_PROXY_VERSION}, the newest kp knows).`,
    }),
    scheduler: Flags.string({
      helpGroup: 'TARGET',
      description: 'IPVS scheduler for services whose input does not show one (default rr).',
    }),
    'kube-proxy-config': Flags.string({
      description:
        "kube-proxy's configuration: `kubectl -n kube-system get configmap kube-proxy -o yaml`, its --config file, or its command line. It settles the target settings (a flag given wins) and the findings that depend on it.",
    }),
    verify: Flags.boolean({
      description:
        "As root: load the rendered rules into a sandbox of network namespaces kp makes, send real connections to every frontend, and compare what the kernel does with kp explain's answer for the input (as `kp verify --against`); each difference is listed under the finding that announces it. Exit 1 on a difference no finding announces.",
    }),
    'check-kernel': Flags.boolean({
      description:
        'With --to nftables, as root on the node: check the rendered rules with `nft --check` in a network namespace kp makes, so that kernel modules they need and the kernel lacks are found now.',
    }),
  }

  async run(): Promise<MigrateResult | FleetMigrateResult> {
    const {flags} = await this.parse(Migrate)
    const kubeProxyVersion = targetVersion(flags['kube-proxy-version'])
    const flagOptions: RenderOptions = {
      podCIDRs: flags['pod-cidr'],
      localDetector: flags['local-detector'],
      localInterface: flags['local-interface'],
      nodeIPs: flags['node-ip'],
      nodePortAddresses: flags['nodeport-addresses'],
      serviceCIDRs: flags['service-cidr'],
      masqueradeMark: flags['masquerade-mark'],
      masqueradeAll: flags['masquerade-all'],
      randomFully: flags['random-fully'],
      localhostNodePorts: flags['localhost-nodeports'],
      conntrackInvalidDrop: flags['conntrack-invalid-drop'],
      scheduler: flags.scheduler,
      kubeProxyVersion,
    }
    // Checked before anything is read: these values are written into the rules as they are.
    const bad = invalidRenderOption(flagOptions)
    if (bad)
      throw new UsageError(
        `--${FLAG_OF_SETTING[bad.setting]} ${JSON.stringify(bad.value)}: expected ${bad.expected}`,
        'USAGE_BAD_VALUE',
      )
    const to = flags.to as ProxyMode
    if (flags['check-kernel'] && to !== 'nftables')
      throw new UsageError(
        '--check-kernel checks nftables rules: use it with --to nftables',
        'USAGE_CHECK_KERNEL_TARGET',
      )
    if (flags.verify && to === 'ipvs')
      throw new UsageError(
        '--verify loads iptables or nftables rules: use it with --to nftables or --to iptables',
        'USAGE_VERIFY_TARGET',
      )
    const config = await this.loadKubeProxyConfig(flags['kube-proxy-config'], flags.verbose)
    const renderOptions = config
      ? withConfigDefaults(flagOptions, renderOptionsFromConfig(config))
      : flagOptions
    const fleet = fleetInputOf(flags, 'migrate')
    if (fleet !== null) {
      if (!flags.check || flags['check-kernel'] || flags.out || flags['out-dir'])
        throw fleetUsage(
          'over a fleet, migrate checks only: use --check (no --out, --out-dir, --check-kernel)',
          'migrate',
        )
      return this.checkFleet(fleet, flags, {to, renderOptions, config, kubeProxyVersion})
    }
    // Findings cite a service port's first few rules (their evidence); the rest need not be made.
    const state = await this.loadState(flags, {refsPerPort: EVIDENCE_REFS_PER_PORT})
    const from = sourceMode(state, {from: flags.from as ProxyMode | undefined, config})

    // The renderer also runs for --check: what it cannot express or had to guess is a finding too.
    const renderer = await loadRenderer(to)
    // Rules from part of the input would be loaded as if whole: none are written unless asked for.
    const errors = state.complete === false ? inputErrors(state) : null
    const refused = errors !== null && !flags['allow-incomplete'] && !flags.check
    const writes = !flags.check && !refused
    const header = errors !== null && writes ? incompleteHeader(errors) : null
    // The rules go out as they are rendered (never held whole) when only they are written: to --out,
    // or to stdout (`kp migrate --to nftables | nft -f -`). --check-kernel needs them whole.
    const streaming =
      writes &&
      !this.jsonEnabled() &&
      flags['out-dir'] === undefined &&
      !flags['check-kernel'] &&
      !flags.verify
    let rendered: RenderResult | null = null
    let renderFindings: Finding[]
    if (streaming && renderer.stream) {
      const stream = renderer.stream
      const render = (sink: TextSink) => {
        if (header !== null) sink(header)
        return stream(state, renderOptions, sink)
      }
      renderFindings =
        flags.out === undefined ? streamToStdout(render) : this.streamRules(flags.out, render)
    } else {
      rendered = renderer.render(state, renderOptions)
      renderFindings = rendered.findings
      if (header !== null && errors !== null) {
        const marked = withIncompleteHeader(rendered, errors)
        rendered = marked.rendered
        if (marked.uncommented.length > 0)
          this.warnLine(
            `${marked.uncommented.join(', ')}: no comment syntax, so no header says these rules come from incomplete input`,
          )
      }
    }
    let kernelCheck: KernelCheck | null = null
    if (flags['check-kernel']) {
      const remote = remoteNodeOf(flags)
      if (remote !== null)
        this.warnLine(
          `--check-kernel checks the kernel of this machine, not of node ${remote} (read through kubectl)`,
        )
      const {checkKernel} = await import('../live/kernel-check.js')
      kernelCheck = await checkKernel((rendered ?? renderer.render(state, renderOptions)).files)
    }
    const findings = planMigration(state, to, {
      from: from ?? undefined,
      sysctls: this.loadedFacts?.sysctls ?? null,
      target: {
        nodePortAddresses: renderOptions.nodePortAddresses,
        localhostNodePorts: renderOptions.localhostNodePorts,
        conntrackInvalidDrop: renderOptions.conntrackInvalidDrop,
      },
      config,
      kernelCheck,
      kubeProxyVersion,
    })
    const all = sortFindings([...findings, ...renderFindings])
    const result: MigrateResult = {
      schemaVersion: 1,
      kind: 'MigrateResult',
      from,
      to,
      kubeProxyVersion,
      text: rendered === null || !writes ? null : rendered.text,
      files: rendered === null || !writes ? [] : rendered.files,
      findings: all,
      complete: errors === null,
    }

    if (flags.verify) {
      const verified = await this.verifyRendered(
        state,
        to,
        rendered ?? renderer.render(state, renderOptions),
        all,
      )
      result.verify = verified
      if ((verified.attributed?.unexpected.length ?? 0) > 0) this.setExitStatus('found')
    }
    if (writes && rendered !== null) await this.writeRules(rendered, flags.out, flags['out-dir'])
    if (!this.jsonEnabled()) {
      const {formatFindings} = await import('../cli/views/migrate.js')
      // --check: the findings are the answer (stdout, so they can be paged or saved); otherwise
      // stdout carries the rules and the findings go to stderr.
      const stream = flags.check ? process.stdout : process.stderr
      const color = Boolean(stream.isTTY) && !flags['no-color'] && !process.env.NO_COLOR
      const {terminalWidth} = await import('../cli/wrap.js')
      const view = formatFindings(all, {color, width: terminalWidth(stream)})
      if (flags.check) this.log(view)
      else process.stderr.write(`${view}\n`)
    }
    if (refused)
      this.warnLine(
        'no rules written: part of the input could not be read (errors above); --allow-incomplete writes them with a header naming the errors',
      )
    if (flags.check && failsOn(all, flags['fail-on'])) this.setExitStatus('found')
    return result
  }

  /** --check over a fleet: each node checked as it is read; its findings kept, its state not. */
  private async checkFleet(
    input: FleetInput,
    flags: KpFlags<typeof Migrate>,
    opts: {
      to: ProxyMode
      renderOptions: RenderOptions
      config: KubeProxyConfig | null
      kubeProxyVersion: KubeProxyVersion
    },
  ): Promise<FleetMigrateResult> {
    const {fleetSources, readFleet, fleetExit, setFleetExit} = await import('../cli/fleet/read.js')
    const sources = await fleetSources(
      input,
      {
        mode: flags.mode as Mode | undefined,
        cluster: flags.cluster,
        refsPerPort: EVIDENCE_REFS_PER_PORT,
      },
      remoteOptionsFrom(flags),
    )
    const renderer = await loadRenderer(opts.to)
    const {to, renderOptions, config, kubeProxyVersion} = opts
    const fleet = await readFleet(
      sources,
      {parallel: flags.parallel, nodeTimeout: flags['node-timeout'], verbose: flags.verbose},
      (_node, {state, facts}) => {
        const from = sourceMode(state, {from: flags.from as ProxyMode | undefined, config})
        const findings = planMigration(state, to, {
          from: from ?? undefined,
          sysctls: facts?.sysctls ?? null,
          target: {
            nodePortAddresses: renderOptions.nodePortAddresses,
            localhostNodePorts: renderOptions.localhostNodePorts,
            conntrackInvalidDrop: renderOptions.conntrackInvalidDrop,
          },
          config,
          kernelCheck: null,
          kubeProxyVersion,
        })
        return {from, findings: [...findings, ...renderer.render(state, renderOptions).findings]}
      },
    )
    const {mergeFindings} = await import('../analyze/fleet.js')
    const byNode = new Map(fleet.answers.map((a) => [a.node, a.value]))
    const nodes: FleetMigrateNode[] = fleet.nodes.map((n) => {
      const answer = byNode.get(n.name)
      const count = (s: Severity) => answer?.findings.filter((f) => f.severity === s).length ?? 0
      return {
        ...n,
        from: answer?.from ?? null,
        counts: {error: count('error'), warning: count('warning'), info: count('info')},
      }
    })
    const result: FleetMigrateResult = {
      schemaVersion: 1,
      kind: 'FleetMigrateResult',
      to,
      kubeProxyVersion,
      failOn: flags['fail-on'],
      nodes,
      findings: mergeFindings(
        fleet.answers.map((a) => ({node: a.node, findings: a.value.findings})),
      ),
    }
    if (!this.jsonEnabled()) {
      const {renderFleetMigrate} = await import('../cli/views/fleet.js')
      const {outputStyle} = await import('../cli/views/style.js')
      const {terminalWidth} = await import('../cli/wrap.js')
      this.log(
        renderFleetMigrate(
          result,
          outputStyle(Boolean(flags['no-color'])),
          terminalWidth(process.stdout),
        ),
      )
    }
    const found = fleet.answers.some((a) => failsOn(a.value.findings, flags['fail-on']))
    setFleetExit(fleetExit(fleet.nodes, found))
    return result
  }

  /** --verify: the rendered rules through kp verify's sandbox, held to explain's answer for the input. */
  private async verifyRendered(
    state: ProxyState,
    to: ProxyMode,
    rendered: RenderResult,
    findings: Finding[],
  ): Promise<VerifyResult> {
    const {planVerify} = await import('../analyze/verify/plan.js')
    const {runVerify} = await import('../live/verify/run.js')
    const text = rendered.files[0]?.text ?? rendered.text
    // iptables: one file per family (ip6tables-restore is a separate program), both loaded.
    const ofFamily = (family: 'IPv4' | 'IPv6') =>
      rendered.files.find((f) => f.family === family)?.text
    const {kernelHasSctp} = await import('../live/verify/sandbox.js')
    const result = await runVerify({
      plan: planVerify(state, {probes: 100, kernelSctp: kernelHasSctp()}),
      rules:
        to === 'nftables'
          ? {kind: 'nft', text}
          : {kind: 'iptables', text: ofFamily('IPv4') ?? '', text6: ofFamily('IPv6')},
      mode: to,
    })
    const {attributeDifferences} = await import('../analyze/verify/attribute.js')
    result.attributed = attributeDifferences(result, findings)
    if (!this.jsonEnabled()) {
      const {renderVerify} = await import('../cli/views/verify.js')
      const {outputStyle} = await import('../cli/views/style.js')
      process.stderr.write(`${renderVerify(result, outputStyle(false, process.stderr))}\n`)
    }
    return result
  }

  /** --kube-proxy-config: its warnings on stderr; one it cannot read ends the run (exit 3). */
  private async loadKubeProxyConfig(
    path: string | undefined,
    verbose: boolean | undefined,
  ): Promise<KubeProxyConfig | null> {
    if (path === undefined) return null
    const {loadKubeProxyConfig} = await import('../readers/kube-proxy-config/load.js')
    const read = await loadKubeProxyConfig(path)
    this.reportDiagnostics(read.diagnostics, Boolean(verbose))
    const error = read.diagnostics.find((d) => d.severity === 'error')
    if (error || read.config === null)
      throw new InputError(
        error ? formatDiagnostic(error) : `${path}:1: no kube-proxy configuration`,
        error?.code ?? 'KPCONF_NOT_CONFIG',
        [],
        read.diagnostics,
      )
    return read.config
  }

  /** Writes the target rules to --out while they are rendered; returns the renderer's findings. */
  private streamRules(out: string, render: (sink: TextSink) => Finding[]): Finding[] {
    try {
      return writeTextFile(out, render)
    } catch (error) {
      throw outputError(out, error)
    }
  }

  private async writeRules(
    rendered: RenderResult,
    out: string | undefined,
    outDir: string | undefined,
  ): Promise<void> {
    try {
      if (outDir) {
        await makeDirectory(outDir)
        for (const f of rendered.files) await writeFile(join(outDir, f.name), f.text)
        return
      }
      if (out) await writeFile(out, rendered.text)
      else if (!this.jsonEnabled()) this.log(rendered.text)
    } catch (error) {
      throw outputError(outDir ?? out, error)
    }
    const others = rendered.files.slice(1)
    if (others.length > 0 && !this.jsonEnabled()) {
      this.warnLine(
        `the target needs ${others.length} more file(s) (${others.map((f) => f.name).join(', ')}); use --out-dir DIR to write them all, or --json`,
      )
    }
  }
}

/** `--kube-proxy-version`: a release kp knows the layout of, else a usage error naming them. */
function targetVersion(text: string | undefined): KubeProxyVersion {
  if (text === undefined) return NEWEST_KUBE_PROXY_VERSION
  const version = parseKubeProxyVersion(text)
  if (version === null)
    throw new UsageError(
      `--kube-proxy-version ${JSON.stringify(text)}: kp knows the layouts of kube-proxy ${KUBE_PROXY_VERSIONS.join(', ')}`,
      'USAGE_BAD_VALUE',
    )
  return version
}

/**
 * Writes the target rules to stdout while they are rendered, then the newline `this.log` ends the
 * text with, so a large script is never held whole.
 */
function streamToStdout(render: (sink: TextSink) => Finding[]): Finding[] {
  blockWhenPipe(process.stdout)
  const out = bufferedStreamOut(process.stdout)
  const findings = render((piece) => out.text(piece))
  out.end()
  process.stdout.write('\n')
  return findings
}

/** A failure to write the output: exit 4 (OUTPUT_UNWRITABLE), unless it already is a kp error. */
function outputError(target: string | undefined, error: unknown): KpError {
  if (error instanceof KpError) return error
  return new EnvironmentError(
    `cannot write ${target}: ${(error as Error).message}`,
    'OUTPUT_UNWRITABLE',
  )
}
