/**
 * kube-proxy's own test data and many saved dumps lack the jumps from the kernel's built-in
 * chains into kube-proxy's (they are made apart from the restore). Loaded as they are, no packet
 * would reach a rule; so `kp verify` adds the jumps kube-proxy makes (src/kube-proxy/
 * iptables-hooks.ts) where the dump lacks them, and says which it added.
 */
import {IPTABLES_HOOKS} from '../../kube-proxy/iptables-hooks.js'
import {KUBE_CHAIN_PREFIX, KUBE_MARK_DROP} from '../../kube-proxy/iptables-names.js'

/**
 * nft's command form (`add rule ...`) as kube-proxy's tests write it may name a chain before the
 * line that adds it; nft refuses that in one transaction, so tables, then chains, sets and maps
 * are added first. Other text is left as it is.
 */
export function nftObjectsFirst(text: string): string {
  const lines = text.split('\n')
  if (!lines.some((l) => /^add rule /.test(l))) return text
  const rank = (l: string) =>
    /^(add|delete|flush) table /.test(l)
      ? 0
      : /^add (chain|set|map|flowtable|counter) /.test(l)
        ? 1
        : 2
  return [0, 1, 2].flatMap((r) => lines.filter((l) => rank(l) === r)).join('\n')
}

/**
 * The kubelet's KUBE-MARK-DROP (mark 0x8000) and the rule of its KUBE-FIREWALL that drops marked
 * packets, added when the dump jumps to KUBE-MARK-DROP without declaring it.
 */
function kubeletMarkDrop(text: string): {text: string; added: string[]} {
  const name = KUBE_MARK_DROP
  if (!text.includes(`-j ${name}`) || text.includes(`\n:${name} `)) return {text, added: []}
  const chain = [`:${name} - [0:0]`, `-A ${name} -j MARK --set-xmark 0x8000/0x8000`]
  const drops = ['INPUT', 'OUTPUT', 'FORWARD'].map(
    (c) => `-A ${c} -m mark --mark 0x8000/0x8000 -j DROP`,
  )
  let out = text.replace(/^\*nat\n/m, `*nat\n${chain.join('\n')}\n`)
  out = /^\*filter$/m.test(out)
    ? out.replace(/^\*filter\n/m, `*filter\n${drops.join('\n')}\n`)
    : `*filter\n${drops.join('\n')}\nCOMMIT\n${out}`
  return {
    text: out,
    added: [
      ...chain.slice(1).map((l) => `added: -t nat ${l}`),
      ...drops.map((l) => `added: -t filter ${l}`),
    ],
  }
}

const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'])

/**
 * The rules as kube-proxy alone would have them: the jumps it makes from the built-in chains where
 * the dump lacks them, other programs' jumps (CNI, Docker) left out and DROP policies opened, so
 * the kernel's verdicts are kube-proxy's. Every change is listed.
 */
export function withHooks(dump: string): {text: string; added: string[]} {
  const mark = kubeletMarkDrop(dump)
  const lines = mark.text.split('\n')
  const added: string[] = [...mark.added]
  let table: string | null = null
  let declared = new Set<string>()
  let jumps = new Set<string>()
  const out: string[] = []
  for (const line of lines) {
    if (line.startsWith('*')) {
      table = line.slice(1).trim()
      declared = new Set()
      jumps = new Set()
    } else if (line.startsWith(':')) {
      const [chain, policy] = line.slice(1).split(/\s/)
      declared.add(chain!)
      if (BUILTIN.has(chain!) && policy === 'DROP') {
        out.push(`:${chain} ACCEPT [0:0]`)
        added.push(`policy: -t ${table} -P ${chain} ACCEPT (was DROP)`)
        continue
      }
    } else if (/^(\[\d+:\d+\] )?-A /.test(line)) {
      const m = /-A (\S+) .*-j (\S+)/.exec(line)
      if (m && BUILTIN.has(m[1]!) && declared.has(m[2]!) && !m[2]!.startsWith(KUBE_CHAIN_PREFIX)) {
        // Another program's chain (a CNI's, Docker's): its verdicts are not kube-proxy's.
        added.push(`skipped: -t ${table} ${line.replace(/^\[\d+:\d+\] /, '')}`)
        continue
      }
      if (m) jumps.add(`${m[1]} ${m[2]}`)
    } else if (line.trim() === 'COMMIT' && table !== null) {
      for (const h of IPTABLES_HOOKS) {
        if (h.table !== table || !declared.has(h.chain) || jumps.has(`${h.builtin} ${h.chain}`))
          continue
        const rule = `-A ${h.builtin}${h.newOnly ? ' -m conntrack --ctstate NEW' : ''} -j ${h.chain}`
        out.push(rule)
        added.push(`added: -t ${table} ${rule}`)
      }
      table = null
    }
    out.push(line)
  }
  return {text: out.join('\n'), added}
}
