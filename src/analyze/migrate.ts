/**
 * `kp migrate` findings: what will behave differently, or break, when this node's kube-proxy
 * switches mode. Pure function over the model. The catalogue is docs/ipvs-layouts.md (d); each
 * caveat is a check in src/analyze/migrate/, grouped by subject. A check that needs information
 * the input lacks says so as a "cannot verify" finding (id ending in _UNVERIFIED or _UNKNOWN)
 * naming what to collect; none is skipped silently.
 *
 * Not findings, on purpose (§d): services without endpoints (caveat 15: every mode rejects or
 * answers ICMP unreachable, behaviour is kept) and control-plane features that depend on the
 * kube-proxy version rather than the mode (caveat 17).
 */
import {pushAll} from '../core/arrays.js'
import {displayName} from '../core/state.js'
import {type Finding, sortFindings} from './findings.js'
import {SEVERITIES, SEVERITY_RANK} from '../catalog/severity.js'
import type {KubeProxyConfig, ProxyState} from '../model/types.js'
import {type KubeProxyVersion, NEWEST_KUBE_PROXY_VERSION} from '../kube-proxy/versions.js'
import {DEFAULT_MODE} from '../kube-proxy/releases.js'
import {releaseChecks} from './migrate/releases.js'
import {networkPluginChecks} from './migrate/network-plugins.js'
import {conntrackChecks} from './migrate/conntrack.js'
import {
  type Check,
  type KernelCheck,
  type MigrationContext,
  type ProxyMode,
  type TargetSettings,
  finding,
} from './migrate/context.js'
import {ipvsBehaviourChecks} from './migrate/ipvs-behaviour.js'
import {markedDropChecks} from './migrate/marked-drops.js'
import {nodePortChecks} from './migrate/nodeports.js'
import {platformChecks} from './migrate/platform.js'
import {thirdPartyChecks} from './migrate/third-party.js'

export type {KernelCheck, ProxyMode, TargetSettings} from './migrate/context.js'
export const PROXY_MODES: readonly ProxyMode[] = ['iptables', 'ipvs', 'nftables']

export interface MigrationOptions {
  /** The mode the node runs today, when the state cannot say (cluster objects). Overrides state.mode. */
  from?: ProxyMode
  /** sysctls of the node (a bundle's or live collection's facts), e.g. net.ipv4.conf.all.route_localnet. */
  sysctls?: Record<string, string> | null
  /** What the operator already set for the target mode. */
  target?: TargetSettings
  /** The kube-proxy release the node will run, whose layout the target is rendered in (`--kube-proxy-version`; default NEWEST_KUBE_PROXY_VERSION). */
  kubeProxyVersion?: KubeProxyVersion
  /** kube-proxy's configuration, when the operator gave it (--kube-proxy-config). */
  config?: KubeProxyConfig | null
  /** The result of --check-kernel, when it ran. */
  kernelCheck?: KernelCheck | null
}

const CHECKS: readonly Check[] = [
  ...platformChecks,
  ...nodePortChecks,
  ...markedDropChecks,
  ...conntrackChecks,
  ...thirdPartyChecks,
  ...ipvsBehaviourChecks,
  ...releaseChecks,
  ...networkPluginChecks,
]

/** Reader warnings mean the state may be missing something a check would have seen. */
const incompleteInput: Check = (ctx) => {
  const warnings = ctx.state.diagnostics.filter((d) => d.severity === 'warning')
  // A fragment (docs/model.md, "incomplete") may read without a warning: its gaps are named per service port.
  const partial = ctx.state.services.filter((sp) => sp.incomplete !== undefined)
  if (partial.length > 0) {
    const missing = [...new Set(partial.flatMap((sp) => sp.incomplete!.missing))]
    const collect = [...new Set(partial.map((sp) => sp.incomplete!.collect))]
    return [
      finding({
        id: 'MIGRATE_INPUT_INCOMPLETE',
        severity: 'info',
        title: `${partial.length} service port(s) were read from a fragment; findings may be incomplete`,
        message: `The input names ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''} but does not contain ${missing.length === 1 ? 'it' : 'them'}; what depends on ${missing.length === 1 ? 'it' : 'them'} was not checked for migration caveats${warnings.length > 0 ? `, nor what the ${warnings.length} warning(s) skipped` : ''}.`,
        services: partial.map(displayName),
        addresses: [],
        evidence: warnings.flatMap((d) => (d.source ? [d.source] : [])),
        action: `Collect the whole state (${collect.map((c) => `\`${c}\``).join(', ')}) and run kp migrate again.`,
        docs: null,
      }),
    ]
  }
  if (warnings.length === 0) return []
  return [
    finding({
      id: 'MIGRATE_INPUT_INCOMPLETE',
      severity: 'info',
      title: `The input had ${warnings.length} warning(s); findings may be incomplete`,
      message: `kp could not read everything in the input (${[...new Set(warnings.map((d) => d.code))].slice(0, 5).join(', ')}); what it skipped was not checked for migration caveats.`,
      services: [],
      addresses: [],
      evidence: warnings.flatMap((d) => (d.source ? [d.source] : [])),
      action: 'Look at the warnings printed on stderr and fix or complete the input.',
      docs: null,
    }),
  ]
}

const unknownSource: Check = (ctx) =>
  ctx.from !== null
    ? []
    : [
        finding({
          id: 'MIGRATE_SOURCE_MODE_UNKNOWN',
          severity: 'warning',
          title: 'Cannot verify the caveats that depend on the current proxy mode',
          message: `The input (${ctx.state.mode === 'cluster' ? 'cluster objects' : ctx.state.mode}) does not say which mode kube-proxy runs in today, so only the checks that hold for every source mode were made.`,
          services: [],
          addresses: [],
          evidence: [],
          action: 'Pass --from iptables|ipvs|nftables, or run kp migrate on a node dump or live.',
          docs: null,
        }),
      ]

/** `--fail-on` thresholds: a severity, or none. */
export const FAIL_ON = [...SEVERITIES, 'none'] as const
export type FailOn = (typeof FAIL_ON)[number]

/** True when a finding is at or above the --fail-on threshold (`kp migrate --check` exits 1). */
export function failsOn(findings: Finding[], failOn: FailOn): boolean {
  if (failOn === 'none') return false
  return findings.some((f) => SEVERITY_RANK[f.severity] <= SEVERITY_RANK[failOn])
}

/**
 * The mode the node runs today: --from, else what the rules show, else what kube-proxy's
 * configuration says (an unset or empty mode is the default, iptables); null when none says.
 */
export function sourceMode(
  state: ProxyState,
  opts: Pick<MigrationOptions, 'from' | 'config'>,
): ProxyMode | null {
  if (opts.from) return opts.from
  if (state.mode !== 'cluster') return state.mode
  const mode = opts.config ? opts.config.mode || DEFAULT_MODE : null
  return (PROXY_MODES as readonly string[]).includes(mode ?? '') ? (mode as ProxyMode) : null
}

/** The findings for switching the node described by `state` to `to`, most severe first. */
export function planMigration(
  state: ProxyState,
  to: ProxyMode,
  opts: MigrationOptions = {},
): Finding[] {
  const ctx: MigrationContext = {
    state,
    from: sourceMode(state, opts),
    to,
    sysctls: opts.sysctls ?? null,
    target: opts.target ?? {},
    kubeProxyVersion: opts.kubeProxyVersion ?? NEWEST_KUBE_PROXY_VERSION,
    config: opts.config ?? null,
    kernelCheck: opts.kernelCheck ?? null,
  }
  const findings: Finding[] = []
  for (const check of [unknownSource, incompleteInput, ...CHECKS]) pushAll(findings, check(ctx))
  return sortFindings(findings)
}
