/**
 * The findings every renderer writes: the finding constructor, the documentation they point to,
 * and the node-wide findings (jump rules, the same finding from each family).
 */
import type {Finding} from '../analyze/findings.js'
import type {FindingId} from '../catalog/findings.js'

/** The mode a renderer writes rules for; named in the findings. */
export type RenderTarget = 'iptables' | 'nftables' | 'ipvs'

export const DOCS_VIRTUAL_IPS = 'https://kubernetes.io/docs/reference/networking/virtual-ips/'
export const DOCS_KUBE_PROXY_CONFIG =
  'https://kubernetes.io/docs/reference/config-api/kube-proxy-config.v1alpha1/'

export function finding(
  id: FindingId,
  severity: Finding['severity'],
  title: string,
  message: string,
  more: Partial<Pick<Finding, 'services' | 'addresses' | 'evidence' | 'action' | 'docs'>> = {},
): Finding {
  return {
    id,
    severity,
    title,
    message,
    services: more.services ?? [],
    addresses: more.addresses ?? [],
    evidence: more.evidence ?? [],
    action: more.action ?? '',
    docs: more.docs ?? null,
  }
}

/** The same node-wide finding can come from each family; keep one. */
export function dedupeFindings(findings: Finding[]): Finding[] {
  const seen = new Set<string>()
  return findings.filter((f) => {
    const key = `${f.id}\u0000${f.title}\u0000${f.services.join(',')}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * kube-proxy adds its jump rules to the built-in chains once with `iptables -I` (EnsureRule), not
 * in its restore input; the rendered files therefore do not contain them either.
 */
export function jumpRulesFinding(target: RenderTarget, jumps: string[]): Finding {
  return finding(
    'RENDER_JUMP_RULES_NOT_INCLUDED',
    'info',
    'the jump rules in the built-in chains are not part of the rendered restore input',
    `kube-proxy inserts its jump rules into the built-in chains once (iptables -I) rather than through its restore input, and the ${target} files follow it. Until kube-proxy runs (or they are added by hand), the rendered chains are not reached: ${jumps.join('; ')}.`,
    {
      action:
        'Let kube-proxy start in the new mode (it adds them), or insert them by hand with iptables -I when testing the files alone.',
    },
  )
}
