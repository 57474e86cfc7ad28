/**
 * Walks one new connection through iptables rules as read, hook by hook in the kernel's order
 * (raw, mangle, nat, then filter; the routing decision after nat PREROUTING picks INPUT or
 * FORWARD), rule by rule, forking where a rule's chance (`-m statistic`) or a fact kp cannot know
 * (an interface, a node address) decides. The result is independent of the model that
 * `kp explain` reads: where the two disagree, one of them is wrong.
 */
import {
  IPTABLES_HOOKS,
  iptablesDropReason,
  KUBELET_MARK_CHAINS,
} from '../../kube-proxy/iptables-hooks.js'
import {splitHostPort} from '../../core/address.js'
import type {
  IptablesChain,
  IptablesOption,
  IptablesRule,
  IptablesRuleset,
  IptablesTable,
} from '../../readers/iptables/ruleset.js'
import {
  destinationIn,
  destinationLocal,
  sourceIn,
  sourceLocal,
  type AddressFacts,
} from './addresses.js'
import {negate, open, splitOn, type Branch, type MatchValue} from './branch.js'
import {unknownSet, type IpvsStage} from './ipvs.js'
import type {TraceOutcome, TracePacket} from './types.js'
import {
  MAX_BRANCHES,
  MAX_DEPTH,
  outcomesOf,
  startBranch,
  tooDeep,
  tooManyWays,
  type End,
  type Exit,
} from './walk.js'

/** Options the rule's own fields already hold (protocol, addresses, interfaces, ports) or that mean nothing to a packet. */
const FIELD_OPTIONS: ReadonlySet<string> = new Set([
  '-p',
  '--protocol',
  '-s',
  '--source',
  '--src',
  '-d',
  '--destination',
  '--dst',
  '-i',
  '--in-interface',
  '-o',
  '--out-interface',
  '--dport',
  '--destination-port',
  '--sport',
  '--source-port',
  '--comment',
  '--nfacct-name',
  '--mode',
  '--name',
  '--seconds',
  '--reap',
  '--hitcount',
  '--rsource',
  '--rdest',
  '--mask',
  '--rttl',
])

/** Targets that change nothing a trace follows and let the packet go on. */
const PASSING_TARGETS: ReadonlySet<string> = new Set([
  'LOG',
  'NFLOG',
  'TRACE',
  'AUDIT',
  'CONNMARK',
  'NOTRACK',
  'CT',
  'CHECKSUM',
])

function portInRange(spec: string, port: number): boolean {
  const colon = spec.indexOf(':')
  if (colon < 0) return Number(spec) === port
  const lo = colon === 0 ? 0 : Number(spec.slice(0, colon))
  const hi = colon === spec.length - 1 ? 65535 : Number(spec.slice(colon + 1))
  return port >= lo && port <= hi
}

function markValue(text: string): {value: number; mask: number} {
  const slash = text.indexOf('/')
  const value = Number(slash < 0 ? text : text.slice(0, slash)) >>> 0
  const mask = slash < 0 ? 0xffffffff : Number(text.slice(slash + 1)) >>> 0
  return {value, mask}
}

export class IptablesTracer {
  readonly assumed: string[] = []

  /** `ruleset` null: no iptables input (an IPVS listing alone); `ipvs`: the IPVS stage of IPVS mode. */
  constructor(
    private readonly ruleset: IptablesRuleset | null,
    private readonly path: string,
    private readonly facts: AddressFacts,
    private readonly ipvs: IpvsStage | null = null,
  ) {}

  get packet(): TracePacket {
    return this.facts.packet
  }

  /** Every way the connection can go, each with its chance, conditions, steps and verdict. */
  trace(): TraceOutcome[] {
    const start = startBranch(this.packet.destination, this.packet.port)
    return outcomesOf(this.packet.from === 'node' ? this.fromNode(start) : this.fromOutside(start))
  }

  private fromOutside(b: Branch): End[] {
    const out: End[] = []
    for (const e of this.hooks(b, [
      ['raw', 'PREROUTING'],
      ['mangle', 'PREROUTING'],
      ['nat', 'PREROUTING'],
    ])) {
      if (e.how !== 'accept') {
        out.push({...e, local: false})
        continue
      }
      // The routing decision: to this node (INPUT) or on to another host (FORWARD).
      for (const [r, local] of splitOn(
        e.branch,
        destinationLocal(this.facts, e.branch.destination, e.branch.dnat !== null),
      )) {
        if (local && this.ipvs) {
          out.push(
            ...this.throughIpvs(
              r,
              [
                ['mangle', 'INPUT'],
                ['filter', 'INPUT'],
              ],
              [['nat', 'INPUT']],
            ),
          )
          continue
        }
        const path: Array<[string, string]> = local
          ? [
              ['mangle', 'INPUT'],
              ['filter', 'INPUT'],
              ['nat', 'INPUT'],
            ]
          : [
              ['mangle', 'FORWARD'],
              ['filter', 'FORWARD'],
              ['mangle', 'POSTROUTING'],
              ['nat', 'POSTROUTING'],
            ]
        for (const f of this.hooks(r, path)) out.push({...f, local})
      }
    }
    return out
  }

  /**
   * IPVS mode: the chains before IPVS's hook, then the virtual server's choice; a connection it
   * takes leaves for the real server through POSTROUTING, one it does not goes on through `rest`.
   */
  private throughIpvs(
    b: Branch,
    before: Array<[string, string]>,
    rest: Array<[string, string]>,
    restLocal = true,
  ): End[] {
    const out: End[] = []
    for (const e of this.hooks(b, before)) {
      if (e.how !== 'accept') {
        out.push({...e, local: true})
        continue
      }
      const chosen = this.ipvs!.balance(e.branch)
      if (chosen === null) {
        for (const f of this.hooks(e.branch, rest)) out.push({...f, local: restLocal})
        continue
      }
      for (const c of chosen) {
        if (c.how !== 'accept') out.push({...c, local: true})
        else
          for (const f of this.hooks(c.branch, [
            ['mangle', 'POSTROUTING'],
            ['nat', 'POSTROUTING'],
          ]))
            out.push({...f, local: false})
      }
    }
    return out
  }

  private fromNode(b: Branch): End[] {
    if (this.ipvs) {
      const out: End[] = []
      for (const e of this.hooks(b, [
        ['raw', 'OUTPUT'],
        ['mangle', 'OUTPUT'],
        ['nat', 'OUTPUT'],
      ])) {
        if (e.how !== 'accept') out.push({...e, local: false})
        else
          out.push(
            ...this.throughIpvs(
              e.branch,
              [],
              [
                ['filter', 'OUTPUT'],
                ['mangle', 'POSTROUTING'],
                ['nat', 'POSTROUTING'],
              ],
              false,
            ),
          )
      }
      return out
    }
    const out: End[] = []
    for (const e of this.hooks(b, [
      ['raw', 'OUTPUT'],
      ['mangle', 'OUTPUT'],
      ['nat', 'OUTPUT'],
      ['filter', 'OUTPUT'],
      ['mangle', 'POSTROUTING'],
      ['nat', 'POSTROUTING'],
    ])) {
      if (e.how !== 'accept') {
        out.push({...e, local: false})
        continue
      }
      // To one of the node's own addresses (127.0.0.1 included) it comes back over loopback:
      // PREROUTING and INPUT see it again, but not their nat chains (its NAT was bound in OUTPUT).
      for (const [r, local] of splitOn(
        e.branch,
        destinationLocal(this.facts, e.branch.destination, e.branch.dnat !== null),
      )) {
        if (!local) out.push({branch: r, how: 'accept', reason: null, local})
        else
          for (const f of this.hooks(r, [
            ['raw', 'PREROUTING'],
            ['mangle', 'PREROUTING'],
            ['mangle', 'INPUT'],
            ['filter', 'INPUT'],
          ]))
            out.push({...f, local})
      }
    }
    return out
  }

  /** Runs the built-in chains in turn; a branch goes on only while each accepts it. */
  private hooks(b: Branch, path: Array<[string, string]>): Exit[] {
    let live: Branch[] = [b]
    const done: Exit[] = []
    for (const [table, builtin] of path) {
      const next: Branch[] = []
      for (const br of live) {
        for (const e of this.builtin(br, table, builtin)) {
          if (e.how === 'accept') next.push(e.branch)
          else done.push(e)
        }
      }
      live = next
    }
    return [...done, ...live.map((branch): Exit => ({branch, how: 'accept', reason: null}))]
  }

  /** One built-in chain: its rules, or kube-proxy's jumps when the input lacks them; then its policy. */
  private builtin(b: Branch, tableName: string, name: string): Exit[] {
    const table = this.ruleset?.tables.get(tableName)
    if (!table) return [{branch: b, how: 'accept', reason: null}]
    const chain = table.chains.get(name)
    const exits =
      chain && chain.ruleCount > 0
        ? this.chain(b, table, chain, 0)
        : this.assumedHooks(b, table, name)
    return exits.map((e) => {
      if (e.how !== 'return') return e
      if (chain?.policy === 'DROP') {
        e.branch.steps.push({table: tableName, chain: name, rule: null, note: 'policy DROP'})
        return {...e, how: 'drop', reason: `the policy of ${tableName} ${name} is DROP`}
      }
      return {...e, how: 'accept'}
    })
  }

  private assumedHooks(b: Branch, table: IptablesTable, name: string): Exit[] {
    const hooks = IPTABLES_HOOKS.filter(
      (h) => h.table === table.name && h.builtin === name && table.chains.has(h.chain),
    )
    if (hooks.length === 0) return [{branch: b, how: 'return', reason: null}]
    const said = `kube-proxy's jumps in ${table.name} ${name}, which the input has no rules in: ${hooks.map((h) => h.chain).join(', ')}`
    if (!this.assumed.includes(said)) this.assumed.push(said)
    let live: Branch[] = [b]
    const done: Exit[] = []
    for (const hook of hooks) {
      const next: Branch[] = []
      for (const br of live) {
        br.steps.push({
          table: table.name,
          chain: name,
          rule: null,
          note: `jump to ${hook.chain} (kube-proxy's hook, assumed)`,
        })
        for (const e of this.chain(br, table, table.chains.get(hook.chain)!, 1)) {
          if (e.how === 'return') next.push(e.branch)
          else done.push(e)
        }
      }
      live = next
    }
    return [...done, ...live.map((branch): Exit => ({branch, how: 'return', reason: null}))]
  }

  /** Walks a chain's rules in order; jumps recurse, and a branch leaves at a verdict or RETURN. */
  private chain(b: Branch, table: IptablesTable, chain: IptablesChain, depth: number): Exit[] {
    if (depth > MAX_DEPTH) return tooDeep(b)
    let live: Branch[] = [b]
    const done: Exit[] = []
    for (let i = 0; i < chain.ruleCount && live.length > 0; i++) {
      const rule = chain.ruleAt(i)
      const next: Branch[] = []
      for (const br of live) {
        for (const [m, matched] of this.match(br, rule)) {
          if (!matched) {
            next.push(m)
            continue
          }
          for (const e of this.target(m, table, rule, depth)) {
            if (e.how === 'next') next.push(e.branch)
            else done.push(e)
          }
        }
      }
      live = next
      if (live.length > MAX_BRANCHES) return tooManyWays(done, live)
    }
    return [...done, ...live.map((branch): Exit => ({branch, how: 'return', reason: null}))]
  }

  /** Every branch the rule's matches split `b` into, each with whether the whole rule matches there. */
  private match(b: Branch, rule: IptablesRule): Array<[Branch, boolean]> {
    let ways: Array<[Branch, boolean]> = [[b, true]]
    const need = (value: (br: Branch) => MatchValue): void => {
      const next: Array<[Branch, boolean]> = []
      for (const [br, ok] of ways) {
        if (!ok) next.push([br, false])
        else for (const w of splitOn(br, value(br))) next.push(w)
      }
      ways = next
    }
    const facts = this.facts
    if (rule.protocol) {
      const p = rule.protocol.value
      const same = p === 'all' || p === '0' || p === this.packet.protocol.toLowerCase()
      need(() => same !== rule.protocol!.negated)
    }
    if (rule.source) {
      const s = rule.source
      need((br) => {
        const v = sourceIn(facts, s.value, br.destination)
        return s.negated ? negate(v) : v
      })
    }
    if (rule.destination) {
      const d = rule.destination
      need((br) => {
        const v = destinationIn(br.destination, d.value)
        return d.negated ? negate(v) : v
      })
    }
    for (const [field, dir] of [
      [rule.inInterface, 'arrives on'],
      [rule.outInterface, 'leaves through'],
    ] as const) {
      if (!field) continue
      const v = open(
        `${dir} ${field.value}`,
        `the connection ${dir} interface ${field.value}`,
        `the connection does not ${dir === 'arrives on' ? 'arrive on' : 'leave through'} interface ${field.value}`,
      )
      need(() => (field.negated ? negate(v) : v))
    }
    if (rule.dport) {
      const d = rule.dport
      need((br) => portInRange(d.value, br.port) !== d.negated)
    }
    if (rule.sport) {
      const s = rule.sport
      const v = open(
        `sport ${s.value}`,
        `the source port is ${s.value}`,
        `the source port is not ${s.value}`,
      )
      need(() => (s.negated ? negate(v) : v))
    }
    for (const option of rule.matches) {
      if (FIELD_OPTIONS.has(option.name)) continue
      need((br) => {
        const v = this.option(br, option)
        return option.negated ? negate(v) : v
      })
    }
    return ways
  }

  /** One match option of a module (statistic, mark, addrtype, conntrack, recent, multiport...). */
  private option(b: Branch, option: IptablesOption): MatchValue {
    const value = option.values[0] ?? ''
    switch (option.name) {
      case '--probability':
        return {probability: Number(value)}
      case '--mark': {
        const {value: v, mask} = markValue(value)
        return (b.mark & mask) >>> 0 === v
      }
      case '--dst-type':
        return value === 'LOCAL'
          ? destinationLocal(this.facts, b.destination, b.dnat !== null)
          : this.unknown(option)
      case '--src-type':
        return value === 'LOCAL' ? sourceLocal(this.facts) : this.unknown(option)
      case '--ctstate':
      case '--state': {
        // The first packet of a new connection: NEW, and DNAT once a DNAT rule rewrote it.
        const states = value.split(',')
        return (
          states.includes('NEW') ||
          (option.name === '--ctstate' && b.dnat !== null && states.includes('DNAT'))
        )
      }
      case '--rcheck':
      case '--update':
        // A client kube-proxy has not seen (no affinity record yet): the walk is of a first connection.
        return false
      case '--set':
        return true
      case '--dports':
      case '--destination-ports':
      case '--ports':
        return value.split(',').some((p) => portInRange(p, b.port))
      case '--syn':
        return true
      case '--match-set': {
        const flags = option.values[1] ?? ''
        return this.ipvs?.setMatch(b, value, flags) ?? unknownSet(value, flags)
      }
      case '--physdev-is-in':
      case '--physdev-is-bridged':
        // Only a pod on a bridge CNI reaches the node through a bridge port; outside clients
        // come in on the node's own interface, and the node's own traffic through none.
        return this.packet.from === 'pod' ? this.unknown(option) : false
      default:
        return this.unknown(option)
    }
  }

  private unknown(option: IptablesOption): MatchValue {
    const text =
      `${option.module ? `-m ${option.module} ` : ''}${option.name} ${option.values.join(' ')}`.trim()
    return open(`match ${text}`, `\`${text}\` matches`, `\`${text}\` does not match`)
  }

  /** What the rule's target does to a branch whose matches hold. */
  private target(b: Branch, table: IptablesTable, rule: IptablesRule, depth: number): Exit[] {
    const t = rule.target
    const step = (note: string): void => {
      b.steps.push({
        table: table.name,
        chain: rule.chain,
        rule: {source: {path: this.path, line: rule.line}, text: rule.text},
        note,
      })
    }
    const go = (how: Exit['how'], reason: string | null = null): Exit[] => [
      {branch: b, how, reason},
    ]
    if (t === null) {
      step('no target: goes on')
      return go('next')
    }
    switch (t) {
      case 'ACCEPT':
        step('accepted')
        return go('accept')
      case 'DROP':
        step('dropped')
        return go('drop', this.dropReason(rule, 'drops'))
      case 'REJECT':
        step('rejected')
        return go('reject', this.dropReason(rule, 'rejects'))
      case 'RETURN':
        step('return')
        return go('return')
      case 'DNAT':
        return this.dnat(b, rule, step)
      case 'MASQUERADE':
      case 'SNAT':
        b.masquerade = true
        step(t === 'SNAT' ? 'source NAT' : 'masquerade (source NAT to the node address)')
        return go('accept')
      case 'MARK':
        this.mark(b, rule)
        step(`mark 0x${b.mark.toString(16)}`)
        return go('next')
    }
    if (PASSING_TARGETS.has(t)) {
      step(`${t}: goes on`)
      return go('next')
    }
    const next = table.chains.get(t)
    const known = next ? undefined : KUBELET_MARK_CHAINS[t]
    if (known) {
      // kube-proxy's own test dumps leave out the kubelet's mark chains: their effect is fixed.
      const said = `${t} (not in the input): ${known === 'drop' ? "marks the packet, and the kubelet's KUBE-FIREWALL drops it" : 'marks the packet for masquerade'}`
      if (!this.assumed.includes(said)) this.assumed.push(said)
      step(`jump to ${t} (assumed)`)
      if (known === 'drop') return go('drop', 'kube-proxy marked it for dropping (KUBE-MARK-DROP)')
      b.masquerade = true
      return go('next')
    }
    if (!next) {
      step(`${rule.goto ? 'goto' : 'jump to'} ${t}`)
      return go(
        'unknown',
        /^[A-Z][A-Z0-9-]*$/.test(t) && t.includes('-')
          ? `chain ${t} is not in the input (collect it with \`iptables-save -t ${table.name}\`)`
          : `kp does not follow the target ${t}`,
      )
    }
    step(`${rule.goto ? 'goto' : 'jump to'} ${t}`)
    return this.chain(b, table, next, depth + 1).map((e) => {
      // RETURN from a jumped-to chain goes on after the jump; from a goto, it leaves this chain too.
      return e.how === 'return' && !rule.goto ? {...e, how: 'next'} : e
    })
  }

  private dnat(b: Branch, rule: IptablesRule, step: (note: string) => void): Exit[] {
    const to = rule.targetOptions.find((o) => o.name === '--to-destination')?.values[0]
    const hp = to === undefined ? null : splitHostPort(to)
    if (!hp) {
      step(`DNAT ${to ?? ''}`.trim())
      return [
        {
          branch: b,
          how: 'unknown',
          reason: `kp cannot read the DNAT target ${JSON.stringify(to ?? '')}`,
        },
      ]
    }
    b.destination = hp.ip
    if (hp.port !== null) b.port = hp.port
    b.dnat = to!
    step(`DNAT to ${to}`)
    return [{branch: b, how: 'accept', reason: null}]
  }

  private mark(b: Branch, rule: IptablesRule): void {
    for (const o of rule.targetOptions) {
      const {value, mask} = markValue(o.values[0] ?? '0')
      switch (o.name) {
        case '--or-mark':
          b.mark = (b.mark | value) >>> 0
          break
        case '--xor-mark':
          b.mark = (b.mark ^ value) >>> 0
          break
        case '--and-mark':
          b.mark = (b.mark & value) >>> 0
          break
        case '--set-xmark':
          b.mark = ((b.mark & ~mask) ^ value) >>> 0
          break
        case '--set-mark':
          b.mark = ((b.mark & ~mask) | value) >>> 0
          break
      }
    }
  }

  private dropReason(rule: IptablesRule, verb: string): string {
    const source = this.packet.source ?? `of this ${this.packet.from === 'pod' ? 'pod' : 'client'}`
    return (
      iptablesDropReason(rule.comment, source, rule.chain) ??
      `the rule at ${this.path}:${rule.line} in ${rule.table} ${rule.chain} ${verb} it`
    )
  }
}
