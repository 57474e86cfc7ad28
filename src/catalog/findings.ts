/**
 * The closed catalogue of finding IDs: the `id` of every finding the renderers and `kp migrate`
 * report (src/analyze/findings.ts). `kp migrate --check --json` prints them and runbooks match
 * on them; docs/codes.md is generated from this table (`npm run docs:codes`).
 */
import type {CodeEntry} from './diagnostics.js'

export const FINDINGS = {
  // --- renderers: kp migrate's target rules (src/render/) ------------------------------------
  RENDER_BAD_ADDRESS: {
    severity: 'error',
    meaning:
      'A frontend address or endpoint of a service port is not a valid address (and port) of its family; it was not rendered.',
    action: 'Check the source state.',
  },
  RENDER_BAD_PORT: {
    severity: 'error',
    meaning:
      'A frontend port, NodePort or healthCheckNodePort is not a port from 1 to 65535; it was not rendered.',
    action: 'Check the source state.',
  },
  RENDER_BAD_SETTING: {
    severity: 'error',
    meaning:
      "A node setting (from the source or an option) or a service's IPVS scheduler is not a value of its kind; it was not written into the rules.",
    action: 'Check where the state came from, or fix the option.',
  },
  RENDER_BAD_SOURCE_RANGE: {
    severity: 'error',
    meaning:
      "loadBalancerSourceRanges that are not CIDRs of the service's family; they were not rendered.",
    action: 'Check the source state.',
  },
  RENDER_DEFAULT_AFFINITY_TIMEOUT: {
    severity: 'info',
    meaning:
      'ClientIP session affinity without a known timeout; the API default (10800 s) was rendered.',
    action: "Check the Service's sessionAffinityConfig.clientIP.timeoutSeconds.",
  },
  RENDER_DEFAULT_CONNTRACK_INVALID_DROP: {
    severity: 'info',
    meaning:
      "Whether conntrack INVALID packets are dropped is not known; kube-proxy's default (true) was rendered.",
    action:
      "Check the node's kube-proxy configuration and pass --conntrack-invalid-drop if it differs.",
  },
  RENDER_DEFAULT_LOCALHOST_NODEPORTS: {
    severity: 'info',
    meaning: "localhostNodePorts is not known; kube-proxy's default (true) was rendered.",
    action:
      "Check the node's kube-proxy configuration and pass --localhost-nodeports if it differs.",
  },
  RENDER_DEFAULT_MASQUERADE_ALL: {
    severity: 'info',
    meaning: "masqueradeAll is not known; kube-proxy's default (false) was rendered.",
    action: "Check the node's kube-proxy configuration and pass --masquerade-all if it differs.",
  },
  RENDER_DEFAULT_MASQUERADE_MARK: {
    severity: 'info',
    meaning: "The masquerade mark is not known; kube-proxy's default (0x4000) was rendered.",
    action: "Check the node's kube-proxy configuration and pass --masquerade-mark if it differs.",
  },
  RENDER_DEFAULT_NODEPORT_ADDRESSES: {
    severity: 'info',
    meaning:
      "nodePortAddresses is not known; kube-proxy's default (every local address) was rendered.",
    action:
      "Check the node's kube-proxy configuration and pass --nodeport-addresses if it differs.",
  },
  RENDER_DEFAULT_RANDOM_FULLY: {
    severity: 'info',
    meaning:
      'Whether MASQUERADE uses --random-fully is not known; true was rendered (iptables and IPVS targets).',
    action: "Check the node's kube-proxy and iptables and pass --random-fully if it differs.",
  },
  RENDER_DEFAULT_SCHEDULER: {
    severity: 'info',
    meaning: "Some services have no known IPVS scheduler; kube-proxy's default (rr) was rendered.",
    action: "Pass --scheduler if the node's kube-proxy configures another.",
  },
  RENDER_DRAINING_ENDPOINTS_LEFT_OUT: {
    severity: 'info',
    meaning: 'Draining IPVS real servers (weight 0) were not rendered as endpoints.',
    action: 'Nothing; they disappear once their connections end.',
  },
  RENDER_ENDPOINTS_UNKNOWN: {
    severity: 'error',
    meaning:
      'A service port forwards traffic today but none of its endpoints could be read, so the rendered rules reject its traffic.',
    action: 'Collect the rules in a form that shows the endpoints, or add --cluster objects.',
  },
  RENDER_ENDPOINT_INCOMPLETE: {
    severity: 'warning',
    meaning: 'An endpoint without a known port was not rendered.',
    action: 'Read the node together with the cluster objects (--cluster).',
  },
  RENDER_ENDPOINT_LOCALITY_UNKNOWN: {
    severity: 'warning',
    meaning:
      'Under a Local traffic policy, which endpoints run on the node is not known; all were treated as remote.',
    action: 'Read the node together with the cluster objects (--cluster) and --node.',
  },
  RENDER_EXTERNAL_KIND_GUESSED: {
    severity: 'info',
    meaning:
      'An nftables source cannot tell an externalIP from a LoadBalancer IP; it was rendered as an externalIP.',
    action: 'Read the node together with the cluster objects (--cluster).',
  },
  RENDER_FRONTEND_INCOMPLETE: {
    severity: 'warning',
    meaning: 'A frontend without a known address or port was not rendered.',
    action: 'Read the node together with the cluster objects (--cluster).',
  },
  RENDER_HEALTH_CHECK_NODEPORT_NO_RULE: {
    severity: 'info',
    meaning:
      'nftables mode writes no rule for the healthCheckNodePort (kube-proxy serves it on a host socket).',
    action: 'Make sure the host firewall accepts the health check node port.',
  },
  RENDER_JUMP_RULES_NOT_INCLUDED: {
    severity: 'info',
    meaning:
      'The jump rules in the built-in chains are not part of the rendered restore input (kube-proxy inserts them itself).',
    action:
      'Let kube-proxy start in the new mode (it adds them), or insert them with iptables -I when testing the files alone.',
  },
  RENDER_LARGE_CLUSTER_MODE: {
    severity: 'info',
    meaning:
      "Over kube-proxy's large-cluster threshold of endpoints, endpoint comments were left out, as kube-proxy does.",
    action: 'Nothing.',
  },
  RENDER_NODEPORT_ADDRESSES_WIDER_THAN_DEFAULT: {
    severity: 'warning',
    meaning:
      "Neither nodePortAddresses nor the node's IPs are known, so the nftables rules accept NodePorts on every local address, while a default-configured kube-proxy (`primary`) accepts them on the primary IPs only.",
    action: 'Pass --node-ip (the primary IP first) or --nodeport-addresses.',
  },
  RENDER_HAIRPIN_LOCALITY_UNKNOWN: {
    severity: 'info',
    meaning:
      'kube-proxy 1.36+ lists only node-local endpoints in hairpin-connections; endpoints whose locality the source does not show were listed too (harmless for remote ones).',
    action: 'Read the node together with the cluster objects (--cluster) and --node.',
  },
  RENDER_LOCALHOST_NODEPORTS_UNSUPPORTED: {
    severity: 'warning',
    meaning:
      'nodePortAddresses includes a loopback address, which nftables mode never serves NodePorts on.',
    action: 'Make clients use a node address instead of localhost.',
  },
  RENDER_LOOPBACK_SET_INCOMPLETE: {
    severity: 'warning',
    meaning:
      'Endpoint locality is not known, so the IPVS KUBE-LOOP-BACK set may miss hairpin entries.',
    action: 'Read the node together with the cluster objects (--cluster) and --node.',
  },
  RENDER_MISSING_LOCAL_DETECTOR: {
    severity: 'warning',
    meaning:
      'The local-traffic detector (pod CIDR or interface) is not known; masquerade rules for off-cluster traffic were left out.',
    action: 'Pass --pod-cidr (or --local-detector interface --local-interface NAME).',
  },
  RENDER_MISSING_LOCAL_INTERFACE: {
    severity: 'warning',
    meaning:
      'The detector is by interface but the interface name is not known; the detector matches were left out.',
    action: 'Pass --local-interface.',
  },
  RENDER_MISSING_NODE_IPS: {
    severity: 'warning',
    meaning:
      "The node's addresses are not known, so NodePort addresses (or IPVS NodePort virtual servers) were not rendered.",
    action: 'Pass the node addresses with --node-ip.',
  },
  RENDER_MISSING_POD_CIDR: {
    severity: 'warning',
    meaning:
      'The detector is "cidr" but no pod CIDR of a family is known; that family\'s masquerade rules for off-cluster traffic were left out.',
    action: 'Pass the cluster CIDR with --pod-cidr.',
  },
  RENDER_MISSING_SERVICE_CIDRS: {
    severity: 'info',
    meaning:
      'The service CIDRs are not known, so the nftables rule that drops traffic to unallocated ClusterIPs was left out.',
    action: "Pass --service-cidr with the cluster's service CIDRs.",
  },
  RENDER_NODEPORT_ADDRESSES_FROM_FRONTENDS: {
    severity: 'info',
    meaning:
      'nodePortAddresses is not known; NodePorts were rendered on the node addresses the source shows them on.',
    action: "Pass --nodeport-addresses if the node's kube-proxy configures others.",
  },
  RENDER_NODE_IP_UNKNOWN_FOR_SOURCE_RANGES: {
    severity: 'info',
    meaning:
      'The node IP is not known, so the LoadBalancer source-range rules were rendered as if the node were outside the ranges.',
    action: 'Pass the node addresses with --node-ip.',
  },
  RENDER_NO_CLUSTER_IP: {
    severity: 'warning',
    meaning: 'No ClusterIP is known for a service port; only its other frontends were rendered.',
    action: 'Read the node together with the cluster objects (--cluster).',
  },
  RENDER_SCHEDULER_NOT_EXPRESSIBLE: {
    severity: 'warning',
    meaning:
      'An IPVS scheduler other than rr cannot be expressed in iptables or nftables; endpoints are picked at random.',
    action:
      'Check random selection is acceptable (use sessionAffinity: ClientIP for source stickiness).',
  },
  RENDER_SEVERAL_NODEPORTS: {
    severity: 'warning',
    meaning:
      'The source shows several NodePorts for one service port; only the first was rendered.',
    action: 'Check the source for leftovers of an older Service definition.',
  },
  RENDER_SEVERAL_POD_CIDRS: {
    severity: 'warning',
    meaning: "Several pod CIDRs of one family; kube-proxy's cidr detector uses only the first.",
    action: "Check which CIDR the node's kube-proxy uses (--pod-cidr).",
  },
  RENDER_SYNTHETIC_NAME: {
    severity: 'warning',
    meaning:
      "A service port has no known name; chain names were made up from ClusterIP:port/protocol and will differ from kube-proxy's.",
    action: 'Read the node together with the cluster objects (--cluster).',
  },
  RENDER_UNKNOWN_PORT_NAME: {
    severity: 'warning',
    meaning:
      "A port name is not known; it was rendered as an unnamed port, so chain-name hashes may differ from kube-proxy's.",
    action: 'Read the node together with the cluster objects (--cluster).',
  },
  RENDER_UNSAFE_NAME: {
    severity: 'error',
    meaning:
      'A namespace, name or port name has characters no Kubernetes object can have; a made-up name was rendered instead.',
    action: 'Check where the state came from.',
  },
  RENDER_WEIGHTS_NOT_EXPRESSIBLE: {
    severity: 'warning',
    meaning:
      'IPVS weights other than 1 cannot be expressed in iptables or nftables; every endpoint gets the same share.',
    action: 'Check equal shares are acceptable for the service.',
  },

  // --- kp migrate checks (src/analyze/migrate/) ---------------------------------------------
  MIGRATE_CONNTRACK_INVALID_DROP: {
    severity: ['warning', 'info'],
    meaning:
      'Leaving iptables mode drops its conntrack INVALID-drop workaround for a pre-6.1 kernel bug (warning unless the kernel is known to be fixed).',
    action:
      'Check the iptables_ct_state_invalid_dropped_packets_total metric; if it is not zero, run the new mode with conntrack.tcpBeLiberal: true.',
  },
  MIGRATE_CONNTRACK_INVALID_DROP_ADDED: {
    severity: 'info',
    meaning:
      'Moving to iptables mode adds a rule that drops conntrack INVALID packets in KUBE-FORWARD.',
    action: 'Nothing, unless traffic relies on INVALID packets (then set conntrack.tcpBeLiberal).',
  },
  MIGRATE_CONNTRACK_INVALID_DROP_UNVERIFIED: {
    severity: 'info',
    meaning:
      'The input does not show whether the iptables conntrack INVALID-drop workaround is in use.',
    action: 'Check the kernel version and the KUBE-FORWARD chain of the node.',
  },
  MIGRATE_CONNTRACK_KERNEL_BUG: {
    severity: 'info',
    meaning:
      "The node's kernel has the conntrack bug that resets long-lived connections; neither mode works around it.",
    action: 'Upgrade the kernel to 6.1+ if long-lived connections matter.',
  },
  MIGRATE_FOREIGN_REFERENCES: {
    severity: 'warning',
    meaning:
      'Rules of other components (CNI, NetworkPolicy, DNS cache) refer to kube-proxy objects the target mode does not create.',
    action: 'Update those components for the target mode before switching.',
  },
  MIGRATE_FOREIGN_REFERENCES_UNVERIFIED: {
    severity: 'info',
    meaning:
      "Cluster objects only: kp cannot see rules of other components that refer to kube-proxy's objects.",
    action: 'Run kp migrate on a node dump or live.',
  },
  MIGRATE_HOST_FIREWALL: {
    severity: 'warning',
    meaning:
      'Host firewall rules may block NodePorts (or forwarded service traffic) once kube-proxy stops opening them.',
    action: 'Allow the NodePort range (and forwarded service traffic) in the host firewall.',
  },
  MIGRATE_HOST_FIREWALL_UNVERIFIED: {
    severity: 'warning',
    meaning: 'kp cannot verify that the host firewall lets NodePorts through in the target mode.',
    action: 'Check the host firewall allows the NodePort range.',
  },
  MIGRATE_INPUT_INCOMPLETE: {
    severity: 'info',
    meaning:
      'The input had warnings, or is a fragment (service ports marked incomplete); what kp skipped or the input lacks was not checked for migration caveats.',
    action:
      'Look at the warnings on stderr and fix or complete the input; for a fragment, collect the whole state with the command the finding names.',
  },
  MIGRATE_IPVS_AWARE_AGENTS_UNVERIFIED: {
    severity: 'info',
    meaning:
      'Components that adapt to IPVS mode (Calico, monitoring agents, NodeLocal DNSCache) cannot be seen in a dump.',
    action: 'Check their configuration for IPVS-specific settings before switching.',
  },
  MIGRATE_IPVS_CONFIG: {
    severity: 'info',
    meaning: 'The ipvs.* fields of the kube-proxy configuration do nothing in another mode.',
    action: 'Remove the ipvs.* fields from the kube-proxy configuration.',
  },
  MIGRATE_IPVS_DEPRECATED: {
    severity: 'warning',
    meaning:
      'IPVS mode is deprecated (v1.35, KEP-5495); planned off by default in 1.40 (gate KubeProxyIPVS) and removed in 1.43, when kube-proxy refuses to start in it.',
    action:
      'Prefer `--to nftables` (or stay on iptables); move to IPVS only for a short-term need.',
  },
  MIGRATE_IPVS_DRAINING: {
    severity: 'info',
    meaning:
      'Real servers are draining at weight 0; the target mode removes a terminated endpoint at once.',
    action: 'Nothing; existing flows finish through conntrack.',
  },
  MIGRATE_IPVS_DUAL_STACK: {
    severity: 'info',
    meaning: 'IPv6 service ports move too, into ip6tables or a separate `table ip6 kube-proxy`.',
    action: 'Check IPv6 tooling and firewall rules for the target mode.',
  },
  MIGRATE_IPVS_FLUSH_UNVERIFIED: {
    severity: 'info',
    meaning:
      'No IPVS listing in the input: kp cannot tell whether another component uses IPVS, which nftables kube-proxy flushes.',
    action: 'Check `ipvsadm -Ln` on the node before switching.',
  },
  MIGRATE_IPVS_FOREIGN_FLUSHED: {
    severity: 'error',
    meaning:
      'IPVS virtual servers kube-proxy did not create (keepalived, kube-vip, ...) will be deleted when kube-proxy starts in nftables mode.',
    action:
      'Move these virtual servers off the node first, or re-create them right after kube-proxy has started in nftables mode.',
  },
  MIGRATE_IPVS_FRONTENDS_DISAGREE: {
    severity: 'warning',
    meaning:
      "The IPVS virtual servers of a service port have different real servers (kubernetes #89923); every target mode, IPVS too, programs one endpoint set per service port, so the disagreement does not survive the switch. Each frontend's list and the service port's are given.",
    action:
      'Compare the endpoints with the EndpointSlices and keep `kp list -o wide` of the node before switching; a real server only some frontends had is rendered for all.',
  },
  MIGRATE_IPVS_LOCAL_FALLBACK: {
    severity: 'error',
    meaning:
      'Local traffic policies without a local endpoint fall back to cluster endpoints in IPVS; the target mode drops that traffic.',
    action:
      'For externalTrafficPolicy: Local rely on healthCheckNodePort; for internalTrafficPolicy: Local run an endpoint on the node or use Cluster.',
  },
  MIGRATE_IPVS_LOCAL_FALLBACK_UNVERIFIED: {
    severity: 'warning',
    meaning:
      'kp cannot verify traffic policies and endpoint locality for externally reachable service ports (IPVS falls back, the target drops).',
    action: 'Read the node together with the cluster objects (--cluster) and --node.',
  },
  MIGRATE_IPVS_PREREQUISITES_UNVERIFIED: {
    severity: 'info',
    meaning: 'kp cannot verify the IPVS kernel modules and ipset version IPVS mode needs.',
    action: 'Check the ip_vs modules and ipset 6.0+ on the node.',
  },
  MIGRATE_IPVS_SCHEDULER_LOAD_AWARE: {
    severity: 'info',
    meaning:
      'A load-aware IPVS scheduler cannot be expressed in the target mode; selection becomes random.',
    action: 'Nothing to configure; watch endpoint load after the switch.',
  },
  MIGRATE_IPVS_SCHEDULER_STICKY: {
    severity: ['warning', 'info'],
    meaning:
      'A source-hash IPVS scheduler cannot be expressed; source stickiness is lost (warning when no session affinity protects it).',
    action: 'Set sessionAffinity: ClientIP on the services that need stickiness.',
  },
  MIGRATE_IPVS_VIPS_NOT_LOCAL: {
    severity: ['warning', 'info'],
    meaning:
      'Service IPs stop being local addresses of the node (no ping, no ARP answers); warning when external addresses are affected.',
    action: 'Check load balancers and clients that rely on ARP or ping to service IPs.',
  },
  MIGRATE_IPVS_VIP_OTHER_PORTS: {
    severity: 'info',
    meaning: 'Host sockets reached through service IPs on non-service ports stop being reachable.',
    action: 'Check nothing connects to host services through a service IP.',
  },
  MIGRATE_IPVS_WEIGHTS: {
    severity: 'warning',
    meaning:
      'Real-server weights set outside kube-proxy cannot be expressed; every endpoint gets the same share.',
    action: 'Scale the backing workloads instead of weighting real servers.',
  },
  MIGRATE_LEFTOVERS: {
    severity: 'info',
    meaning: 'Leftover objects of another proxy mode are on the node.',
    action: 'Remove them with `kube-proxy --cleanup` (or a reboot) before switching.',
  },
  MIGRATE_NODE_TO_EXTERNAL_IPS: {
    severity: 'warning',
    meaning:
      "An old iptables layout leaves the node's own connections to externalIPs un-NATed; the target mode DNATs them to the endpoints.",
    action:
      'Check what processes on the node expect at those addresses, and point them at the real host address if it is not the Service.',
  },
  MIGRATE_NODE_TO_LOCAL_SERVICE_ALL_ENDPOINTS: {
    severity: 'info',
    meaning:
      "An old iptables layout (KUBE-XLB before ≈1.15) sends the node's own connections to an externalTrafficPolicy=Local NodePort or external address to local endpoints only (dropped when none); the target mode sends them to every endpoint.",
    action:
      'Check processes on the node that rely on reaching a local endpoint only, or on the drop.',
  },
  MIGRATE_MARKED_DROPS_ENFORCED: {
    severity: 'warning',
    meaning:
      'An old iptables layout (≤1.24) only marks for drop a connection from outside loadBalancerSourceRanges, or to an externalTrafficPolicy=Local address with no local endpoint: forwarded, it leaves un-NATed. The target mode drops it.',
    action:
      'Check whether anything behind the node answers such connections today; after the switch they are dropped.',
  },
  MIGRATE_LOCALHOST_NODEPORTS: {
    severity: 'warning',
    meaning: 'localhost:NODEPORT works today and stops working in the target mode.',
    action: 'Point such clients at the node IP or the ClusterIP.',
  },
  MIGRATE_LOCALHOST_NODEPORTS_ENABLED: {
    severity: 'info',
    meaning:
      'iptables mode opens IPv4 NodePorts on 127.0.0.1 (and sets route_localnet), which are not served there today.',
    action: 'Set iptables.localhostNodePorts: false if that is not wanted.',
  },
  MIGRATE_LOCALHOST_NODEPORTS_UNVERIFIED: {
    severity: 'info',
    meaning: 'kp cannot verify whether NodePorts are used on 127.0.0.1 today.',
    action: 'Check local clients of localhost:NODEPORT before switching.',
  },
  MIGRATE_LOCAL_POLICY_FALLBACK_ADDED: {
    severity: 'warning',
    meaning:
      'Local traffic policies without a local endpoint drop today; IPVS mode forwards that traffic to other nodes instead.',
    action: 'Check that forwarding (and losing the client source IP) is acceptable.',
  },
  MIGRATE_MASQUERADE_FULLY_RANDOM: {
    severity: 'info',
    meaning:
      "Masquerading becomes fully-random in nftables mode (today's MASQUERADE has no --random-fully).",
    action: 'Nothing, unless something relies on SNAT source ports.',
  },
  MIGRATE_MASQUERADE_FULLY_RANDOM_UNVERIFIED: {
    severity: 'info',
    meaning:
      'Masquerading is fully-random in nftables mode; the input does not show whether it is today.',
    action: 'Nothing, unless something relies on SNAT source ports.',
  },
  MIGRATE_NFT_KERNEL_TOO_OLD: {
    severity: 'error',
    meaning: "The node's kernel is older than nftables mode needs.",
    action: 'Upgrade the kernel first; on kernels too old for nftables stay on iptables mode.',
  },
  MIGRATE_NFT_KERNEL_UNKNOWN: {
    severity: 'warning',
    meaning: 'The input does not show the kernel version nftables mode needs.',
    action: 'Check `uname -r` on the node (`kp collect` records it).',
  },
  MIGRATE_NFT_TOOL_TOO_OLD: {
    severity: 'error',
    meaning: "The host nft is older than 1.0.0 and can corrupt kube-proxy's nftables state.",
    action: 'Upgrade nft (nftables 1.0.0+) on the host before switching.',
  },
  MIGRATE_NFT_TOOL_UNKNOWN: {
    severity: 'info',
    meaning: 'The input does not show the version of the host nft tool (it must be 1.0.0+).',
    action: 'Check `nft --version` on the node.',
  },
  MIGRATE_NODEPORT_ADDRESSES: {
    severity: 'warning',
    meaning:
      'NodePorts on non-primary node addresses stop working in nftables mode (its default serves only the primary IPs).',
    action:
      "Set nodePortAddresses (for example `0.0.0.0/0`) to keep today's behaviour, or point the clients at the primary IP.",
  },
  MIGRATE_NODEPORT_ADDRESSES_UNVERIFIED: {
    severity: 'warning',
    meaning:
      'kp cannot verify which node addresses NodePorts are used on (nftables mode serves only the primary IPs by default).',
    action: 'Check nodePortAddresses and the node addresses clients use.',
  },
  MIGRATE_NODEPORT_ADDRESSES_WIDEN: {
    severity: 'info',
    meaning:
      'Leaving nftables mode, NodePorts may open on more node addresses (every local address by default).',
    action: 'Set nodePortAddresses if NodePorts must stay on the primary IPs.',
  },
  MIGRATE_NO_AUTOMATIC_CLEANUP: {
    severity: 'warning',
    meaning:
      "kube-proxy does not clean up the old mode's objects when switching between iptables and IPVS.",
    action:
      'Run `kube-proxy --cleanup` (or reboot the node) between stopping the old mode and starting the new one.',
  },
  MIGRATE_SESSION_AFFINITY_SCOPE: {
    severity: ['warning', 'info'],
    meaning:
      'Session affinity changes scope and timing (IPVS templates per frontend vs one per service port); warning for short timeouts.',
    action: 'Check the affinity timeouts of the services listed.',
  },
  MIGRATE_SOURCE_MODE_UNKNOWN: {
    severity: 'warning',
    meaning:
      'The input does not say which mode kube-proxy runs in today; only the checks that hold for every source mode were made.',
    action: 'Pass --from iptables|ipvs|nftables, or run kp migrate on a node dump or live.',
  },
  MIGRATE_VIPS_BECOME_LOCAL: {
    severity: ['warning', 'info'],
    meaning:
      'Moving to IPVS binds every service IP to kube-ipvs0: they answer ping and (without strictARP) ARP; warning when external addresses are affected.',
    action: 'Set ipvs.strictARP: true when a load balancer announces the external addresses.',
  },
  MIGRATE_CLUSTER_IP_OTHER_PORTS_REJECTED: {
    severity: 'info',
    meaning:
      'Connections to a ClusterIP on a port no Service uses time out in iptables mode (they leave un-NATed) and are refused in nftables mode (cluster-ips-check).',
    action: 'Check clients and probes that rely on the timeout.',
  },
  MIGRATE_CLUSTER_IP_OTHER_PORTS_OPEN: {
    severity: 'info',
    meaning:
      'Connections to a ClusterIP on a port no Service uses are refused in nftables mode (cluster-ips-check) and pass un-NATed in iptables mode, to whatever routes them.',
    action:
      'Ports no Service uses on a ClusterIP now pass un-NATed to whatever routes them: check clients that rely on the refusal.',
  },
  MIGRATE_CNI_NFTABLES_MODE: {
    severity: 'warning',
    meaning:
      'The CNI (Calico, kube-router) writes iptables rules here and must be switched to its nftables mode with kube-proxy.',
    action: 'Calico: nftablesMode: Enabled; kube-router: a release with nftables support.',
  },
  MIGRATE_CNI_NFTABLES_MODE_UNVERIFIED: {
    severity: 'info',
    meaning:
      "kp cannot tell the CNI: the input shows neither the node's other iptables chains nor its other nftables tables.",
    action: 'Check the CNI and its dataplane mode before switching.',
  },
  MIGRATE_DEFAULT_MODE_CHANGE: {
    severity: 'warning',
    meaning:
      "kube-proxy's configuration does not set mode; when KEP-5343 makes nftables the default, an upgrade switches the node unplanned.",
    action: 'Set mode explicitly.',
  },
  MIGRATE_DEFAULT_MODE_CHANGE_UNVERIFIED: {
    severity: 'info',
    meaning:
      'kp cannot tell whether kube-proxy sets its mode (a node that does not migrates when KEP-5343 flips the default).',
    action: 'Give the kube-proxy ConfigMap with --kube-proxy-config.',
  },
  MIGRATE_NFT_BINARY_UNVERIFIED: {
    severity: 'info',
    meaning:
      'A kube-proxy run on the host (k3s, rke2, k0s) needs an nft binary there, with JSON support before 1.37.',
    action: 'Check `nft --version` and `nft -j list tables` on such nodes.',
  },
  MIGRATE_NFT_FOREIGN_NEWER_NFT: {
    severity: ['error', 'warning'],
    meaning:
      "The host's nft (1.1.3 or newer) writes tables that crash the nft inside kube-proxy before 1.37: syncs never finish (kubernetes #136786, #140898); a warning for 1.36, which lists with --terse.",
    action: 'Run kube-proxy 1.37 or newer before switching.',
  },
  MIGRATE_NFT_FOREIGN_NEWER_NFT_UNVERIFIED: {
    severity: 'warning',
    meaning:
      "The host's nft is 1.1.3 or newer, and kp cannot see whether other nftables tables exist that would crash kube-proxy's nft.",
    action: 'Run `nft list tables`; with other tables, run kube-proxy 1.37 or newer.',
  },
  MIGRATE_NFT_KERNEL_FEATURES_MISSING: {
    severity: 'error',
    meaning:
      '`nft --check` of the rendered rules in a namespace on this node failed: the kernel lacks a feature they use (nft_fib, numgen, nat, masq, reject, ct).',
    action: 'Load or build the missing kernel modules before switching.',
  },
  MIGRATE_NFT_KERNEL_FEATURES_UNVERIFIED: {
    severity: 'info',
    meaning:
      'kp did not load the rendered nftables rules into this kernel, so missing modules (nft_fib, numgen, ...) are not ruled out.',
    action: 'Run kp migrate --check-kernel as root on the node.',
  },
  MIGRATE_NFT_LONG_NAME: {
    severity: 'error',
    meaning:
      'A service port name (ns/name:port) is over 128 bytes: nftables kube-proxy before 1.37 fails every sync with it (kubernetes #139515).',
    action: 'Run kube-proxy 1.37 or newer, or shorten the names.',
  },
  MIGRATE_NFT_SCALE: {
    severity: ['warning', 'info'],
    meaning:
      'The node has enough service ports or endpoints for nftables full syncs to take minutes (kubernetes #135639, #139513); info from kube-proxy 1.36.',
    action: 'Run kube-proxy 1.36 or newer; watch the sync duration metric on one node first.',
  },
} as const satisfies Record<string, Omit<CodeEntry, 'exit'>>

/** A finding ID; Finding.id takes only these. */
export type FindingId = keyof typeof FINDINGS
