import * as Flags from '@oclif/core/flags'
import type {VerifyResult} from '../analyze/verify/types.js'
import {KpCommand} from '../cli/base-command.js'
import {InputError, UsageError} from '../errors.js'
import type {RulesToLoad} from '../live/verify/sandbox.js'
import type {ReadOptions, SourceText} from '../readers/types.js'

export default class Verify extends KpCommand {
  static override summary =
    "Replay real connections through the rules in a sandbox and compare with kp explain's answer"
  static override description =
    "kp builds network namespaces of its own (a node with the rules loaded, clients outside and inside the pod network, a sink that never answers), sends new connections to every frontend of every service port from each kind of client (outside, pod, the node itself, inside a loadBalancerSourceRanges range, a second node address, an endpoint reaching its own service), reads conntrack to see what the kernel did (DNAT target, masquerade, reject, drop), and compares it with what `kp explain` says: endpoints reached, their spread (chi-square, p < 1e-4, re-probed before a difference is reported), masquerade and session affinity. Needs root; the host's own namespace and rules are never touched. With --against, each difference of the other rules is listed under the migration finding (`kp migrate --check` to their mode) that announces it, or as unexpected. Exit 0: all agree, or every --against difference is announced; 1: a difference (with --against: an unexpected one); 4: the sandbox cannot be built."
  static override examples = [
    '<%= config.bin %> <%= command.id %> -f iptables-save.txt',
    '<%= config.bin %> <%= command.id %> -f ruleset.nft --probes 300',
    '<%= config.bin %> <%= command.id %> -f iptables-save.txt --iptables-backend legacy --json | jq .summary',
    '<%= config.bin %> <%= command.id %> -f iptables-save.txt --against kube-proxy.nft',
  ]
  static override flags = {
    probes: Flags.integer({
      description:
        'New connections per frontend and kind of client where the spread over several endpoints is tested (more: slower, stronger test).',
      default: 100,
      min: 100,
      max: 100_000,
    }),
    against: Flags.string({
      description:
        "Rules made elsewhere (by hand, by another tool, by `kp migrate`, by a newer kube-proxy) to send the same probes through, side by side; kp explain's answer for -f's rules is what both are held to.",
      multiple: true,
    }),
    'node-ip': Flags.string({
      description:
        "An IPv4 address the sandbox's node also holds (repeatable), e.g. a LoadBalancer IP a cloud routes to the node itself: probes to it expect what a connection to one of the node's own addresses gets.",
      multiple: true,
    }),
    'iptables-backend': Flags.option({
      options: ['legacy', 'nft'] as const,
      description:
        'Which iptables-restore loads iptables rules into the sandbox (default: the system one).',
    })(),
  }

  async run(): Promise<VerifyResult> {
    const {flags} = await this.parse(Verify)
    const parsed = ruleSources()
    const state = await this.loadState(flags, {onParsed: parsed.onParsed})
    const sources = parsed.texts(this.loadedSources)
    const rules = rulesOf(state.mode, sources, flags['iptables-backend'])
    const other = flags.against
      ? await this.otherRules(flags.against, flags['iptables-backend'])
      : null
    const {planVerify} = await import('../analyze/verify/plan.js')
    const {kernelHasSctp} = await import('../live/verify/sandbox.js')
    const nodeAddresses = (flags['node-ip'] ?? []).map((ip) => {
      if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(ip) || ip.split('.').some((o) => Number(o) > 255))
        throw new UsageError(
          `--node-ip ${JSON.stringify(ip)} is not an IPv4 address`,
          'USAGE_BAD_VALUE',
        )
      return ip
    })
    const plan = planVerify(state, {
      probes: flags.probes,
      kernelSctp: kernelHasSctp(),
      nodeAddresses,
    })
    const {runVerify} = await import('../live/verify/run.js')
    const tty = process.stderr.isTTY === true && !this.jsonEnabled()
    const progress = tty
      ? (label: string) => (done: number, total: number) => {
          const width = 30
          const filled = Math.round((width * done) / Math.max(total, 1))
          process.stderr.write(
            `\rkp verify ${label}[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} probes`,
          )
        }
      : () => undefined
    const result = await runVerify({plan, rules, mode: state.mode, progress: progress('')})
    if (other !== null)
      result.against = {
        files: other.files,
        result: await runVerify({
          plan,
          rules: other.rules,
          mode: other.mode,
          progress: progress('--against '),
        }),
      }
    if (tty) process.stderr.write('\r\x1b[K')
    if (result.against) {
      // The other rules' differences, sorted under the findings of migrating CURRENT to their mode.
      const {planMigration} = await import('../analyze/migrate.js')
      const {attributeDifferences} = await import('../analyze/verify/attribute.js')
      const findings = planMigration(state, other!.mode as 'iptables' | 'nftables', {
        sysctls: this.loadedFacts?.sysctls ?? null,
      })
      result.attributed = attributeDifferences(result.against.result, findings)
    }
    // Differences of -f's own rules are kp explain against the kernel: no finding announces them.
    if (result.summary.differs > 0 || (result.attributed?.unexpected.length ?? 0) > 0)
      this.setExitStatus('found')
    if (!this.jsonEnabled()) {
      const {renderVerify} = await import('../cli/views/verify.js')
      const {outputStyle} = await import('../cli/views/style.js')
      this.log(renderVerify(result, outputStyle(flags['no-color'])))
    }
    return result
  }

  /** The rules of --against, read as any input is (their own explain is not used). */
  private async otherRules(
    files: string[],
    backend: 'legacy' | 'nft' | undefined,
  ): Promise<{files: string[]; rules: RulesToLoad; mode: string}> {
    const parsed = ruleSources()
    const {readFiles} = await import('../readers/read-state.js')
    const read = await readFiles({files, onParsed: parsed.onParsed})
    const sources = parsed.texts(read.sources)
    return {files, rules: rulesOf(read.state.mode, sources, backend), mode: read.state.mode}
  }
}

/** Notes which sources were read as loadable rules (iptables-save, nft, nft -j), to load their text. */
function ruleSources() {
  const parsed: Array<{format: string; path: string; family: string | null}> = []
  return {
    onParsed: (p: Parameters<NonNullable<ReadOptions['onParsed']>>[0]) => {
      if (p.format === 'iptables-save' || p.format === 'nft' || p.format === 'nft-json')
        parsed.push({
          format: p.format,
          path: p.source.path,
          family: (p.data as {family?: string | null} | undefined)?.family ?? null,
        })
    },
    texts: (read: readonly SourceText[]) =>
      parsed.flatMap((p) => {
        const src = read.find((s) => s.path === p.path)
        return src ? [{...p, text: src.text}] : []
      }),
  }
}

/** The rules to load: the iptables-save texts (IPv4, IPv6), or the nftables ruleset as given. */
function rulesOf(
  mode: string,
  sources: Array<{format: string; text: string; family: string | null}>,
  backend: 'legacy' | 'nft' | undefined,
): RulesToLoad {
  if (mode === 'ipvs')
    throw new InputError(
      'cannot verify IPVS rules here: kp verify loads rules into a sandbox, and IPVS virtual servers need the ip_vs kernel module and ipvsadm, which kp does not drive',
      'INPUT_VERIFY_UNSUPPORTED',
      ['`kp migrate --to nftables --verify` verifies the nftables rules that would replace them'],
    )
  const nft = sources.find((s) => s.format === 'nft' || s.format === 'nft-json')
  if (mode === 'nftables' && nft)
    return {kind: nft.format === 'nft' ? 'nft' : 'nft-json', text: nft.text}
  // An IPv4 and an IPv6 dump (iptables-save and ip6tables-save of one node) are loaded together.
  const ipt = sources.filter((s) => s.format === 'iptables-save')
  const v4 = ipt.find((s) => s.family !== 'IPv6')
  const v6 = ipt.find((s) => s.family === 'IPv6')
  // `iptables -S` output and grep fragments have no table headers: iptables-restore cannot load them.
  const whole = (s: {text: string} | undefined) =>
    s === undefined || /^\*(nat|filter)\s*$/m.test(s.text)
  if (mode === 'iptables' && ipt.length > 0 && whole(v4) && whole(v6))
    return {kind: 'iptables', text: v4?.text ?? '', text6: v6?.text, backend}
  if (mode === 'iptables' && ipt.length > 0)
    throw new InputError(
      'cannot verify this input: it is not a whole iptables-save dump (no *nat / *filter tables), so iptables-restore cannot load it',
      'INPUT_VERIFY_UNSUPPORTED',
      ["give the node's full iptables-save (and ip6tables-save) output"],
    )
  throw new InputError(
    `cannot verify this input: kp verify loads iptables-save or nftables rules into the kernel, and this input (${mode} mode) has none`,
    'INPUT_VERIFY_UNSUPPORTED',
    ["give the node's iptables-save output or its `nft list ruleset` with -f"],
  )
}
