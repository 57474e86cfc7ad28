/**
 * Walks one new connection through nftables rules as read (the IR both nft readers make: rules
 * as nft's own words), base chain by base chain in hook and priority order, statement by
 * statement: matches (payload, meta, ct, fib, set and map lookups, concatenations), verdicts,
 * `numgen random` maps, marks, dnat and masquerade. Like the iptables walk, it forks on chances
 * and on facts the packet cannot settle, and never guesses.
 */
import {splitHostPort} from '../../core/address.js'
import {IPTABLES_HOOKS, iptablesDropReason} from '../../kube-proxy/iptables-hooks.js'
import {nftablesDropReason} from '../../kube-proxy/nftables-verdicts.js'
import type {NftChain, NftDocument, NftElement, NftRule, NftTable} from '../../readers/nft/ir.js'
import {
  destinationIn,
  destinationLocal,
  sourceIn,
  sourceLocal,
  type AddressFacts,
} from './addresses.js'
import {negate, open, splitOn, type Branch, type MatchValue, type OpenCondition} from './branch.js'
import {allOf, anyOf, bracedItems, numberOf, portIn, selectorAt} from './nft-words.js'
import type {TraceOutcome} from './types.js'
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

/** A base chain at one hook, with its table; or kube-proxy's assumed jumps for a table without one. */
interface BaseChain {
  table: NftTable
  chain: NftChain | null
  /** The chains walked in turn when `chain` is null. */
  assumed: NftChain[]
}

/** The priorities iptables-nft gives its tables' built-in chains. */
const IPTABLES_NFT_PRIORITY: Record<string, number> = {nat: -100, filter: 0}

export class NftTracer {
  readonly assumed: string[] = []

  constructor(
    private readonly doc: NftDocument,
    private readonly family: 'IPv4' | 'IPv6',
    private readonly path: string,
    private readonly facts: AddressFacts,
  ) {}

  trace(): TraceOutcome[] {
    const start = startBranch(this.facts.packet.destination, this.facts.packet.port)
    const ends: End[] = []
    if (this.facts.packet.from === 'node') {
      for (const e of this.hooks([start], ['output', 'postrouting']))
        if (e.how !== 'accept') ends.push({...e, local: false})
        else ends.push(...this.backToNode(e.branch))
    } else {
      for (const e of this.hooks([start], ['prerouting'])) {
        if (e.how !== 'accept') {
          ends.push({...e, local: false})
          continue
        }
        for (const [b, local] of splitOn(
          e.branch,
          destinationLocal(this.facts, e.branch.destination, e.branch.dnat !== null),
        )) {
          for (const f of this.hooks([b], local ? ['input'] : ['forward', 'postrouting']))
            ends.push({...f, local})
        }
      }
    }
    return outcomesOf(ends)
  }

  /**
   * The node's connection to one of its own addresses (127.0.0.1 included) comes back over
   * loopback: the PREROUTING and INPUT chains see it again, but not their NAT chains (its NAT was
   * bound in OUTPUT). kube-proxy 1.37 rejects localhost NodePorts there (filter-input).
   */
  private backToNode(b: Branch): End[] {
    const out: End[] = []
    for (const [r, local] of splitOn(
      b,
      destinationLocal(this.facts, b.destination, b.dnat !== null),
    )) {
      if (!local) out.push({branch: r, how: 'accept', reason: null, local: false})
      else for (const f of this.hooks([r], ['prerouting', 'input'], true)) out.push({...f, local})
    }
    return out
  }

  /**
   * The base chains of this family at a hook, in priority order. An iptables-nft table seen
   * through `nft list` without its built-in chains gets kube-proxy's jumps, assumed and said.
   */
  private baseChains(hook: string): BaseChain[] {
    const fam = this.family === 'IPv4' ? 'ip' : 'ip6'
    const out: Array<BaseChain & {priority: number}> = []
    for (const table of this.doc.tables.values()) {
      if (table.family !== fam && table.family !== 'inet') continue
      let hooked = false
      for (const chain of table.chains.values())
        if (chain.hook?.hook === hook) {
          hooked = true
          out.push({table, chain, assumed: [], priority: chain.hook.priority ?? 0})
        }
      const builtin = hook.toUpperCase()
      if (hooked || table.chains.has(builtin) || !(table.name in IPTABLES_NFT_PRIORITY)) continue
      const jumps = IPTABLES_HOOKS.filter((h) => h.table === table.name && h.builtin === builtin)
        .map((h) => table.chains.get(h.chain))
        .filter((c): c is NftChain => c !== undefined)
      if (jumps.length === 0) continue
      const said = `kube-proxy's jumps in ${table.family} ${table.name} ${builtin}, which the input does not hold: ${jumps.map((c) => c.name).join(', ')}`
      if (!this.assumed.includes(said)) this.assumed.push(said)
      out.push({table, chain: null, assumed: jumps, priority: IPTABLES_NFT_PRIORITY[table.name]!})
    }
    return out.sort((a, b) => a.priority - b.priority)
  }

  /** One base chain (or the assumed jumps) for each branch: how each leaves it. */
  private base(b: Branch, base: BaseChain): Exit[] {
    if (base.chain) return this.chain(b, base.table, base.chain, 0)
    let live: Branch[] = [b]
    const done: Exit[] = []
    for (const target of base.assumed) {
      const next: Branch[] = []
      for (const br of live) {
        br.steps.push({
          table: `${base.table.family} ${base.table.name}`,
          chain: target.name,
          rule: null,
          note: `jump ${target.name} (kube-proxy's hook, assumed)`,
        })
        for (const e of this.chain(br, base.table, target, 1)) {
          if (e.how === 'return' || e.how === 'next') next.push(e.branch)
          else done.push(e)
        }
      }
      live = next
    }
    return [...done, ...live.map((branch): Exit => ({branch, how: 'return', reason: null}))]
  }

  private hooks(start: Branch[], hooks: string[], natBound = false): Exit[] {
    let live = start
    const done: Exit[] = []
    for (const hook of hooks) {
      for (const base of this.baseChains(hook)) {
        if (natBound && (base.chain ? base.chain.hook?.type === 'nat' : base.table.name === 'nat'))
          continue
        const next: Branch[] = []
        for (const b of live) {
          for (const e of this.base(b, base)) {
            if (e.how === 'accept') next.push(e.branch)
            else if (e.how === 'return' || e.how === 'next') {
              const chain = base.chain
              if (chain?.hook?.policy === 'drop') {
                e.branch.steps.push({
                  table: base.table.name,
                  chain: chain.name,
                  rule: null,
                  note: 'policy drop',
                })
                done.push({
                  ...e,
                  how: 'drop',
                  reason: `the policy of ${base.table.family} ${base.table.name} ${chain.name} is drop`,
                })
              } else next.push(e.branch)
            } else done.push(e)
          }
        }
        live = next
      }
    }
    return [...done, ...live.map((branch): Exit => ({branch, how: 'accept', reason: null}))]
  }

  private chain(b: Branch, table: NftTable, chain: NftChain, depth: number): Exit[] {
    if (depth > MAX_DEPTH) return tooDeep(b)
    let live: Branch[] = [b]
    const done: Exit[] = []
    for (const rule of chain.rules()) {
      if (live.length === 0) break
      const next: Branch[] = []
      for (const br of live)
        for (const e of this.rule(br, table, chain, rule, depth)) {
          if (e.how === 'next') next.push(e.branch)
          else done.push(e)
        }
      live = next
      if (live.length > MAX_BRANCHES) return tooManyWays(done, live)
    }
    return [...done, ...live.map((branch): Exit => ({branch, how: 'return', reason: null}))]
  }

  /** One rule: its statements in order; a failed match ends it, a verdict ends the branch's walk of the chain. */
  private rule(b: Branch, table: NftTable, chain: NftChain, rule: NftRule, depth: number): Exit[] {
    const w = rule.tokens
    const step = (br: Branch, note: string): void => {
      br.steps.push({
        table: `${table.family} ${table.name}`,
        chain: chain.name,
        rule: {source: {path: this.path, line: rule.line}, text: w.join(' ')},
        note,
      })
    }
    // Each pending branch carries the index of the next statement.
    let pending: Array<[Branch, number]> = [[b, 0]]
    const done: Exit[] = []
    while (pending.length > 0) {
      const next: Array<[Branch, number]> = []
      for (const [br, i] of pending) {
        if (i >= w.length) {
          done.push({branch: br, how: 'next', reason: null})
          continue
        }
        for (const r of this.statement(
          br,
          table,
          {chain: chain.name, comment: rule.comment},
          w,
          i,
          step,
          depth,
        )) {
          if ('at' in r) next.push([r.branch, r.at])
          else done.push(r)
        }
      }
      pending = next
    }
    return done
  }

  /**
   * One statement at w[i]: a match (its branches go on, or stop with `next` when it fails), an
   * action, or a verdict. Returns branches to go on with (`at`) or exits.
   */
  private statement(
    b: Branch,
    table: NftTable,
    at: {chain: string; comment: string | null},
    w: readonly string[],
    i: number,
    step: (br: Branch, note: string) => void,
    depth: number,
  ): Array<{branch: Branch; at: number} | Exit> {
    const word = w[i]!
    const exit = (how: Exit['how'], reason: string | null = null): Exit[] => [
      {branch: b, how, reason},
    ]
    switch (word) {
      case 'counter': {
        let k = i + 1
        if (w[k] === 'name') k += 2
        else if (w[k] === 'packets') k += 4
        return [{branch: b, at: k}]
      }
      case 'accept':
        step(b, 'accepted')
        return exit('accept')
      case 'drop':
        step(b, 'dropped')
        return exit('drop', this.reason(at.chain, null, 'drop', at.comment))
      case 'reject':
        step(b, 'rejected')
        return exit('reject', this.reason(at.chain, null, 'reject', at.comment))
      case 'return':
        step(b, 'return')
        return exit('return')
      case 'jump':
      case 'goto':
        return this.jump(b, table, word, w[i + 1] ?? '', step, depth)
      case 'masquerade':
      case 'snat':
        b.masquerade = true
        step(b, word === 'snat' ? 'source NAT' : 'masquerade (source NAT to the node address)')
        return exit('accept')
      case 'dnat':
        return this.dnat(b, w, i, step)
      case 'numgen':
        return this.numgen(b, table, w, i, step, depth)
      case 'update':
      case 'add': {
        // `update @affinity-… { ip saddr }`: records affinity; nothing for a first connection.
        const close = w.indexOf('}', i)
        return [{branch: b, at: close < 0 ? w.length : close + 1}]
      }
      case 'log':
      case 'notrack':
        return [{branch: b, at: w.length}]
      case 'xt':
        return this.xt(b, w, i, step)
    }
    if (
      (word === 'meta' && w[i + 1] === 'mark' && w[i + 2] === 'set') ||
      (word === 'mark' && w[i + 1] === 'set')
    )
      return this.markSet(b, w, word === 'meta' ? i + 3 : i + 2, step)
    const sel = selectorAt(w, i)
    if (!sel) {
      const text = w.slice(i).join(' ')
      return [
        {branch: b, how: 'unknown', reason: `kp does not follow the nft statement \`${text}\``},
      ]
    }
    return this.match(b, table, at.chain, w, i, step, depth)
  }

  /**
   * `xt match "NAME"` / `xt target "NAME"`: an iptables-nft extension nft cannot show. A comment
   * matches everything; any other match is an open question, and a target hides its effect.
   */
  private xt(
    b: Branch,
    w: readonly string[],
    i: number,
    step: (br: Branch, note: string) => void,
  ): Array<{branch: Branch; at: number} | Exit> {
    const name = (w[i + 2] ?? '').replace(/^"|"$/g, '')
    if (w[i + 1] === 'target') {
      step(b, `xt target ${name}`)
      return [
        {
          branch: b,
          how: 'unknown',
          reason: `iptables-nft hides what its \`${name}\` target does from nft (read the node with iptables-save instead)`,
        },
      ]
    }
    if (name === 'comment') return [{branch: b, at: i + 3}]
    const v = open(
      `xt ${name}`,
      `the iptables \`${name}\` match (hidden from nft) matches`,
      `the iptables \`${name}\` match (hidden from nft) does not match`,
    )
    return splitOn(b, v).map(([x, ok]) =>
      ok ? {branch: x, at: i + 3} : {branch: x, how: 'next' as const, reason: null},
    )
  }

  /** `LHS [op] RHS`, `LHS @set`, `LHS vmap …`, `LHS map …`: LHS may be a concatenation and carry `and`/`&`. */
  private match(
    b: Branch,
    table: NftTable,
    chainName: string,
    w: readonly string[],
    i: number,
    step: (br: Branch, note: string) => void,
    depth: number,
  ): Array<{branch: Branch; at: number} | Exit> {
    const reads: string[] = []
    let k = i
    for (;;) {
      const sel = selectorAt(w, k)
      if (!sel) break
      reads.push(sel.read)
      k += sel.length
      if (w[k] === '.') k++
      else break
    }
    let mask: number | null = null
    if (w[k] === 'and' || w[k] === '&') {
      mask = numberOf(w[k + 1] ?? '')
      k += 2
    }
    let negated = false
    if (w[k] === '!=') {
      negated = true
      k++
    } else if (w[k] === '==') k++
    if (w[k] === 'vmap') return this.vmap(b, table, chainName, reads, w, k + 1, step, depth)
    // The right-hand side: a named set, a set literal, or a value.
    let items: string[][]
    let end: number
    if (w[k]?.startsWith('@')) {
      const set = table.sets.get(w[k]!.slice(1))
      if (!set)
        return [
          {
            branch: b,
            how: 'unknown',
            reason: `set ${w[k]} is not in the input (collect it with \`nft list table ${table.family} ${table.name}\`)`,
          },
        ]
      items = set.elements.map((e) => e.key)
      end = k + 1
    } else if (w[k] === '{') {
      const braced = bracedItems(w, k)
      items = braced.items.map((it) => it.filter((x) => x !== '.'))
      end = braced.end
    } else {
      // `fib saddr type local`, `ct state new`, `ct state established,related`: a value (maybe a list).
      items = (w[k] ?? '').split(',').map((x) => [x])
      end = k + 1
    }
    const value = this.inAny(b, reads, items, mask)
    const out: Array<{branch: Branch; at: number} | Exit> = []
    for (const [br, ok] of splitOn(b, negated ? negate(value) : value)) {
      if (ok) out.push({branch: br, at: end})
      else out.push({branch: br, how: 'next', reason: null})
    }
    return out
  }

  /** Is the packet's tuple one of `items`? Each item's words line up with the selectors read. */
  private inAny(b: Branch, reads: string[], items: string[][], mask: number | null): MatchValue {
    const opens: OpenCondition[] = []
    for (const item of items) {
      const parts: OpenCondition[] = []
      let failed = false
      for (let c = 0; c < reads.length && !failed; c++) {
        const one = this.component(b, reads[c]!, item[c] ?? '', mask)
        if (one === false) failed = true
        else if (one !== true && !('probability' in one)) parts.push(one)
      }
      if (failed) continue
      if (parts.length === 0) return true
      opens.push(parts.length === 1 ? parts[0]! : allOf(parts))
    }
    if (opens.length === 0) return false
    return opens.length === 1 ? opens[0]! : anyOf(opens)
  }

  /** One selector against one word of a set element or literal. */
  private component(b: Branch, read: string, word: string, mask: number | null): MatchValue {
    const p = this.facts.packet
    switch (read) {
      case 'daddr':
        return destinationIn(b.destination, word)
      case 'saddr':
        return sourceIn(this.facts, word, b.destination)
      case 'proto':
        return (
          word === p.protocol.toLowerCase() ||
          word === String({TCP: 6, UDP: 17, SCTP: 132}[p.protocol])
        )
      case 'dport':
        return portIn(word, b.port)
      case 'tcp dport':
      case 'udp dport':
      case 'sctp dport':
        return read.startsWith(p.protocol.toLowerCase()) && portIn(word, b.port)
      case 'mark': {
        const n = numberOf(word)
        return n !== null && (mask === null ? b.mark : b.mark & mask) >>> 0 === n
      }
      case 'ct state':
        return word === 'new'
      case 'ct status':
        return word === 'dnat' ? b.dnat !== null : false
      case 'fib saddr':
        return word === 'local'
          ? sourceLocal(this.facts)
          : open(
              `fib saddr ${word}`,
              `the source address is of type ${word}`,
              `the source address is not of type ${word}`,
            )
      case 'fib daddr':
        return word === 'local'
          ? destinationLocal(this.facts, b.destination, b.dnat !== null)
          : open(
              `fib daddr ${word}`,
              `the destination address is of type ${word}`,
              `the destination address is not of type ${word}`,
            )
      case 'nfproto':
        return word === (this.family === 'IPv4' ? 'ipv4' : 'ipv6')
      default:
        return open(`${read} ${word}`, `${read} is ${word}`, `${read} is not ${word}`)
    }
  }

  /** `LHS vmap @map` or `LHS vmap { k : verdict , … }`: the verdict of the element the packet hits. */
  private vmap(
    b: Branch,
    table: NftTable,
    chainName: string,
    reads: string[],
    w: readonly string[],
    k: number,
    step: (br: Branch, note: string) => void,
    depth: number,
  ): Array<{branch: Branch; at: number} | Exit> {
    let elements: Array<{key: string[]; value: string[]}>
    const mapName = w[k]?.startsWith('@') ? w[k]!.slice(1) : null
    if (w[k]?.startsWith('@')) {
      const map = table.sets.get(w[k]!.slice(1))
      if (!map)
        return [
          {
            branch: b,
            how: 'unknown',
            reason: `map ${w[k]} is not in the input (collect it with \`nft list table ${table.family} ${table.name}\`)`,
          },
        ]
      elements = map.elements.filter((e): e is NftElement & {value: string[]} => e.value !== null)
    } else {
      const braced = bracedItems(w, k)
      elements = braced.items.map((it) => {
        const colon = it.indexOf(':')
        return {key: it.slice(0, colon).filter((x) => x !== '.'), value: it.slice(colon + 1)}
      })
    }
    const out: Array<{branch: Branch; at: number} | Exit> = []
    // Element by element: a packet that hits none goes on with the rule's next statement.
    let rest: Branch[] = [b]
    for (const el of elements) {
      const next: Branch[] = []
      for (const br of rest)
        for (const [x, hit] of splitOn(br, this.inAny(br, reads, [el.key], null))) {
          if (!hit) next.push(x)
          else out.push(...this.verdict(x, table, chainName, mapName, el.value, step, depth))
        }
      rest = next
    }
    for (const br of rest) out.push({branch: br, how: 'next', reason: null})
    return out
  }

  /** A verdict written as words (`goto chain`, `drop`): from a map element. */
  private verdict(
    b: Branch,
    table: NftTable,
    chainName: string,
    mapName: string | null,
    words: string[],
    step: (br: Branch, note: string) => void,
    depth: number,
  ): Exit[] {
    const [kind, target] = words
    if (kind === 'jump' || kind === 'goto')
      return this.jump(b, table, kind, target ?? '', step, depth)
    if (kind === 'drop' || kind === 'reject' || kind === 'accept') {
      step(b, kind === 'drop' ? 'dropped' : kind === 'reject' ? 'rejected' : 'accepted')
      return [
        {
          branch: b,
          how: kind,
          reason: kind === 'accept' ? null : this.reason(chainName, mapName, kind),
        },
      ]
    }
    return [
      {branch: b, how: 'unknown', reason: `kp does not follow the verdict \`${words.join(' ')}\``},
    ]
  }

  private jump(
    b: Branch,
    table: NftTable,
    kind: string,
    target: string,
    step: (br: Branch, note: string) => void,
    depth: number,
  ): Exit[] {
    const chain = table.chains.get(target)
    step(b, `${kind} ${target}`)
    if (!chain)
      return [
        {
          branch: b,
          how: 'unknown',
          reason: `chain ${target} is not in the input (collect it with \`nft list table ${table.family} ${table.name}\`)`,
        },
      ]
    return this.chain(b, table, chain, depth + 1).map((e) =>
      // A return (or the end) of a jumped-to chain goes on after the jump; of a goto, it leaves this chain too.
      e.how === 'return' && kind === 'jump' ? {...e, how: 'next'} : e,
    )
  }

  private markSet(
    b: Branch,
    w: readonly string[],
    k: number,
    step: (br: Branch, note: string) => void,
  ): Array<{branch: Branch; at: number} | Exit> {
    // `meta mark set meta mark | 0x4000`, `mark set mark or 0x4000`, `mark set mark xor 0x4000`, `mark set 0x1`.
    let j = k
    if (w[j] === 'meta') j++
    if (w[j] === 'mark') {
      const op = w[j + 1]
      const n = numberOf(w[j + 2] ?? '') ?? 0
      if (op === '|' || op === 'or') b.mark = (b.mark | n) >>> 0
      else if (op === '^' || op === 'xor') b.mark = (b.mark ^ n) >>> 0
      else if (op === '&' || op === 'and') b.mark = (b.mark & n) >>> 0
      j += 3
    } else {
      b.mark = numberOf(w[j] ?? '') ?? b.mark
      j += 1
    }
    step(b, `mark 0x${b.mark.toString(16)}`)
    return [{branch: b, at: j}]
  }

  /** `numgen random mod N vmap { … }`: each element's share is 1/N. */
  private numgen(
    b: Branch,
    table: NftTable,
    w: readonly string[],
    i: number,
    step: (br: Branch, note: string) => void,
    depth: number,
  ): Array<{branch: Branch; at: number} | Exit> {
    const mod = Number(w[i + 3])
    if (
      w[i + 1] !== 'random' ||
      w[i + 2] !== 'mod' ||
      !(mod > 0) ||
      w[i + 4] !== 'vmap' ||
      w[i + 5] !== '{'
    )
      return [{branch: b, how: 'unknown', reason: `kp does not follow \`${w.slice(i).join(' ')}\``}]
    const {items} = bracedItems(w, i + 5)
    const out: Exit[] = []
    let covered = 0
    for (const it of items) {
      const colon = it.indexOf(':')
      const x: Branch = {
        ...b,
        conditions: new Map(b.conditions),
        steps: [...b.steps],
        probability: b.probability / mod,
      }
      covered++
      out.push(...this.verdict(x, table, '', null, it.slice(colon + 1), step, depth))
    }
    if (covered < mod) {
      const x: Branch = {
        ...b,
        conditions: new Map(b.conditions),
        steps: [...b.steps],
        probability: (b.probability * (mod - covered)) / mod,
      }
      out.push({branch: x, how: 'next', reason: null})
    }
    return out
  }

  /** `dnat to IP:PORT`, `dnat ip to IP:PORT`, `dnat ip addr . port to IP . PORT`, `dnat ip to numgen random mod N map { i : IP . PORT }`. */
  private dnat(
    b: Branch,
    w: readonly string[],
    i: number,
    step: (br: Branch, note: string) => void,
  ): Exit[] {
    const to = w.indexOf('to', i)
    const fail = (): Exit[] => [
      {branch: b, how: 'unknown', reason: `kp cannot read the dnat \`${w.slice(i).join(' ')}\``},
    ]
    if (to < 0) return fail()
    const set = (x: Branch, ip: string, port: number | null): Exit => {
      x.destination = ip
      if (port !== null) x.port = port
      x.dnat = port === null ? ip : ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`
      step(x, `DNAT to ${x.dnat}`)
      return {branch: x, how: 'accept', reason: null}
    }
    if (w[to + 1] === 'numgen') {
      const mod = Number(w[to + 4])
      if (!(mod > 0) || w[to + 5] !== 'map' || w[to + 6] !== '{') return fail()
      const {items} = bracedItems(w, to + 6)
      return items.map((it) => {
        const colon = it.indexOf(':')
        const target = it.slice(colon + 1).filter((x) => x !== '.')
        const x: Branch = {
          ...b,
          conditions: new Map(b.conditions),
          steps: [...b.steps],
          probability: b.probability / mod,
        }
        return set(x, target[0]!, target[1] === undefined ? null : Number(target[1]))
      })
    }
    // `IP . PORT` (the short-lived 1.37 pre-release form) or `IP:PORT`.
    if (w[to + 2] === '.') return [set(b, w[to + 1]!, Number(w[to + 3]))]
    const hp = splitHostPort(w[to + 1] ?? '')
    return hp ? [set(b, hp.ip, hp.port)] : fail()
  }

  private reason(
    chain: string,
    map: string | null,
    verdict: 'drop' | 'reject',
    comment: string | null = null,
  ): string {
    const source =
      this.facts.packet.source ?? `of this ${this.facts.packet.from === 'pod' ? 'pod' : 'client'}`
    return (
      nftablesDropReason(chain, map, verdict, source) ??
      iptablesDropReason(comment, source) ??
      `a rule in chain ${chain}${map ? ` (map @${map})` : ''} ${verdict === 'drop' ? 'drops' : 'rejects'} it`
    )
  }
}
