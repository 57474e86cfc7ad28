// Generates what `ipvsadm -Ln` prints on a node where kube-proxy in IPVS mode proxies the same
// N ClusterIP services × E endpoints as gen-iptables.mjs (docs/ipvs-layouts.md b.1,
// fixtures/ipvs/generated/ipvsadm-Ln.txt): one virtual server per ClusterIP:port, rr, Masq
// real servers of weight 1, sorted by address then port (all ClusterIPs lie within 2^31 of each
// other, so libipvs's signed comparison keeps them ascending).
import {CLUSTER_IP_BASE, POD_IP_BASE, ipv4} from './gen-iptables.mjs'
import {lineWriter} from './gen-nft.mjs'

/** printf "  -> %-28s %-7s %-6d %-10u %-10u": every real-server line ends in padding. */
export function realServerLine(addrPort, forward, weight, active, inactive) {
  return `  -> ${addrPort.padEnd(28)} ${forward.padEnd(7)} ${String(weight).padEnd(6)} ${String(active).padEnd(10)} ${String(inactive).padEnd(10)}`
}

export function generateIpvsadmList(path, {services, endpointsPerService}) {
  const w = lineWriter(path)
  w.emit('IP Virtual Server version 1.2.1 (size=4096)')
  w.emit('Prot LocalAddress:Port Scheduler Flags')
  w.emit('  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn')
  for (let i = 0; i < services; i++) {
    w.emit(`TCP  ${ipv4(CLUSTER_IP_BASE + i)}:80 rr`)
    for (let j = 0; j < endpointsPerService; j++) {
      w.emit(
        realServerLine(`${ipv4(POD_IP_BASE + i * endpointsPerService + j)}:8080`, 'Masq', 1, 0, 0),
      )
    }
  }
  return w.close()
}
