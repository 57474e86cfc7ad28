/**
 * kube-proxy's own test data and many saved dumps lack the jumps from the kernel's built-in
 * chains into kube-proxy's (they are made apart from the restore). Loaded as they are, no packet
 * would reach a rule; so `kp verify` adds the jumps kube-proxy makes (src/kube-proxy/
 * iptables-hooks.ts) where the dump lacks them, and says which it added.
 */
import {IPTABLES_HOOKS} from '../../kube-proxy/iptables-hooks.js'

export function withHooks(text: string): {text: string; added: string[]} {
  const lines = text.split('\n')
  const added: string[] = []
  let table: string | null = null
  let declared = new Set<string>()
  let jumps = new Set<string>()
  const out: string[] = []
  for (const line of lines) {
    if (line.startsWith('*')) {
      table = line.slice(1).trim()
      declared = new Set()
      jumps = new Set()
    } else if (line.startsWith(':')) declared.add(line.slice(1).split(/\s/)[0]!)
    else if (line.startsWith('-A ')) {
      const m = /^-A (\S+) .*-j (\S+)/.exec(line)
      if (m) jumps.add(`${m[1]} ${m[2]}`)
    } else if (line.trim() === 'COMMIT' && table !== null) {
      for (const h of IPTABLES_HOOKS) {
        if (h.table !== table || !declared.has(h.chain) || jumps.has(`${h.builtin} ${h.chain}`))
          continue
        const rule = `-A ${h.builtin}${h.newOnly ? ' -m conntrack --ctstate NEW' : ''} -j ${h.chain}`
        out.push(rule)
        added.push(`-t ${table} ${rule}`)
      }
      table = null
    }
    out.push(line)
  }
  return {text: out.join('\n'), added}
}
