/**
 * The diagnostic codes of the readers of kernel rule dumps (iptables, nftables, IPVS, ipset,
 * ip addr): one part of the catalogue ./diagnostics.ts joins.
 */
import type {CodeEntry} from './code-entry.js'

export const RULE_DUMP_DIAGNOSTICS = {
  // --- iptables-save (src/readers/iptables/) ------------------------------------------------
  IPT_BAD_PROBABILITY: {
    severity: 'warning',
    meaning:
      'A `--probability` value is not a number from 0 to 1; that rule is read as unconditional.',
    action: 'Check the dump for hand edits or corruption; the endpoint shares shown may be wrong.',
  },
  IPT_DELETED_CHAIN: {
    severity: 'info',
    meaning:
      'A per-service or endpoint chain is deleted by `-X` (a resync removing a stale service); it is not read as a service.',
    action: 'Nothing: this is how iptables-restore input removes stale chains.',
  },
  IPT_DELETED_CHAIN_HAS_RULES: {
    severity: 'warning',
    meaning: '`-X` deletes a chain that still has rules; iptables-restore would refuse this input.',
    action: 'Check that the input is a real iptables-save / restore file and not edited by hand.',
  },
  IPT_DUPLICATE_FAMILY: {
    severity: 'warning',
    meaning:
      'A second dump of the same family (IPv4 or IPv6) for one node; its service ports are read too, so some may appear twice.',
    action: 'Give one iptables-save and one ip6tables-save per node.',
  },
  IPT_DUPLICATE_TABLE: {
    severity: 'warning',
    meaning:
      'A table header appears again in one input (two dumps pasted together?); the rules are read as one table.',
    action: 'Give each dump as its own file with -f.',
  },
  IPT_EMPTY_CHAIN: {
    severity: ['warning', 'info'],
    meaning:
      'A kube-proxy chain is declared but has no rules, so no endpoints are read from it (info when the service has no endpoints and its traffic is rejected).',
    action: 'Check whether the service has endpoints; otherwise the dump may be cut or edited.',
  },
  IPT_FOCUSED_READ: {
    severity: 'info',
    meaning:
      '`kp explain` read only the rules of the matching services and the node-wide chains; checks of the whole dump were skipped.',
    action: 'Nothing; run `kp list` on the same input for the whole-dump checks.',
  },
  IPT_FRONTEND_CONFLICT: {
    severity: 'warning',
    meaning: 'One frontend (address, port and protocol) is claimed by two service ports.',
    action: 'Check the dump for hand edits, or two kube-proxy syncs mixed in one file.',
  },
  IPT_HASH_MISMATCH: {
    severity: 'warning',
    meaning:
      'A KUBE-SVC-/SEP-/... chain name does not carry the hash kube-proxy computes from the service port (or endpoint) it serves.',
    action: 'The dump was hand-edited, corrupted or not written by kube-proxy; re-collect it.',
  },
  IPT_HEALTH_CHECK_ONLY: {
    severity: 'info',
    meaning:
      'A health check node port rule names a service that has no other rule; it is not read as a service.',
    action: 'Nothing, unless the service should be there: then the dump may be incomplete.',
  },
  IPT_INCOMPATIBLE_TABLE: {
    severity: 'warning',
    meaning:
      'iptables-save says a table is incompatible (written by a newer tool or nft); its rules are not in the dump.',
    action:
      'Dump with the iptables binary kube-proxy uses (iptables-nft or iptables-legacy, same version).',
  },
  IPT_IPVS_MODE: {
    severity: 'error',
    meaning:
      'The iptables dump is from kube-proxy in IPVS mode (no per-service chains); alone it holds no services.',
    action:
      'Read it together with `ipvsadm -Sn` and `ipset save` of the same node (one -f each), or use `kp collect`.',
  },
  IPT_LIST_NAMES: {
    severity: 'error',
    meaning:
      'An `iptables -L` listing made without `-n` shows addresses or ports as names (`localhost`, `dpt:http`); kp does not resolve them, so the rules that use them are not known.',
    action: 'List again with `-n` (`iptables -t nat -L -n -v`), or give `iptables-save`.',
  },
  IPT_LIST_NO_INTERFACES: {
    severity: 'warning',
    meaning:
      'An `iptables -L` listing made without `-v` has no in/out interface columns: interface matches (local-traffic detection by interface) are not shown, and rules that have them read as if they had none.',
    action: 'List with `-v` (`iptables -t nat -L -n -v`), or give `iptables-save`.',
  },
  IPT_LIST_UNKNOWN_MATCH: {
    severity: ['error', 'warning'],
    meaning:
      'Match or target text of an `iptables -L` listing that kp cannot translate back to options; the rule is read without it (error in a kube-proxy chain, whose answers depend on it; warning elsewhere).',
    action: 'Give `iptables-save` for this node instead of the listing.',
  },
  IPT_MISSING_CHAIN: {
    severity: 'warning',
    meaning:
      'A service chain jumps to an endpoint chain that is never declared or is deleted; no endpoint is read for it.',
    action: 'The dump is incomplete or edited; re-collect it.',
  },
  IPT_MIXED_FAMILIES: {
    severity: 'error',
    meaning: 'One input holds both iptables-save and ip6tables-save output.',
    action: 'Save the two families to two files and give each with -f.',
  },
  IPT_NO_COMMENT: {
    severity: 'info',
    meaning:
      'A KUBE-SERVICES rule into a service chain has no service comment; its frontend type is read from its target.',
    action: 'Nothing; frontend types of such rules are a best guess.',
  },
  IPT_NO_KUBE_PROXY: {
    severity: 'error',
    meaning: 'The iptables dump has no kube-proxy chains (only kubelet ones, or none at all).',
    action:
      'Check the proxy mode of the node and that the dump comes from the backend kube-proxy uses (legacy or nf_tables).',
  },
  IPT_NO_NAME: {
    severity: 'info',
    meaning: 'No comment names the service port of some chains; it is identified by its ClusterIP.',
    action: 'Nothing; give --cluster objects to get names.',
  },
  IPT_ORPHAN_CHAIN: {
    severity: 'warning',
    meaning:
      'A service or endpoint chain is not reached from KUBE-SERVICES, KUBE-NODEPORTS or any service chain; it is not read.',
    action: 'Usually a stale chain of a deleted service; if it persists across syncs, report it.',
  },
  IPT_OTHER_BACKEND: {
    severity: 'warning',
    meaning:
      "iptables-save says rules exist in the other backend (legacy vs nf_tables); kube-proxy's rules may be there.",
    action: 'Dump with the other backend (iptables-legacy-save or iptables-nft-save) as well.',
  },
  IPT_REPEATED_RULE: {
    severity: 'warning',
    meaning:
      'The same rule appears many times in one chain: two iptables versions or backends writing one table, or a sync that appends instead of replacing.',
    action: "Check which iptables binaries write the node's rules; clean the duplicates.",
  },
  IPT_RULE_IN_DELETED_CHAIN: {
    severity: 'warning',
    meaning: "A rule is appended to a chain after that chain's `-X`.",
    action: 'Check that the input is a real iptables-save / restore file and not edited by hand.',
  },
  IPT_SEP_NO_DNAT: {
    severity: 'warning',
    meaning:
      'An endpoint (KUBE-SEP-*) chain has rules but no DNAT `--to-destination`; it is not read as an endpoint.',
    action: 'The dump is incomplete or edited; re-collect it.',
  },
  IPT_SHARES_SUM: {
    severity: 'warning',
    meaning:
      'The endpoint shares of a service chain do not sum to 1: the last rule of the probability cascade is not unconditional.',
    action: 'The chain is cut off or hand-edited; re-collect the dump.',
  },
  IPT_SYNTAX: {
    severity: 'error',
    meaning:
      'A line is not valid iptables-save syntax, or not a line of an `iptables -L` listing (after the first ones, one more diagnostic counts the rest).',
    action: 'Give unmodified `iptables-save` output; fix or remove the lines named.',
  },
  IPT_TABLE_INFERRED: {
    severity: 'info',
    meaning:
      'Rules without a table header (`iptables -S` output or a fragment); their table was inferred.',
    action: 'Give full `iptables-save` output when possible.',
  },
  IPT_TRUNCATED: {
    severity: ['warning', 'error'],
    meaning:
      'The dump ends mid-line or its last table has no COMMIT (error: it is cut off; what came before is shown, exit 3), or a table lacks COMMIT before the next one or the input its final newline (warning: it may be).',
    action: 'Re-collect the dump whole.',
  },
  IPT_UNATTRIBUTED_RULE: {
    severity: 'info',
    meaning:
      'A masquerade rule names a service port that has no other rule; it is not read as a service.',
    action: 'Nothing, unless the service should be there: then the dump may be incomplete.',
  },
  IPT_UNDECLARED_CHAIN: {
    severity: ['warning', 'info'],
    meaning:
      'Rules are appended to a chain the dump never declares with `:` / `-N` (info for headerless fragments, such as grep output).',
    action: 'Give full `iptables-save` output.',
  },
  IPT_UNKNOWN_PROTOCOL: {
    severity: 'warning',
    meaning: 'The protocol of a service port cannot be told from its rules; it is read as TCP.',
    action:
      "Check the service's rules in the dump; they may be edited or from an unsupported kube-proxy.",
  },
  IPT_UNKNOWN_RULE: {
    severity: 'warning',
    meaning:
      'A rule in a kube-proxy chain is not one kube-proxy writes; it is kept out of the service model.',
    action: 'Look at the rule: something other than kube-proxy (or a newer kube-proxy) wrote it.',
  },
  IPT_UNREACHABLE_RULE: {
    severity: 'warning',
    meaning: 'A rule in a service chain follows an unconditional one and is never reached.',
    action: 'The chain is hand-edited or corrupted; re-collect the dump.',
  },
  IPT_WRONG_SOURCE: {
    severity: 'warning',
    meaning: 'An input of another format was given to an iptables-mode read; it is ignored.',
    action: "Give only the inputs of the node's mode, or set --mode.",
  },
  // --- nftables: nft list ruleset, nft -j (src/readers/nft/, src/readers/nft-json/) ---------
  NFT_DUPLICATE_TABLE: {
    severity: 'warning',
    meaning: 'The same table is in two inputs; the later copy is ignored.',
    action: "Give each node's ruleset once.",
  },
  NFT_HASH_MISMATCH: {
    severity: 'warning',
    meaning:
      'A per-service chain, set or map name does not carry the hash kube-proxy computes for it.',
    action: 'The ruleset was hand-edited or not written by kube-proxy; re-collect it.',
  },
  NFT_HEALTHCHECK_UNATTRIBUTED: {
    severity: 'info',
    meaning:
      'iptables-nft health check node port rules cannot be tied to a service without their comments.',
    action: 'Nothing; give --cluster objects or an iptables-save dump to attribute them.',
  },
  NFT_INCONSISTENT: {
    severity: 'warning',
    meaning:
      "Parts of kube-proxy's table disagree (element vs chain protocol, numgen modulus vs entries, DNAT vs chain name, an unreachable rule, a bad random threshold).",
    action: 'The ruleset was hand-edited or listed mid-sync; re-collect it.',
  },
  NFT_IPTABLES_MODE: {
    severity: 'info',
    meaning:
      'The ruleset is iptables-mode kube-proxy seen through iptables-nft; services without comments are identified by address and port.',
    action: 'Nothing; for full names give iptables-save output instead.',
  },
  NFT_JSON_INVALID: {
    severity: 'error',
    meaning: 'The input is not valid JSON, or has no top-level "nftables" array.',
    action: 'Give unmodified `nft -j list ruleset` output.',
  },
  NFT_JSON_TRUNCATED: {
    severity: 'error',
    meaning:
      'The `nft -j` document ends before its "nftables" array is closed: it is cut off. The whole entries before the cut are read and shown, exit 3; the chains whose rules may come after the cut (`nft -j` lists every chain before the rules) are left out, so what uses them is unknown.',
    action: 'Re-collect the ruleset whole (`nft -j list ruleset`).',
  },
  NFT_JSON_SHAPE: {
    severity: 'warning',
    meaning:
      'An entry of `nft -j` output does not have the expected shape (missing name, wrong type, too deep, unreadable timeout); it is skipped.',
    action: 'Check the nft version and that the JSON is unmodified.',
  },
  NFT_MISSING_CHAIN: {
    severity: 'warning',
    meaning: 'A rule or map element points at a chain that is not in the table.',
    action: 'The ruleset is incomplete (one table listed?) or edited; list the whole ruleset.',
  },
  NFT_MISSING_SET: {
    severity: 'warning',
    meaning:
      "A rule of kube-proxy's table names a set or map (`vmap @service-ips`) that is not in the input; the frontends it holds are unknown, and so are the answers that depend on it.",
    action:
      'The input is a fragment (a grep, part of a listing); give `nft list table ip kube-proxy`.',
  },
  NFT_LAYOUT_MIXED: {
    severity: 'warning',
    meaning:
      'The kube-proxy table holds objects of two layout generations no single kube-proxy release writes together (an upgrade half done, or chains a newer kube-proxy left behind).',
    action:
      'Check which kube-proxy version runs on the node; a full resync (restarting kube-proxy) rewrites the table in one layout.',
  },
  NFT_COMMENT_CUT: {
    severity: 'info',
    meaning:
      'An element comment is 128 bytes long, the most nft keeps: kube-proxy 1.37 cuts longer service port names there, so the service was matched by its frontend (and the hash of its chains) rather than by the comment.',
    action: 'Nothing.',
  },
  NFT_NAME_TRUNCATED: {
    severity: 'info',
    meaning:
      'A per-service object name is truncated (over 240 characters), so its hash cannot be checked.',
    action: 'Nothing.',
  },
  NFT_NO_DNAT: {
    severity: 'warning',
    meaning:
      'An endpoint chain has no dnat nft can show (or an xt target hides it); its endpoint is unknown.',
    action:
      'For iptables-nft, give iptables-save output instead; otherwise re-collect the ruleset.',
  },
  NFT_NO_KUBE_PROXY: {
    severity: 'error',
    meaning: 'The ruleset has no kube-proxy table and no iptables-nft KUBE-* chains.',
    action: 'Check the proxy mode of the node (IPVS?) and that the whole ruleset was listed.',
  },
  NFT_OTHER_TABLES: {
    severity: 'info',
    meaning: "Tables that do not touch kube-proxy's objects were ignored.",
    action: 'Nothing.',
  },
  NFT_SKIPPED_OBJECT: {
    severity: 'info',
    meaning: 'Objects kp does not use (flowtables, counters, quotas, ...) were skipped.',
    action: 'Nothing.',
  },
  NFT_STALE_CHAIN: {
    severity: 'info',
    meaning:
      'An empty per-service chain: flushed by kube-proxy for a deleted service or endpoint, to be deleted on a later sync.',
    action: 'Nothing.',
  },
  NFT_STALE_SET: {
    severity: 'info',
    meaning: 'An affinity set is not used by any rule (a leftover of a deleted service).',
    action: 'Nothing.',
  },
  NFT_SYNTAX: {
    severity: 'warning',
    meaning:
      'A malformed nft header, command or property (table header, priority, timeout, incomplete or empty command).',
    action: 'Give unmodified `nft list ruleset` output.',
  },
  NFT_TRUNCATED: {
    severity: 'error',
    meaning:
      'The input ends inside a block or statement (a `{` is not closed), or in the middle of a line (nft ends every line with a newline; the cut line is not read): it is cut off. What came before is shown, exit 3.',
    action: 'Re-collect the ruleset whole.',
  },
  NFT_UNBALANCED_BRACE: {
    severity: 'warning',
    meaning: 'A `}` closes nothing.',
    action: 'Give unmodified `nft list ruleset` output.',
  },
  NFT_UNDECLARED: {
    severity: 'info',
    meaning:
      'A table, chain or set is used before it is added (nft script input); it is taken as declared there.',
    action: 'Nothing.',
  },
  NFT_UNEXPECTED_ELEMENT: {
    severity: 'warning',
    meaning: 'A map element or element comment is not in the shape kube-proxy writes.',
    action:
      'Look at the element: something other than kube-proxy (or a newer kube-proxy) wrote it.',
  },
  NFT_UNKNOWN_RULE: {
    severity: ['warning', 'info'],
    meaning:
      'A rule (or dnat) in a kube-proxy chain is not one kp recognises; it is left out (info for masquerade rules).',
    action: 'Look at the rule: something other than kube-proxy (or a newer kube-proxy) wrote it.',
  },
  NFT_UNKNOWN_STATEMENT: {
    severity: 'warning',
    meaning:
      'A statement of the ruleset is not understood (after the first ones, one more diagnostic counts the rest).',
    action: 'Check the nft version and that the input is unmodified `nft list ruleset` output.',
  },
  NFT_UNREFERENCED_CHAIN: {
    severity: 'warning',
    meaning:
      'A per-service chain has rules but nothing points at it; it is not counted as a service.',
    action: 'Usually a leftover of a sync; if it persists, the table was edited.',
  },
  NFT_UNSUPPORTED: {
    severity: ['warning', 'info'],
    meaning:
      'A command addresses a rule by kernel handle or position, which text cannot resolve (ignored, or the rule is put first / appended).',
    action: 'Give `nft list ruleset` output rather than an nft script.',
  },
  NFT_UNTERMINATED_STRING: {
    severity: 'warning',
    meaning: 'A quoted string is not closed on its line; it is read to the end of the line.',
    action: 'Give unmodified `nft list ruleset` output.',
  },
  NFT_WRONG_SOURCE: {
    severity: 'warning',
    meaning: 'An input of another format was given to an nftables-mode read; it is ignored.',
    action: "Give only the inputs of the node's mode, or set --mode.",
  },

  // --- IPVS: ipvsadm -Ln / -Sn, with ipset and ip addr (src/readers/ipvsadm/) ----------------
  IPVS_BAD_COUNTERS: {
    severity: 'warning',
    meaning: 'Counter columns of an `ipvsadm -Ln --stats/--rate` row are not numbers.',
    action: 'Give unmodified ipvsadm output.',
  },
  IPVS_BAD_REAL_SERVER: {
    severity: 'warning',
    meaning:
      'A real server row is not ADDRESS:PORT, has the wrong number of columns or a non-numeric weight.',
    action: 'Give unmodified `ipvsadm -Ln` or `-Sn` output.',
  },
  IPVS_BAD_RULE: {
    severity: 'warning',
    meaning:
      'An `ipvsadm -Sn` line is malformed (an option without value, no service, no real server, a bad address); skipped.',
    action: 'Give unmodified `ipvsadm -Sn` output.',
  },
  IPVS_BAD_SERVICE: {
    severity: 'warning',
    meaning:
      'A virtual server line is malformed (bad address, firewall mark, persistent timeout, or no scheduler).',
    action: 'Give unmodified `ipvsadm -Ln` or `-Sn` output.',
  },
  IPVS_BOUND_ADDRESS_TYPE: {
    severity: 'info',
    meaning:
      'Virtual servers on kube-ipvs0 addresses are shown as ClusterIP; externalIPs and LoadBalancer IPs look the same there.',
    action: 'Add `ipset save` of the node or --cluster objects to tell them apart.',
  },
  IPVS_CLUSTER_AMBIGUOUS: {
    severity: 'warning',
    meaning:
      'A virtual server is a frontend of several Services in the cluster objects; it is named after the first.',
    action: 'Check the Services that share the address and port.',
  },
  IPVS_CONNECTION_LISTING: {
    severity: 'warning',
    meaning:
      '`ipvsadm -Lnc` connection entries were given; they are not virtual servers and were not read.',
    action: 'Give `ipvsadm -Ln` (or `-Sn`) output.',
  },
  IPVS_DUPLICATE_VIRTUAL_SERVER: {
    severity: 'warning',
    meaning: 'A virtual server is listed twice; its real servers are merged.',
    action: 'Give one listing per node.',
  },
  IPVS_FRONTENDS_DISAGREE: {
    severity: 'warning',
    meaning:
      'The virtual servers of one service port have real servers that kube-proxy would not give them: NodePort / externalIP / LoadBalancer virtual servers that differ among themselves, or from the ClusterIP in a way no traffic policy explains (kubernetes #89923). Each frontend keeps its own endpoints in the model.',
    action:
      'Compare the listed real servers with the EndpointSlices; restart kube-proxy on the node (or delete the stale virtual server) so that it programs every frontend again.',
  },
  IPVS_HEALTH_CHECK_PORTS: {
    severity: 'info',
    meaning: 'The health check node port ipset holds ports the IPVS dumps do not tie to a service.',
    action: 'Give --cluster objects to attribute them.',
  },
  IPVS_IPTABLES_NOT_IPVS_MODE: {
    severity: 'warning',
    meaning:
      "An iptables dump given with IPVS inputs has none of IPVS mode's chains; it may be of another node or mode.",
    action: 'Check that all inputs come from the same node.',
  },
  IPVS_LINE_TOO_LONG: {
    severity: 'warning',
    meaning: 'A line too long to be ipvsadm output; skipped.',
    action: 'Check the input is ipvsadm output.',
  },
  IPVS_MIXED_FAMILY: {
    severity: 'warning',
    meaning: "A real server is not of its virtual server's address family.",
    action: 'Check the listing for hand edits.',
  },
  IPVS_MIXED_LAYOUTS: {
    severity: 'warning',
    meaning: 'One input mixes `ipvsadm -Ln` and `-Sn` output (or other listings).',
    action: 'Give each listing as its own file.',
  },
  IPVS_MIXED_SCHEDULERS: {
    severity: 'warning',
    meaning:
      'The virtual servers of one service port use different schedulers; kube-proxy uses one for all.',
    action: 'Check for IPVS services changed by hand or by another tool.',
  },
  IPVS_NOT_IN_CLUSTER: {
    severity: 'warning',
    meaning:
      'A virtual server matches no Service in the cluster objects (stale, or objects of another time or cluster).',
    action: 'Collect the cluster objects and the node dumps at the same time.',
  },
  IPVS_NOT_NUMERIC: {
    severity: 'error',
    meaning:
      'ipvsadm output with resolved host names or port names: names are cut and ports lost without -n.',
    action: 'Collect it again with `ipvsadm -Ln` (or `ipvsadm -Sn`).',
  },
  IPVS_NOT_VIRTUAL_SERVERS: {
    severity: 'info',
    meaning: 'Lines of `ipvsadm -L --timeout` / `--daemon` output; not read.',
    action: 'Nothing; give `ipvsadm -Ln` for the virtual servers.',
  },
  IPVS_NO_LISTING: {
    severity: 'warning',
    meaning: 'No ipvsadm listing among the IPVS inputs, so services have no known real servers.',
    action: 'Add `ipvsadm -Ln` (or `-Sn`) of the same node.',
  },
  IPVS_NO_VIRTUAL_SERVERS: {
    severity: 'info',
    meaning: 'The ipvsadm output has no virtual servers.',
    action: 'Check that kube-proxy runs in IPVS mode on the node.',
  },
  IPVS_ORPHAN_REAL_SERVER: {
    severity: 'warning',
    meaning: 'A real server comes before (or without) its virtual server.',
    action: 'Give unmodified ipvsadm output.',
  },
  IPVS_PROC_TIMEOUT_JIFFIES: {
    severity: 'info',
    meaning:
      "/proc/net/ip_vs writes a persistence timeout in jiffies (seconds × the kernel's CONFIG_HZ, which the file does not show); the session affinity timeout is left unknown.",
    action:
      'Give `ipvsadm -Ln` or the Service objects (`--cluster`) to know the timeout in seconds.',
  },
  IPVS_SET_WITHOUT_VIRTUAL_SERVER: {
    severity: 'warning',
    meaning:
      'Entries of a kube-proxy ipset have no virtual server: the dumps were taken at different times or are incomplete.',
    action: 'Collect the ipvsadm, ipset and ip addr dumps together (`kp collect`).',
  },
  IPVS_SOURCES_DISAGREE: {
    severity: 'warning',
    meaning:
      'Two IPVS listings disagree on a virtual server (real servers, weights, scheduler): taken at different times; kp keeps the union.',
    action: 'Collect the dumps together (`kp collect`).',
  },
  IPVS_TRUNCATED: {
    severity: 'error',
    meaning:
      'The listing ends in the middle of a line (ipvsadm ends every line with a newline): it is cut off. What came before is shown, the cut word is not read, exit 3.',
    action: 'Re-collect the listing whole (`ipvsadm -Ln` or `-Sn`).',
  },
  IPVS_UNCLASSIFIED: {
    severity: 'warning',
    meaning:
      'Virtual servers are classified by a guess (ClusterIP, NodePort); traffic policies are unknown.',
    action: 'Add `ipset save` and `ip addr` of the node, or --cluster objects.',
  },
  IPVS_UNFOLDED: {
    severity: 'warning',
    meaning:
      'A virtual server cannot be tied to the service port it belongs to; it is listed as a service port of its own.',
    action: 'Add `ipset save` of the node or --cluster objects.',
  },
  IPVS_UNKNOWN_HEADER: {
    severity: 'warning',
    meaning: 'An ipvsadm header has columns kp does not know.',
    action: 'Give `ipvsadm -Ln` output (optionally with --stats / --rate).',
  },
  IPVS_UNKNOWN_LINE: {
    severity: 'warning',
    meaning: 'A line that is not `ipvsadm -Ln` / `-Sn` output; skipped.',
    action: 'Give unmodified ipvsadm output.',
  },
  IPVS_UNKNOWN_OPTION: {
    severity: 'warning',
    meaning: 'An unknown virtual server or ipvsadm option; ignored.',
    action: 'Check the ipvsadm version; report the option if kube-proxy uses it.',
  },
  IPVS_WRONG_SOURCE: {
    severity: 'warning',
    meaning: 'An input of another format was given to an IPVS-mode read; it is ignored.',
    action: "Give only the inputs of the node's mode, or set --mode.",
  },

  // --- ipset save / list (src/readers/ipset/) ------------------------------------------------
  IPSET_BAD_MEMBER: {
    severity: 'warning',
    meaning: "A member of a known set type is not of that type's shape (address, port, protocol).",
    action: 'Give unmodified `ipset save` output.',
  },
  IPSET_DUPLICATE_SET: {
    severity: 'warning',
    meaning: 'A set is declared twice; its members are merged.',
    action: 'Give one ipset dump per node.',
  },
  IPSET_ENTRY_COUNT: {
    severity: 'warning',
    meaning:
      '`ipset list` says a set has more or fewer entries than it lists: the input may be cut.',
    action: 'Re-collect the dump whole (`ipset save` is preferred).',
  },
  IPSET_LINE_TOO_LONG: {
    severity: 'warning',
    meaning: 'A line too long to be ipset output; skipped.',
    action: 'Check the input is ipset output.',
  },
  IPSET_NO_SETS: {
    severity: 'warning',
    meaning: 'The ipset input holds no sets.',
    action: 'Check that kube-proxy runs in IPVS mode on the node.',
  },
  IPSET_TRUNCATED: {
    severity: 'error',
    meaning:
      'The dump is cut off: it ends in the middle of a line, or the last set of an `ipset list` stops before its `Members:` line or lists fewer members than its `Number of entries`. What came before is shown, exit 3.',
    action: 'Re-collect the dump whole (`ipset save`).',
  },
  IPSET_UNKNOWN_KUBE_SET: {
    severity: 'info',
    meaning: 'KUBE-* sets this kp does not know (another release or tool); kept but not used.',
    action: 'Nothing, unless kube-proxy is newer than kp: then update kp.',
  },
  IPSET_UNKNOWN_LINE: {
    severity: 'warning',
    meaning: 'A line that is not `ipset save` / `ipset list` output; skipped.',
    action: 'Give unmodified ipset output.',
  },
  IPSET_UNKNOWN_SET: {
    severity: 'warning',
    meaning: 'A member or flush names a set no create line declared; skipped.',
    action: 'Give the whole `ipset save` output.',
  },

  // --- ip addr / ip -j addr (src/readers/ip-addr/) -------------------------------------------
  IPADDR_BAD_ADDRESS: {
    severity: 'warning',
    meaning: 'An interface address is not an IP address (of the family its line says); skipped.',
    action: 'Give unmodified `ip addr` or `ip -j addr` output.',
  },
  IPADDR_BAD_JSON: {
    severity: ['error', 'warning'],
    meaning:
      'The input is not the JSON `ip -j addr` prints (error), or an interface in it has no "ifname" (warning, skipped).',
    action: 'Give unmodified `ip -j addr` output.',
  },
  IPADDR_LINE_TOO_LONG: {
    severity: 'warning',
    meaning: 'A line too long to be ip addr output; skipped.',
    action: 'Check the input is ip addr output.',
  },
  IPADDR_NO_DEVICE: {
    severity: 'warning',
    meaning:
      '`ip addr show kube-ipvs0` said the device does not exist: kube-proxy is not in IPVS mode, or was cleaned up.',
    action: 'Check the proxy mode of the node.',
  },
  IPADDR_NO_INTERFACES: {
    severity: 'warning',
    meaning: 'The ip addr input holds no interfaces.',
    action: 'Give `ip addr` (or `ip -j addr`) output of the node.',
  },
  IPADDR_ORPHAN_ADDRESS: {
    severity: 'warning',
    meaning: 'An address line comes before any interface line; skipped.',
    action: 'Give unmodified `ip addr` output.',
  },
  IPADDR_UNKNOWN_LINE: {
    severity: 'warning',
    meaning:
      'A line that is not `ip addr` output (or an ip command other than link add / addr add); skipped.',
    action: 'Give unmodified `ip addr` output.',
  },
} as const satisfies Record<string, CodeEntry>
