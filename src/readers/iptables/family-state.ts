/**
 * What an IptablesFamilyReader (./family-reader.ts) keeps while it reads one family's ruleset:
 * the groups (one per service port), the node evidence, the diagnostics, and the bookkeeping
 * every stage shares (naming a group, adding a frontend, noting a rule reference).
 */
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import {diag} from '../../core/state.js'
import type {Diagnostic} from '../../model/types.js'
import {parseServiceComment, type ServiceComment} from './comments.js'
import {
  emptyGroup,
  findFrontend,
  indexFrontend,
  isKubeProxyChain,
  sameFrontendKey,
  SCANNED_FRONTENDS,
  type FrontendDraft,
  type Group,
  type NodeEvidence,
} from './groups.js'
import {
  findTargetOption,
  type IptablesChain,
  type IptablesRule,
  type IptablesRuleset,
} from './ruleset.js'
import {markValue} from './values.js'

export class FamilyState {
  /** A focused read (./focus.ts) holds only some services: skip the checks about the others. */
  readonly focused: boolean
  readonly diagnostics: Diagnostic[] = []
  readonly node: NodeEvidence = {
    podCIDRs: new Set(),
    detector: null,
    localInterface: null,
    masqueradeMark: null,
    masqMatchedAll: false,
    masqMatchedLocal: false,
    sawInternalChain: false,
    randomFully: null,
    localhostNodePorts: null,
    nodePortAddresses: null,
    conntrackInvalidDrop: null,
  }
  /** Comments repeat on a service's rules (and are one interned string each): each is parsed once. */
  private readonly parsedComments = new Map<string, ServiceComment | null>()
  protected readonly natChains: Map<string, IptablesChain>
  protected readonly filterChains: Map<string, IptablesChain>
  /** The service ports: by hash, then (stage 5) by `name:SPN|protocol` for those only the filter table shows. */
  readonly groups = new Map<string, Group>()

  constructor(
    readonly ruleset: IptablesRuleset,
    readonly path: string,
    readonly family: 'IPv4' | 'IPv6',
    readonly servicesOnly: boolean,
    readonly refsPerPort: number,
  ) {
    this.focused = ruleset.focused === true
    this.natChains = ruleset.tables.get('nat')?.chains ?? new Map<string, IptablesChain>()
    this.filterChains = ruleset.tables.get('filter')?.chains ?? new Map<string, IptablesChain>()
  }

  readonly warn = (
    code: DiagnosticCode,
    message: string,
    line: number | null,
    severity: Diagnostic['severity'] = 'warning',
  ): void => {
    this.diagnostics.push(
      diag(severity, code, message, line === null ? null : {path: this.path, line}),
    )
  }

  protected commentOf(rule: IptablesRule): ServiceComment | null {
    const text = rule.comment
    if (text === null) return null
    let parsed = this.parsedComments.get(text)
    if (parsed === undefined) {
      parsed = parseServiceComment(text)
      this.parsedComments.set(text, parsed)
    }
    return parsed
  }

  protected groupOf(hash: string): Group {
    let g = this.groups.get(hash)
    if (!g) {
      g = emptyGroup(hash)
      this.groups.set(hash, g)
    }
    return g
  }

  /**
   * A rule read for group g: its line is one of the port's rule references. A servicesOnly read
   * makes no references and needs only the first line (where the port's diagnostics point), so
   * it does not look up the line of each of the ~430,000 rules of a 10,000-service dump.
   */
  protected noteRef(g: Group, rule: IptablesRule): void {
    if (!this.servicesOnly || g.refLines.length === 0) g.refLines.push(rule.line)
  }
  /** Not in the input at all (neither declared nor given a rule): a fragment's gap, not an empty chain. */
  absent(name: string): boolean {
    return !this.natChains.has(name)
  }
  protected liveTarget(target: string | null): IptablesChain | undefined {
    if (target === null) return undefined
    const c = this.natChains.get(target)
    return c && c.deletedLine === null ? c : undefined
  }

  /** The first rule that tells names the group; comments are only parsed while the name is unknown. */
  protected nameGroup(g: Group, rule: IptablesRule): void {
    if (g.spn === null) {
      const spn = this.commentOf(rule)?.spn
      if (spn) g.spn = spn
    }
    if (g.protocol === null && rule.protocol && !rule.protocol.negated)
      g.protocol = rule.protocol.value
  }
  protected addFrontend(g: Group, fe: FrontendDraft): FrontendDraft {
    const same = findFrontend(
      g,
      sameFrontendKey(fe.type, fe.ip, fe.port),
      (f) => f.type === fe.type && f.ip === fe.ip && f.port === fe.port,
    )
    if (same) return same
    g.frontends.push(fe)
    if (g.frontendIndex !== null) indexFrontend(g.frontendIndex, fe)
    else if (g.frontends.length > SCANNED_FRONTENDS) {
      g.frontendIndex = new Map()
      for (const f of g.frontends) indexFrontend(g.frontendIndex, f)
    }
    return fe
  }
  protected noteInternalMasquerade(rule: IptablesRule): void {
    if (rule.source?.negated) {
      this.node.masqMatchedLocal = true
      this.node.podCIDRs.add(rule.source.value)
      this.node.detector ??= 'cidr'
    } else if (rule.inInterface?.negated) {
      this.node.masqMatchedLocal = true
      this.noteInterface(rule.inInterface.value)
    } else if (!rule.source && !rule.inInterface) {
      this.node.masqMatchedAll = true
    }
  }
  protected noteMarkTarget(rule: IptablesRule): void {
    const mark =
      findTargetOption(rule, '--or-mark') ??
      findTargetOption(rule, '--set-xmark') ??
      findTargetOption(rule, '--set-mark')
    if (mark?.values[0]) this.node.masqueradeMark ??= markValue(mark.values[0])
  }
  protected noteInterface(iface: string): void {
    // `-i veth+` is the interface-prefix detector; a plain name is the bridge detector.
    if (iface.endsWith('+')) {
      this.node.detector ??= 'interface-prefix'
      this.node.localInterface ??= iface.slice(0, -1)
    } else {
      this.node.detector ??= 'interface'
      this.node.localInterface ??= iface
    }
  }

  /** A rule in one of kube-proxy's dispatch chains that is none of its shapes. A jump to a foreign chain is listed in `foreign` instead (step 7). */
  protected notUnderstood(rule: IptablesRule): void {
    const foreignJump =
      rule.target !== null && this.natChains.has(rule.target) && !isKubeProxyChain(rule.target)
    if (!foreignJump)
      this.warn(
        'IPT_UNKNOWN_RULE',
        `rule in ${rule.table} ${rule.chain} not understood (target ${rule.target ?? 'none'}); kept out of the service model`,
        rule.line,
      )
  }
}
