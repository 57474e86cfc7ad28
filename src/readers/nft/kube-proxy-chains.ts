/**
 * The per-service chains of an nftables-mode table (external-, firewall-, service-/local-,
 * endpoint-): policies, source ranges, affinity, and the endpoints picked with their shares.
 */
import {pushAll} from '../../core/arrays.js'
import {parsePort, splitHostPort, toCidr} from '../../core/address.js'
import {MARK_FOR_MASQUERADE_CHAIN} from '../../kube-proxy/nftables-names.js'
import type {NftLayoutSign} from '../../kube-proxy/nftables-layouts.js'
import type {NftRule} from './ir.js'
import type {KubeProxyTableContext, SelectedEndpoint, ServiceAcc} from './kube-proxy-context.js'
import {parsePerServiceName} from './per-service-name.js'
import {addressMatch, hasSequence, interfaceMatch, markSetOr, verdictOf} from './words.js'

/** Reads the chains a service's map elements point at, into that service's accumulator. */
export class ServiceChainReader {
  constructor(private readonly ctx: KubeProxyTableContext) {}

  /** external-B: ETP=Local shows `fib saddr type local` short-circuits or `goto local-B` (§3.4). */
  readExternalChain(a: ServiceAcc): void {
    const chain = this.ctx.chain(a.externalChain!)
    if (!chain) return
    a.rules.push(this.ctx.ref(chain.line))
    for (const rule of chain.rules()) {
      const w = rule.tokens
      const v = verdictOf(w)
      const p = v?.target ? this.ctx.nameOf(v.target) : undefined
      if (hasSequence(w, 'fib', 'saddr', 'type', 'local')) a.etp = 'Local'
      if (
        v &&
        v.target &&
        p &&
        (p.prefix === 'service' || p.prefix === 'local') &&
        v.kind === 'goto'
      ) {
        this.ctx.use(v.target, rule.line, chain.name)
        if (p.prefix === 'local') {
          a.etp = 'Local'
          a.localChain = v.target
        } else {
          a.clusterChain ??= v.target
          const saddr = addressMatch(w, 'saddr')
          const iface = interfaceMatch(w)
          if (saddr && !saddr.negated) {
            // "short-circuit pod traffic": the detector in its IfLocal form.
            for (const x of saddr.values) this.ctx.facts.addCidr(toCidr(x))
            a.etp = 'Local'
          } else if (iface && !iface.negated) {
            this.ctx.facts.addInterface(iface.name)
            a.etp = 'Local'
          }
        }
        continue
      }
      if (v?.kind === 'jump' && v.target === MARK_FOR_MASQUERADE_CHAIN) {
        this.ctx.facts.sign('mark-for-masquerade', this.ctx.ref(rule.line))
        continue
      }
      if (markSetOr(w) !== null) continue
      this.ctx.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${chain.name}: a rule kp does not recognise: ${w.join(' ')}`,
        this.ctx.ref(rule.line),
      )
    }
  }

  /** firewall-B: `ip saddr != { CIDR , ... } drop`; LB IPs appended by kube-proxy are not ranges. */
  readFirewallChain(name: string, lbIps: Set<string>): string[] {
    const chain = this.ctx.chain(name)
    if (!chain) return []
    const out: string[] = []
    for (const rule of chain.rules()) {
      const saddr = addressMatch(rule.tokens, 'saddr')
      if (saddr?.negated && verdictOf(rule.tokens)?.kind === 'drop') {
        for (const x of saddr.values) if (!lbIps.has(x)) out.push(toCidr(x))
      } else {
        this.ctx.reporter.report(
          'warning',
          'NFT_UNKNOWN_RULE',
          `${name}: a rule kp does not recognise: ${rule.tokens.join(' ')}`,
          this.ctx.ref(rule.line),
        )
      }
    }
    return out
  }

  /**
   * service-B / local-B: the endpoints it picks and with what share. Each of the N entries of
   * `numgen random mod N` is picked with probability 1/N. kube-proxy writes one rule that picks;
   * should there be more, they are tried in order and each gets what the ones before left over
   * (none after one that always picks), so the shares never sum to more than 1.
   */
  readSelectionChain(a: ServiceAcc, name: string, missing: string[] = []): SelectedEndpoint[] {
    const chain = this.ctx.chain(name)
    if (!chain) {
      missing.push(name)
      return []
    }
    a.rules.push(this.ctx.ref(chain.line))
    this.ctx.facts.sawInternalChain ||= chain.ruleCount > 0
    const out: SelectedEndpoint[] = []
    let remaining = 1
    const picked = (rule: NftRule, list: SelectedEndpoint[]): void => {
      if (remaining === 0)
        this.ctx.reporter.report(
          'warning',
          'NFT_INCONSISTENT',
          `${name}: a rule that picks endpoints after one that always picks; it is never reached`,
          this.ctx.ref(rule.line),
        )
      let taken = 0
      for (const e of list) {
        e.share *= remaining
        taken += e.share
      }
      remaining = Math.max(0, remaining - taken)
      pushAll(out, list)
    }
    for (const rule of chain.rules()) {
      const w = rule.tokens
      const v = verdictOf(w)
      const numgen = w.indexOf('numgen')
      if (numgen >= 0 && w.includes('vmap')) {
        // Not a number where N belongs (`numgen random . mod 1`): the entries alone say N.
        const n = Number(w[numgen + 3]) || 0
        const targets = vmapTargets(w, w.indexOf('vmap') + 1)
        if (targets.length !== n)
          this.ctx.reporter.report(
            'warning',
            'NFT_INCONSISTENT',
            `${name}: numgen mod ${w[numgen + 3]} but ${targets.length} entries`,
            this.ctx.ref(rule.line),
          )
        // Since 1.36 only ClientIP affinity keeps endpoint chains (its rules come first).
        if (a.affinityTimeout === undefined)
          this.ctx.facts.sign('endpoint-chain-per-endpoint', this.ctx.ref(rule.line))
        const list: SelectedEndpoint[] = []
        for (const target of targets) {
          // An endpoint chain the vmap names but the input lacks: that endpoint is unknown, not absent.
          if (!this.ctx.chain(target) && !missing.includes(target)) missing.push(target)
          const ep = this.readEndpointChain(target, rule.line, name)
          if (ep) list.push({ip: ep.ip, port: ep.port, share: 1 / Math.max(n, targets.length)})
        }
        picked(rule, list)
        continue
      }
      const dnat = w.indexOf('dnat')
      if (dnat >= 0) {
        picked(rule, this.inlineDnat(w, dnat, name, rule))
        continue
      }
      if (v?.kind === 'goto' && v.target?.startsWith('endpoint-')) {
        const set = w.find((x) => x.startsWith('@affinity-'))
        if (set) {
          // ClientIP affinity: `ip saddr @affinity-X goto endpoint-X`; the set carries the timeout.
          const s = this.ctx.set(set.slice(1))
          a.affinityTimeout = s?.timeoutSeconds ?? a.affinityTimeout ?? null
          this.ctx.used.add(set.slice(1))
          this.ctx.markPointedAt(v.target)
          continue
        }
      }
      if ((v?.kind === 'jump' && v.target === MARK_FOR_MASQUERADE_CHAIN) || markSetOr(w) !== null) {
        if (v?.kind === 'jump') this.ctx.facts.sign('mark-for-masquerade', this.ctx.ref(rule.line))
        this.ctx.readDetector(w, rule)
        continue
      }
      this.ctx.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${name}: a rule kp does not recognise: ${w.join(' ')}`,
        this.ctx.ref(rule.line),
      )
    }
    return out
  }

  /** Newest layout: `dnat ip to numgen random mod N map { 0 : IP . PORT , ... }` or `dnat to IP:PORT`. */
  private inlineDnat(
    w: readonly string[],
    dnat: number,
    chainName: string,
    rule: NftRule,
  ): SelectedEndpoint[] {
    const to = w.indexOf('to', dnat)
    if (to < 0) {
      this.ctx.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${chainName}: a dnat kp cannot read: ${w.join(' ')}`,
        this.ctx.ref(rule.line),
      )
      return []
    }
    const sign = (s: NftLayoutSign): void => this.ctx.facts.sign(s, this.ctx.ref(rule.line))
    if (w[to + 1] === 'numgen') {
      const n = Number(w[to + 4]) || 0
      sign('inline-numgen-dnat')
      if (n === 1) sign('single-endpoint-numgen')
      const open = w.indexOf('{', to)
      const out: SelectedEndpoint[] = []
      let k = open + 1
      while (open > 0 && k < w.length && w[k] !== '}') {
        // idx : IP . PORT [,]
        if (w[k + 1] === ':' && w[k + 3] === '.') {
          out.push({ip: w[k + 2]!, port: parsePort(w[k + 4]), share: 0})
          k += 5
        } else if (w[k + 1] === ':') {
          const hp = splitHostPort(w[k + 2]!)
          if (hp) out.push({ip: hp.ip, port: hp.port, share: 0})
          k += 3
        } else {
          k++
        }
        if (w[k] === ',') k++
      }
      if (out.length !== n)
        this.ctx.reporter.report(
          'warning',
          'NFT_INCONSISTENT',
          `${chainName}: numgen mod ${w[to + 4]} but ${out.length} entries`,
          this.ctx.ref(rule.line),
        )
      for (const e of out) e.share = 1 / Math.max(n, out.length)
      return out
    }
    // `dnat ip addr . port to IP . PORT` (1.37 pre-releases, PR #140723): the port after the dot.
    if (w[to + 2] === '.' && w[to - 1] === 'port') {
      sign('single-endpoint-addr-port-dnat')
      const port = parsePort(w[to + 3])
      if (w[to + 1] !== undefined && port !== null) return [{ip: w[to + 1]!, port, share: 1}]
    }
    const hp = w[to + 1] ? splitHostPort(w[to + 1]!) : null
    if (hp) sign('single-endpoint-dnat')
    if (!hp) {
      this.ctx.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${chainName}: a dnat kp cannot read: ${w.join(' ')}`,
        this.ctx.ref(rule.line),
      )
      return []
    }
    return [{ip: hp.ip, port: hp.port, share: 1}]
  }

  /** endpoint-BE: `meta l4proto tcp dnat to IP:PORT` (+ hairpin masquerade, affinity update). */
  private readEndpointChain(
    name: string,
    line: number,
    from: string,
  ): {ip: string; port: number | null} | null {
    const chain = this.ctx.use(name, line, from)
    if (!chain) return null
    let found: {ip: string; port: number | null} | null = null
    for (const rule of chain.rules()) {
      const w = rule.tokens
      const dnat = w.indexOf('dnat')
      if (dnat >= 0) {
        const to = w.indexOf('to', dnat)
        found = to >= 0 && w[to + 1] ? splitHostPort(w[to + 1]!) : null
        if (!found)
          this.ctx.reporter.report(
            'warning',
            'NFT_UNKNOWN_RULE',
            `${name}: a dnat kp cannot read: ${w.join(' ')}`,
            this.ctx.ref(rule.line),
          )
        continue
      }
      const v = verdictOf(w)
      if ((v?.kind === 'jump' && v.target === MARK_FOR_MASQUERADE_CHAIN) || markSetOr(w) !== null)
        continue
      if (w[0] === 'update' && w[1]?.startsWith('@affinity-')) {
        this.ctx.used.add(w[1].slice(1))
        continue
      }
      this.ctx.reporter.report(
        'warning',
        'NFT_UNKNOWN_RULE',
        `${name}: a rule kp does not recognise: ${w.join(' ')}`,
        this.ctx.ref(rule.line),
      )
    }
    if (!found) {
      this.ctx.reporter.report(
        'warning',
        'NFT_NO_DNAT',
        `endpoint chain ${name} is selected by ${from} but has no dnat; its endpoint is unknown`,
        this.ctx.ref(chain.line),
      )
      return null
    }
    const p = parsePerServiceName(name)
    if (
      p?.endpointPart &&
      !p.truncated &&
      p.endpointPart !== `${found.ip.replaceAll(':', '.')}/${found.port}`
    ) {
      this.ctx.reporter.report(
        'warning',
        'NFT_INCONSISTENT',
        `endpoint chain ${name} DNATs to ${found.ip}:${found.port}, not to the endpoint its name says`,
        this.ctx.ref(chain.line),
      )
    }
    return found
  }
}

/** Targets of `{ 0 : goto X , 1 : goto Y }` starting at words[i]. */
function vmapTargets(w: readonly string[], i: number): string[] {
  const out: string[] = []
  if (w[i] !== '{') return out
  for (let k = i + 1; k < w.length && w[k] !== '}'; k++) {
    if ((w[k] === 'goto' || w[k] === 'jump') && w[k + 1] !== undefined) out.push(w[k + 1]!)
  }
  return out
}
