// Generates the nftables rules kube-proxy (nftables mode) writes for the same N ClusterIP
// services × E endpoints as gen-iptables.mjs, in its transaction form: one `add …` per line,
// as in fixtures/nft/upstream-overall/input.nft (docs/kube-proxy-layouts.md
// §3.2–§3.4, chain hashes §3.6). Loading it with `nft -f` and listing it gives the
// `nft list table ip kube-proxy` and `nft -j` forms (scripts/bench.mjs does that in a namespace).
import {createHash} from 'node:crypto'
import {createWriteStream} from 'node:fs'
import {CLUSTER_IP_BASE, POD_CIDR, POD_IP_BASE, ipv4, serviceName} from './gen-iptables.mjs'

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
// kube-proxy's service CIDR rule (§3.3 cluster-ips-check) must cover the generated ClusterIPs.
const SERVICE_CIDR = '172.20.0.0/14'
const T = 'ip kube-proxy'

/** §3.6: base32(sha256(name))[0:8] + "-" + name (40 bits: exactly 8 base32 digits). */
export function nftChainBase(name) {
  const d = createHash('sha256').update(name).digest()
  let bits = 0n
  for (let i = 0; i < 5; i++) bits = (bits << 8n) | BigInt(d[i])
  let hash = ''
  for (let k = 7; k >= 0; k--) hash += BASE32[Number((bits >> BigInt(5 * k)) & 31n)]
  return `${hash}-${name}`
}

/** Buffered line writer: resolves {lines, bytes} when the file is complete. */
export function lineWriter(path) {
  const out = createWriteStream(path)
  let buf = ''
  let lines = 0
  let bytes = 0
  const flush = () => {
    bytes += Buffer.byteLength(buf)
    out.write(buf)
    buf = ''
  }
  return {
    emit(line) {
      buf += line + '\n'
      lines++
      if (buf.length > 1 << 20) flush()
    },
    close() {
      flush()
      return new Promise((resolve, reject) => {
        out.on('error', reject)
        out.end(() => resolve({lines, bytes}))
      })
    },
  }
}

/**
 * Writes the transaction to `path`. Every chain is added before the rules that jump to it
 * (`nft -f` needs that; kube-proxy's own test dumps are sorted by type instead, see
 * test/live/netns.ts objectsBeforeRules).
 */
export function generateNftTransaction(path, {services, endpointsPerService}) {
  const w = lineWriter(path)
  const {emit} = w
  // Top-level objects, as in fixtures/nft/upstream-overall/input.nft.
  emit(`add table ${T} { comment "rules for kube-proxy" ; }`)
  emit(`add set ${T} cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }`)
  emit(
    `add set ${T} nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }`,
  )
  emit(
    `add map ${T} firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`,
  )
  emit(
    `add map ${T} no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`,
  )
  emit(
    `add map ${T} no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`,
  )
  emit(
    `add map ${T} service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`,
  )
  emit(
    `add map ${T} service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`,
  )
  for (const c of [
    'cluster-ips-check',
    'filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }',
    'filter-output-pre-dnat { type filter hook output priority -110 ; }',
    'filter-forward { type filter hook forward priority 0 ; }',
    'filter-input { type filter hook input priority 0 ; }',
    'filter-output { type filter hook output priority 0 ; }',
    'firewall-check',
    'mark-for-masquerade',
    'masquerading',
    'nat-output { type nat hook output priority -100 ; }',
    'nat-postrouting { type nat hook postrouting priority 100 ; }',
    'nat-prerouting { type nat hook prerouting priority -100 ; }',
    'nodeport-endpoints-check',
    'reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }',
    'services',
    'service-endpoints-check',
  ]) {
    emit(`add chain ${T} ${c}`)
  }
  for (const r of [
    'cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"',
    `cluster-ips-check ip daddr { ${SERVICE_CIDR} } drop comment "Drop traffic to unallocated ClusterIPs"`,
    'filter-prerouting-pre-dnat ct state new jump firewall-check',
    'filter-forward ct state new jump service-endpoints-check',
    'filter-forward ct state new jump cluster-ips-check',
    'filter-input ct state new jump nodeport-endpoints-check',
    'filter-input ct state new jump service-endpoints-check',
    'filter-output ct state new jump service-endpoints-check',
    'filter-output-pre-dnat ct state new jump firewall-check',
    'filter-output ct state new jump cluster-ips-check',
    'firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips',
    'mark-for-masquerade mark set mark or 0x4000',
    'masquerading mark and 0x4000 == 0 return',
    'masquerading mark set mark xor 0x4000',
    'masquerading masquerade fully-random',
    'nat-output jump services',
    'nat-postrouting jump masquerading',
    'nat-prerouting jump services',
    'nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports',
    'reject-chain reject',
    'services ip daddr . meta l4proto . th dport vmap @service-ips',
    'services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports',
    'service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services',
  ]) {
    emit(`add rule ${T} ${r}`)
  }

  // Per service port (§3.4): ClusterIP only, Cluster traffic policy, no affinity, the same
  // services, IPs and endpoints as the iptables-save dump so that `kp diff` can compare them.
  for (let i = 0; i < services; i++) {
    const {namespace, name, portName} = serviceName(i)
    const base = nftChainBase(`${namespace}/${name}/tcp/${portName}`)
    const clusterIP = ipv4(CLUSTER_IP_BASE + i)
    const eps = []
    for (let j = 0; j < endpointsPerService; j++) {
      const ip = ipv4(POD_IP_BASE + i * endpointsPerService + j)
      eps.push({
        ip,
        chain: `endpoint-${nftChainBase(`${namespace}/${name}/tcp/${portName}__${ip}/8080`)}`,
      })
    }
    emit('')
    emit(`# ${namespace}/${name}:${portName}`)
    emit(`add chain ${T} service-${base}`)
    for (const e of eps) emit(`add chain ${T} ${e.chain}`)
    emit(
      `add rule ${T} service-${base} ip daddr ${clusterIP} ip saddr != ${POD_CIDR} jump mark-for-masquerade`,
    )
    emit(
      `add rule ${T} service-${base} numgen random mod ${eps.length} vmap { ${eps.map((e, k) => `${k} : goto ${e.chain}`).join(' , ')} }`,
    )
    for (const e of eps) {
      emit(`add rule ${T} ${e.chain} ip saddr ${e.ip} jump mark-for-masquerade`)
      emit(`add rule ${T} ${e.chain} meta l4proto tcp dnat to ${e.ip}:8080`)
    }
    emit(`add element ${T} cluster-ips { ${clusterIP} }`)
    emit(`add element ${T} service-ips { ${clusterIP} . tcp . 80 : goto service-${base} }`)
  }
  return w.close()
}
