/**
 * Stage 7 of the iptables reader: one pass over every rule of every table for what is not
 * kube-proxy's: foreign KUBE-* chains, foreign jumps into kube-proxy's chains or out of them,
 * rules matching its masquerade mark, and exact copies of one rule in one chain.
 */
import {KUBE_CHAIN_PREFIX, KUBELET_CHAINS} from '../../kube-proxy/iptables-names.js'
import {KUBE_IPVS_PREFIX} from '../../kube-proxy/ipvs-names.js'
import type {DiagnosticCode} from '../../catalog/diagnostics.js'
import type {ForeignObject, SourceRef} from '../../model/types.js'
import {IPVS_MODE_CHAINS, isKubeProxyChain, isPerServiceChain, SEP_PREFIX} from './groups.js'
import {countRuleCopy, reportRuleCopies, type RuleCopies} from './repeated-rules.js'
import {
  BUILTIN_CHAINS,
  findMatch,
  type IptablesChain,
  type IptablesRuleset,
  type IptablesTable,
} from './ruleset.js'
import {markValue, SNAT_COMMENT} from './values.js'

/**
 * kube-proxy's (and kubelet's) own jumps from built-in chains, docs/kube-proxy-layouts.md §2.2: table/chain/target ->
 * the comment kube-proxy's EnsureRule writes (null: kubelet's uncommented KUBE-FIREWALL jump).
 * The same jump without that comment was added by someone else.
 */
const OWN_BUILTIN_JUMPS: ReadonlyMap<string, string | null> = new Map([
  ['filter/INPUT/KUBE-EXTERNAL-SERVICES', 'kubernetes externally-visible service portals'],
  ['filter/FORWARD/KUBE-EXTERNAL-SERVICES', 'kubernetes externally-visible service portals'],
  ['filter/INPUT/KUBE-NODEPORTS', 'kubernetes health check service ports'],
  ['filter/FORWARD/KUBE-SERVICES', 'kubernetes service portals'],
  ['filter/OUTPUT/KUBE-SERVICES', 'kubernetes service portals'],
  ['filter/INPUT/KUBE-SERVICES', 'kubernetes service portals'], // ≤1.2x
  ['filter/FORWARD/KUBE-FORWARD', 'kubernetes forwarding rules'],
  ['filter/INPUT/KUBE-PROXY-FIREWALL', 'kubernetes load balancer firewall'],
  ['filter/OUTPUT/KUBE-PROXY-FIREWALL', 'kubernetes load balancer firewall'],
  ['filter/FORWARD/KUBE-PROXY-FIREWALL', 'kubernetes load balancer firewall'],
  ['filter/INPUT/KUBE-FIREWALL', null],
  ['filter/OUTPUT/KUBE-FIREWALL', null],
  ['nat/OUTPUT/KUBE-SERVICES', 'kubernetes service portals'],
  ['nat/PREROUTING/KUBE-SERVICES', 'kubernetes service portals'],
  ['nat/POSTROUTING/KUBE-POSTROUTING', 'kubernetes postrouting rules'],
])

interface ForeignContext {
  foreign: ForeignObject[]
  masqMark: string | null
  at: (line: number) => SourceRef
  warn: (code: DiagnosticCode, message: string, line: number) => void
}

/** The foreign objects of `ruleset`; repeated rules are reported through `warn`. */
export function findForeign(
  ruleset: IptablesRuleset,
  path: string,
  masqMark: string | null,
  warn: (code: DiagnosticCode, message: string, line: number) => void,
): ForeignObject[] {
  const c: ForeignContext = {foreign: [], masqMark, at: (line) => ({path, line}), warn}
  ruleset.tables.forEach((table) => table.chains.forEach((chain) => noteForeign(table, chain, c)))
  return c.foreign
}

// ---- 7. foreign rules and chains, in one pass over every rule.
function noteForeign(table: IptablesTable, chain: IptablesChain, c: ForeignContext): void {
  if (chain.deletedLine !== null) return
  const ownChain = isKubeProxyChain(chain.name)
  if (!ownChain && chain.name.startsWith(KUBE_CHAIN_PREFIX)) {
    const ipvs = IPVS_MODE_CHAINS.has(chain.name) || chain.name.startsWith(KUBE_IPVS_PREFIX)
    c.foreign.push({
      kind: ipvs ? 'leftover' : 'iptables-chain',
      name: `${table.name}/${chain.name}`,
      reason: ipvs
        ? "a chain of kube-proxy's IPVS mode, left over in an iptables-mode dump"
        : "a KUBE-* chain that kube-proxy's iptables mode does not write",
      source: c.at(chain.line),
    })
  }
  // Exact copies of one rule are checked for in every chain but the per-service ones (~95 % of a
  // dump's rules, which kube-proxy rewrites whole on each sync): thousands of copies of one jump
  // or DROP are how a node with two iptables versions or backends shows (test/readers/iptables/repeated-rules.test.ts).
  const copies: RuleCopies | null =
    chain.ruleCount > 1 && !chain.name.startsWith(SEP_PREFIX) && !isPerServiceChain(chain.name)
      ? new Map()
      : null
  for (let i = 0, n = chain.ruleCount; i < n; i++) {
    const rule = chain.ruleAt(i)
    if (copies !== null) countRuleCopy(copies, rule)
    const target = rule.target
    if (!ownChain) {
      if (target && isKubeProxyChain(target)) {
        const own = OWN_BUILTIN_JUMPS.get(`${table.name}/${chain.name}/${target}`)
        if (chain.builtin && own !== undefined && (own === null || rule.comment === own)) continue
        c.foreign.push({
          kind: 'iptables-rule',
          name: `${table.name}/${chain.name} -j ${target}`,
          reason: `jumps into kube-proxy's ${target} from a chain kube-proxy does not use for that`,
          source: c.at(rule.line),
        })
        continue
      }
      const mark = findMatch(rule, '--mark')
      if (
        table.name === 'nat' &&
        chain.name === 'POSTROUTING' &&
        rule.comment === SNAT_COMMENT &&
        rule.target === 'MASQUERADE'
      )
        continue // 2015's own rule
      if (
        mark &&
        c.masqMark !== null &&
        mark.values[0] !== undefined &&
        markValue(mark.values[0]) === c.masqMark
      ) {
        c.foreign.push({
          kind: 'iptables-rule',
          name: `${table.name}/${chain.name}`,
          reason: `matches kube-proxy's masquerade mark ${c.masqMark}`,
          source: c.at(rule.line),
        })
      }
      continue
    }
    if (
      target &&
      target !== chain.name &&
      !isKubeProxyChain(target) &&
      !BUILTIN_CHAINS.has(target) &&
      table.chains.has(target)
    ) {
      c.foreign.push({
        kind: 'iptables-rule',
        name: `${table.name}/${chain.name} -j ${target}`,
        reason: `kube-proxy's ${chain.name} jumps to ${target}, a chain kube-proxy does not write`,
        source: c.at(rule.line),
      })
    }
  }
  if (copies !== null) reportRuleCopies(copies, table, chain, c.warn)
}

/**
 * The first word of each chain that neither kube-proxy, kubelet nor iptables made (`cali-`,
 * `CILIUM_`, `KUBE-ROUTER-`): which components share the node's iptables, once each, without
 * listing their hundreds of chains.
 */
export function otherChainWords(ruleset: IptablesRuleset): string[] {
  const words = new Set<string>()
  ruleset.tables.forEach((table) =>
    table.chains.forEach((chain) => {
      if (chain.deletedLine !== null || chain.builtin || isKubeProxyChain(chain.name)) return
      const kube = chain.name.startsWith(KUBE_CHAIN_PREFIX)
      if (kube && (IPVS_MODE_CHAINS.has(chain.name) || chain.name.startsWith(KUBE_IPVS_PREFIX)))
        return
      if ((KUBELET_CHAINS as readonly string[]).includes(chain.name)) return
      // KUBE-ROUTER-INPUT: the word after KUBE- names the component.
      const m = (kube ? /^KUBE-[^-_]+[-_]?/ : /^[^-_]+[-_]?/).exec(chain.name)
      if (m) words.add(m[0])
    }),
  )
  return [...words].sort()
}
