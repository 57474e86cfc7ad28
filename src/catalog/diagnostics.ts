/**
 * The closed catalogue of diagnostic codes: every code kp prints in `[CODE]` on stderr, lists in
 * a state's `diagnostics` (`--json`), or gives as `error.code` when a run ends with an error.
 * Runbooks match on these (`jq`, grep), so a code is added here before any reader emits it, and
 * docs/codes.md is generated from this table (`npm run docs:codes`).
 */
import type {Severity} from '../model/types.js'
import type {CodeEntry} from './code-entry.js'
import {RULE_DUMP_DIAGNOSTICS} from './diagnostics-rule-dumps.js'

export type {CodeEntry} from './code-entry.js'

export const DIAGNOSTICS = {
  ...RULE_DUMP_DIAGNOSTICS,
  // --- Kubernetes objects: Services, EndpointSlices, Endpoints (src/readers/kube/) ----------
  KUBE_BAD_FIELD: {
    severity: 'warning',
    meaning:
      'A field of an object is not of its kind (mapping, list, string, boolean, affinity timeout); it is ignored or defaulted.',
    action: 'Give objects as kubectl prints them (`kubectl get ... -o yaml` or `-o json`).',
  },
  KUBE_BAD_IP: {
    severity: 'warning',
    meaning:
      'A Service cluster IP, external IP, load balancer IP or endpoint address is not a valid IP; it is ignored.',
    action: 'Check the object; kube-proxy ignores the same value.',
  },
  KUBE_BAD_PORT: {
    severity: 'warning',
    meaning: 'A port field is not a port number, or a Service port has none; it is ignored.',
    action: 'Check the object; kube-proxy ignores the same port.',
  },
  KUBE_BAD_PROTOCOL: {
    severity: 'warning',
    meaning: 'A port protocol is not TCP, UDP or SCTP; the port is ignored.',
    action: 'Check the object.',
  },
  KUBE_BAD_YAML: {
    severity: 'error',
    meaning: 'The input (or one object in it) is not valid YAML or JSON.',
    action: 'Give `kubectl get svc,endpointslices -A -o yaml` (or `-o json`) output unmodified.',
  },
  KUBE_DUPLICATE_OBJECT: {
    severity: 'warning',
    meaning: 'A Service or EndpointSlice appears twice; the later one is used.',
    action: 'Give each object once (one kubectl get of one cluster).',
  },
  KUBE_EMPTY: {
    severity: 'error',
    meaning: 'The input holds no Kubernetes objects (empty, only comments or empty documents).',
    action: 'Give `kubectl get svc,endpointslices -A -o yaml` output.',
  },
  KUBE_ENDPOINTS_UNUSED: {
    severity: 'info',
    meaning:
      'Endpoints kube-proxy on the chosen node would not use (not ready, terminating, outside topology hints, or remote under a Local policy).',
    action: 'Nothing; this is what kube-proxy does.',
  },
  KUBE_ENDPOINT_NO_ADDRESS: {
    severity: 'warning',
    meaning: 'An EndpointSlice endpoint has no address; kube-proxy ignores it.',
    action: 'Check the EndpointSlice and the controller that wrote it.',
  },
  KUBE_ENDPOINT_WRONG_FAMILY: {
    severity: 'warning',
    meaning: "An endpoint address is not of the slice's addressType; kube-proxy ignores it.",
    action: 'Check the EndpointSlice and the controller that wrote it.',
  },
  KUBE_HEADLESS: {
    severity: 'info',
    meaning: 'An EndpointSlice belongs to a headless Service, which kube-proxy ignores.',
    action: 'Nothing.',
  },
  KUBE_IGNORED_KIND: {
    severity: 'info',
    meaning:
      'An object that is not a Service, EndpointSlice or Endpoints; kube-proxy does not read it.',
    action: 'Nothing.',
  },
  KUBE_LARGE_YAML: {
    severity: 'info',
    meaning: 'A large YAML input; the same objects as JSON read several times faster.',
    action: 'Use `kubectl get ... -o json` for large clusters.',
  },
  KUBE_LEGACY_ENDPOINTS: {
    severity: 'warning',
    meaning:
      'A Service has no EndpointSlice in the input; its endpoints are taken from the legacy v1 Endpoints, which kube-proxy does not read.',
    action: 'Include EndpointSlices: `kubectl get svc,endpointslices -A -o yaml`.',
  },
  KUBE_NESTING: {
    severity: 'error',
    meaning: 'Lists nested too deep; the inner ones were not read.',
    action: 'Give kubectl output, which nests one List.',
  },
  KUBE_NODE_ZONE_CONFLICT: {
    severity: 'warning',
    meaning: 'Endpoints on the chosen node name different zones; zone hints are not applied.',
    action: "Check the EndpointSlices' zone fields.",
  },
  KUBE_NOT_AN_OBJECT: {
    severity: 'error',
    meaning:
      'A document or list item is not a Kubernetes object (a mapping with apiVersion and kind).',
    action: 'Give kubectl output.',
  },
  KUBE_NOT_CLUSTER_OBJECTS: {
    severity: 'error',
    meaning: 'An input given as cluster objects looks like a node dump of another format.',
    action: 'Give Kubernetes objects with --cluster, and node dumps with -f.',
  },
  KUBE_NO_ENDPOINTSLICES: {
    severity: 'warning',
    meaning: 'The input has Services but no EndpointSlices, so every service shows no endpoints.',
    action: 'Use `kubectl get svc,endpointslices -A -o yaml`.',
  },
  KUBE_NO_KIND: {
    severity: 'error',
    meaning: 'An object has no kind; kp cannot tell what it is.',
    action: 'Give kubectl output.',
  },
  KUBE_NO_NAME: {
    severity: 'warning',
    meaning: 'An object has no metadata.name; it is ignored.',
    action: 'Give kubectl output.',
  },
  KUBE_OTHER_PROXY: {
    severity: 'info',
    meaning:
      'An EndpointSlice is labelled service.kubernetes.io/service-proxy-name; kube-proxy leaves it to that proxy.',
    action: 'Nothing.',
  },
  KUBE_SERVICE_IGNORED: {
    severity: 'info',
    meaning:
      'A Service kube-proxy ignores (ExternalName, headless, or labelled for another proxy).',
    action: 'Nothing.',
  },
  KUBE_SERVICE_NO_PORTS: {
    severity: 'warning',
    meaning: 'A Service has no ports; kube-proxy programs nothing for it.',
    action: 'Check the Service.',
  },
  KUBE_SKIP_MIRROR: {
    severity: 'info',
    meaning:
      'Legacy Endpoints labelled endpointslice.kubernetes.io/skip-mirror; never mirrored into a slice, so kube-proxy does not see it.',
    action: 'Nothing.',
  },
  KUBE_SLICE_ADDRESS_TYPE: {
    severity: 'info',
    meaning:
      'An EndpointSlice of addressType other than IPv4 / IPv6 (FQDN); kube-proxy reads only IP slices.',
    action: 'Nothing.',
  },
  KUBE_SLICE_FAMILY_UNUSED: {
    severity: 'info',
    meaning:
      'An EndpointSlice of a family the Service has no cluster IP of; kube-proxy does not use it.',
    action: 'Nothing.',
  },
  KUBE_SLICE_NO_SERVICE_LABEL: {
    severity: 'warning',
    meaning: 'An EndpointSlice has no kubernetes.io/service-name label; kube-proxy ignores it.',
    action: 'Check the controller that wrote the slice.',
  },
  KUBE_SLICE_PORT_NO_NAME: {
    severity: 'warning',
    meaning:
      'An EndpointSlice port has no name field; kube-proxy ignores it (an unnamed port is name: "").',
    action: 'Check the controller that wrote the slice.',
  },
  KUBE_SLICE_PORT_NO_NUMBER: {
    severity: 'warning',
    meaning: 'An EndpointSlice port has no port number; kube-proxy ignores it.',
    action: 'Check the controller that wrote the slice.',
  },
  KUBE_SLICE_PORT_UNMATCHED: {
    severity: 'info',
    meaning: 'An EndpointSlice port matches no port of its Service (by name and protocol).',
    action: 'Check the Service and slice were collected together.',
  },
  KUBE_SLICE_WITHOUT_SERVICE: {
    severity: 'info',
    meaning: 'An EndpointSlice is for a Service that is not in the input.',
    action: 'Include the Service, or ignore if it was deleted.',
  },
  KUBE_TOPOLOGY_HINTS: {
    severity: 'info',
    meaning:
      'Topology hints apply on the chosen node: the cluster path uses only the endpoints hinted for its zone.',
    action: 'Nothing; this is what kube-proxy does.',
  },
  KUBE_TOPOLOGY_ZONE_UNKNOWN: {
    severity: 'warning',
    meaning:
      "Endpoints carry zone hints but the chosen node's zone is not known from the objects; every ready endpoint is shown.",
    action: "Give the node's zone (an endpoint running on it), or read the node's dumps instead.",
  },
  KUBE_TRUNCATED: {
    severity: 'error',
    meaning:
      'A `kubectl get ... -o yaml|json` List ends inside its items (kubectl prints `kind: List` after them): it is cut off. The whole items before the cut are read and shown, the one the cut falls in is not, exit 3.',
    action: 'Re-collect the objects whole (`kubectl get svc,endpointslices -A -o yaml`).',
  },
  KUBE_UNSUPPORTED_VERSION: {
    severity: 'warning',
    meaning:
      'An EndpointSlice of an apiVersion other than discovery.k8s.io/v1; ignored, as kube-proxy does.',
    action: 'Collect with a kubectl that returns discovery.k8s.io/v1.',
  },
  KUBE_YAML_WARNING: {
    severity: 'info',
    meaning: 'The YAML parser warned about the input (the message is its own).',
    action: 'Nothing, unless objects are missing.',
  },
  // --- a saved state: kp list --json (src/readers/kp-json/) ---------------------------------
  KPJSON_BAD_FIELD: {
    severity: 'error',
    meaning: 'A member of a saved ProxyState has a value of the wrong kind.',
    action: 'Give a state written by `kp list --json` of this kp version, unmodified.',
  },
  KPJSON_MISSING_FIELD: {
    severity: 'error',
    meaning:
      'A member of a saved ProxyState is missing (every member is required; null where unknown).',
    action: 'Give a state written by `kp list --json` of this kp version, unmodified.',
  },
  KPJSON_NOT_STATE: {
    severity: 'error',
    meaning: 'The JSON is not a kp ProxyState (its kind is not "ProxyState").',
    action: 'Give `kp list --json` output, or force the right format with --format.',
  },
  KPJSON_SCHEMA_VERSION: {
    severity: 'error',
    meaning: 'The saved state has a schemaVersion this kp does not read.',
    action: 'Read it with the kp version that wrote it, or save the state again.',
  },
  KPJSON_SYNTAX: {
    severity: 'error',
    meaning: 'The saved state is not valid JSON.',
    action: 'Give `kp list --json` output whole and unmodified.',
  },
  KPJSON_UNKNOWN_FIELD: {
    severity: 'warning',
    meaning: 'A member that is not part of the ProxyState model; ignored.',
    action: 'Nothing, unless the state was written by a newer kp: then update kp.',
  },

  // --- kube-proxy's configuration: kp migrate --kube-proxy-config (src/readers/kube-proxy-config/)
  KPCONF_BAD_FIELD: {
    severity: 'warning',
    meaning:
      'A field of the kube-proxy configuration is not of its kind (string, list, boolean, bit number); kp ignores it and treats the setting as unknown.',
    action: 'Give the configuration as kube-proxy reads it (the ConfigMap unmodified).',
  },
  KPCONF_BAD_YAML: {
    severity: 'error',
    meaning: 'The kube-proxy configuration is not valid YAML or JSON.',
    action: 'Give `kubectl -n kube-system get configmap kube-proxy -o yaml` output unmodified.',
  },
  KPCONF_CONFIG_FILE: {
    severity: 'warning',
    meaning:
      'The flags name a --config file: kube-proxy takes most settings from that file, which kp has not read.',
    action: 'Give that file (or the ConfigMap it comes from) to --kube-proxy-config instead.',
  },
  KPCONF_NOT_CONFIG: {
    severity: 'error',
    meaning:
      'The file is neither a KubeProxyConfiguration, a ConfigMap holding one (key config.conf), nor a kube-proxy command line.',
    action:
      'Give `kubectl -n kube-system get configmap kube-proxy -o yaml`, the file of --config, or the flags of the kube-proxy command.',
  },

  // --- any input (src/readers/) ------------------------------------------------------------
  INPUT_BAD_ADDRESS: {
    severity: 'error',
    meaning:
      'A value a reader took for an address or CIDR (pod CIDR, nodePortAddresses, frontend or endpoint) is not one; it is left out.',
    action: 'Check the input line named; it was hand-edited or is not what kube-proxy writes.',
  },
  INPUT_BAD_BUNDLE: {
    severity: 'error',
    exit: 'input',
    meaning:
      "A folder's manifest.json is not a kp bundle manifest, or names a file outside the bundle.",
    action: 'Give a folder written by `kp collect`, unmodified.',
  },
  INPUT_BUNDLE_WARNING: {
    severity: 'warning',
    meaning:
      'A warning `kp collect` recorded while it collected the bundle (kube-proxy rules in both iptables backends, leftovers of another mode), shown again whenever the bundle is read.',
    action:
      'Read it as if on the node: the rules it names act on traffic there although kp reads only the active ones.',
  },
  INPUT_BINARY: {
    severity: 'error',
    meaning: 'The input holds binary data, not text.',
    action: 'Give the text output of the dump command (not a compressed or binary file).',
  },
  INPUT_EMPTY: {
    severity: 'error',
    meaning: 'The input is empty (or only blanks).',
    action: 'Check the dump command ran and wrote its output.',
  },
  INPUT_EMPTY_BUNDLE: {
    severity: 'error',
    exit: 'input',
    meaning: 'A kp bundle holds no kube-proxy rules to read (kp collect found none).',
    action: 'Check kube-proxy runs on the node the bundle was collected on.',
  },
  INPUT_EMPTY_FOLDER: {
    severity: 'error',
    exit: 'input',
    meaning: 'A folder given with -f holds no files.',
    action: 'Give a folder of dumps, or a `kp collect` bundle.',
  },
  INPUT_INVALID: {
    severity: 'error',
    exit: 'input',
    meaning: "Input error without a more specific code (the default of kp's input errors).",
    action: 'Read the message; it names the input and line.',
  },
  INPUT_MIXED: {
    severity: 'warning',
    meaning: 'A saved ProxyState was given with other inputs; it was ignored.',
    action: "Give either one saved state or the node's dumps.",
  },
  INPUT_REDACTED: {
    severity: 'warning',
    meaning:
      'An address was replaced by a redaction placeholder (`x.x.x.x`, `10.x.x.x`, `<IP>`, `REDACTED`, `***`; README "Partial and redacted input"); it is kept as redacted (null), the rest of its service port is read.',
    action:
      'Nothing, if the redaction was meant; answers about that address say it is redacted. Give the unredacted dump to render rules from it.',
  },
  INPUT_SERVICE_NOT_FOUND: {
    severity: 'error',
    exit: 'input',
    meaning: '`kp explain`, `kp trace`: no service port matches the query.',
    action:
      'Check the name or address; `kp list` shows every service port, and the hint names the closest.',
  },
  INPUT_SEVERAL_STATES: {
    severity: 'error',
    meaning: 'Several saved ProxyStates were given; kp reads one node at a time.',
    action: 'Give one saved state per command.',
  },
  INPUT_STDIN_TWICE: {
    severity: 'error',
    exit: 'input',
    meaning: 'stdin (-) was given more than once.',
    action: 'Give stdin once; save the other inputs to files.',
  },
  INPUT_UNKNOWN_FORMAT: {
    severity: 'error',
    meaning:
      'kp cannot tell the format of an input, or a bundle or --format names one it does not know.',
    action: 'Check the input, or force the format with --format.',
  },
  INPUT_NOT_FLEET: {
    severity: 'error',
    exit: 'input',
    meaning:
      '`--fleet DIR`: the folder is not a fleet written by `kp collect --all-nodes --out DIR` (no readable fleet.json, or one of another kind).',
    action:
      "Give the folder `kp collect --all-nodes --out DIR` wrote; one node's bundle is read with -f DIR.",
  },
  INPUT_UNREADABLE: {
    severity: 'error',
    exit: 'input',
    meaning: 'An input file or folder cannot be read (missing, permissions, not a file).',
    action: 'Check the path and its permissions.',
  },

  // --- reading this node (src/live/) ------------------------------------------------------
  LIVE_COMMAND_FAILED: {
    severity: 'error',
    exit: 'environment',
    meaning:
      'A dump command kp ran failed (non-zero exit, crash, signal, too much output) or was not run.',
    action: 'Run the command by hand to see its full error output (the hints say more).',
  },
  LIVE_MISSING_PROGRAM: {
    severity: 'error',
    exit: 'environment',
    meaning: 'A program kp runs (iptables-save, nft, ipvsadm, ipset, ip) is not installed.',
    action: 'Install it, or read a saved dump with -f FILE.',
  },
  LIVE_NEEDS_ROOT: {
    severity: 'error',
    exit: 'environment',
    meaning: 'A dump command needs root (or cannot be executed).',
    action: 'Run kp as root (for example with sudo), or read a saved dump with -f FILE.',
  },
  LIVE_CLUSTER_UNREACHABLE: {
    severity: 'error',
    exit: 'environment',
    meaning:
      'Reading a node through kubectl (--node NAME, node/NAME): kubectl cannot reach the cluster (no kubeconfig, bad context, refused, unauthorized); its message is quoted.',
    action: 'Check `kubectl get nodes` works with the same --kubeconfig/--context.',
  },
  LIVE_FORBIDDEN: {
    severity: 'error',
    exit: 'environment',
    meaning:
      'Reading a node through kubectl: the cluster refused a request (RBAC Forbidden); the message names the verb and resource to grant.',
    action:
      'Grant that verb on that resource (e.g. `create` on `pods/exec` in the kube-proxy namespace), or collect on the node and read with -f.',
  },
  LIVE_NO_KUBE_PROXY_POD: {
    severity: 'error',
    exit: 'environment',
    meaning:
      'Reading a node through kubectl: no running pod on that node has a container that runs kube-proxy (k3s, static pods, another namespace or selector).',
    action:
      'Point kp at it with --kube-proxy-namespace/--kube-proxy-selector, or let kp start a short-lived collector pod with --collector-pod.',
  },
  LIVE_COLLECTOR_POD: {
    severity: 'error',
    exit: 'environment',
    meaning:
      '--collector-pod: the short-lived collector pod could not be created, did not start, or could not be deleted.',
    action:
      'Check the message; `kp collect --cleanup` removes collector pods left behind (label app.kubernetes.io/managed-by=kp).',
  },
  INPUT_TRACE_UNSUPPORTED: {
    severity: 'error',
    exit: 'input',
    meaning:
      '`kp trace`: the input holds no rules kp can walk for this connection (a mode it does not walk yet, or no rules of its address family).',
    action: 'Give iptables-save output of the node (with -f), or use `kp explain` for this input.',
  },
  LIVE_NEEDS_CLUSTER: {
    severity: 'error',
    exit: 'environment',
    meaning:
      '`--all-nodes` / `-l SELECTOR`: kp cannot reach the cluster to list its nodes (no kubectl, no kubeconfig, or this build cannot read nodes through the cluster yet).',
    action:
      'Check `kubectl get nodes` works with the same --context/--kubeconfig; or collect the nodes with `kp collect` and read them with --fleet DIR.',
  },
  LIVE_FLEET_PARTIAL: {
    severity: 'error',
    exit: 'environment',
    meaning:
      'A fleet run (`--all-nodes`, `-l`, `--fleet`): some nodes could not be read or collected; the others are answered, the failures listed.',
    action: 'Read the listed reasons; retry those nodes alone (`--node NAME`) once fixed.',
  },
  LIVE_INTERRUPTED: {
    severity: 'error',
    exit: 'interrupted',
    meaning:
      'A fleet run was stopped (Ctrl-C, SIGTERM): unfinished nodes were abandoned and their partial files removed.',
    action: 'Run it again; bundles already finished are kept and listed in fleet.json.',
  },
  INPUT_VERIFY_UNSUPPORTED: {
    severity: 'error',
    exit: 'input',
    meaning:
      '`kp verify`: the input holds no rules kp can load into its sandbox (IPVS mode, cluster objects, a listing).',
    action: "Give the node's iptables-save output or its nftables ruleset with -f.",
  },
  LIVE_SANDBOX_FAILED: {
    severity: 'error',
    exit: 'environment',
    meaning:
      '`kp verify`: the sandbox of network namespaces cannot be built or the rules cannot be loaded into it (not root, no netns, a tool missing, kp inside a namespace it did not create).',
    action:
      'Run kp verify as root in the host network namespace, with ip, iptables, nft and conntrack installed.',
  },
  LIVE_NO_KUBE_PROXY: {
    severity: 'error',
    exit: 'input',
    meaning: 'No kube-proxy rules (of the --mode asked for) were found on this node.',
    action:
      'Check kube-proxy runs on the node and kp is in its network namespace; drop --mode to detect it.',
  },
  LIVE_TIMEOUT: {
    severity: 'error',
    exit: 'environment',
    meaning: 'A dump command did not finish within --timeout and was stopped.',
    action: 'Give it more time with --timeout SECONDS, or save the dumps once with `kp collect`.',
  },

  // --- command line (src/commands/) --------------------------------------------------------
  USAGE_VERIFY_TARGET: {
    severity: 'error',
    exit: 'usage',
    meaning:
      '`kp migrate --verify`: the target mode has no rules kp can load into its sandbox (IPVS).',
    action: 'Use --verify with --to nftables or --to iptables.',
  },
  USAGE_BAD_SERVICE: {
    severity: 'error',
    exit: 'usage',
    meaning:
      '`kp explain`, `kp trace`: the SERVICE or DESTINATION argument cannot be read as a name or an address.',
    action: 'Write it as ns/name, ns/name:port, name -n ns, IP:PORT/PROTO, [v6]:PORT or :NODEPORT.',
  },
  USAGE_BAD_VALUE: {
    severity: 'error',
    exit: 'usage',
    meaning:
      '`kp migrate`, `kp trace`: a flag has a value not of its kind (mark, CIDR, address, scheduler, ...).',
    action: 'Fix the flag value; the message says what was expected.',
  },
  USAGE_CHECK_KERNEL_TARGET: {
    severity: 'error',
    exit: 'usage',
    meaning: '`kp migrate --check-kernel` checks nftables rules; the target is another mode.',
    action: 'Use --check-kernel with --to nftables.',
  },
  USAGE_COLLECT_INPUT: {
    severity: 'error',
    exit: 'usage',
    meaning: '`kp collect` reads this node; input flags (-f, --cluster, ...) do not apply.',
    action: 'Run `kp collect --out DIR`, then read the bundle with `kp list -f DIR`.',
  },
  USAGE_COMPLETION_PLUGIN: {
    severity: 'error',
    exit: 'usage',
    meaning:
      "`kubectl kp completion`: run as a kubectl plugin, kp completes through kubectl's own completion, not a script of its own.",
    action:
      'Put kubectl_complete-kp on PATH, running the same executable as kubectl-kp (docs/sea.md), and source `kubectl completion SHELL`.',
  },
  USAGE_DIFF_FILE_FLAG: {
    severity: 'error',
    exit: 'usage',
    meaning: '`kp diff` takes its two inputs as arguments A and B, not with -f.',
    action: 'Run `kp diff A B`.',
  },
  USAGE_DIFF_STDIN_TWICE: {
    severity: 'error',
    exit: 'usage',
    meaning: '`kp diff`: both A and B are stdin (-).',
    action: 'Give at most one of A and B as -.',
  },
  USAGE_TRACE_AMBIGUOUS: {
    severity: 'error',
    exit: 'usage',
    meaning:
      '`kp trace`: the destination names no single frontend with a port (a service with several ports, or none known).',
    action:
      'Name the port (ns/name:port) or give the destination as IP:PORT; the hints list the candidates.',
  },
  USAGE_FLEET_INPUT: {
    severity: 'error',
    exit: 'usage',
    meaning:
      "A fleet input (`--all-nodes`, `-l SELECTOR`, `--fleet DIR`) is combined with another input (-f, --node, a second fleet input, diff's A B), or a command that needs one was given none.",
    action: 'Give exactly one of --all-nodes, -l SELECTOR or --fleet DIR, and no -f or --node.',
  },
  USAGE_INVALID: {
    severity: 'error',
    exit: 'usage',
    meaning:
      'The command line cannot be read: an unknown command or flag, a missing or extra argument, or a flag value not among its choices or not of its kind.',
    action: 'Run `kp COMMAND --help` for the arguments and flags (`kp --help` for the commands).',
  },
  USAGE_OUT_NOT_DIR: {
    severity: 'error',
    exit: 'usage',
    meaning: '`kp collect --out`: the path exists and is not a folder.',
    action: 'Choose a new folder.',
  },
  USAGE_OUT_NOT_EMPTY: {
    severity: 'error',
    exit: 'usage',
    meaning: '`kp collect --out`: the folder is not empty.',
    action: 'Choose a new folder, or pass --force to write into this one.',
  },
  USAGE_OUT_UNUSABLE: {
    severity: 'error',
    exit: 'usage',
    meaning:
      '`kp collect --out`: the folder cannot be used (permissions, a file in the path, ...).',
    action: 'Check the path and its permissions.',
  },

  // --- output ------------------------------------------------------------------------------
  OUTPUT_UNWRITABLE: {
    severity: 'error',
    exit: 'environment',
    meaning:
      'kp cannot write an output file (`kp collect` bundle, `kp migrate --out` / `--out-dir`).',
    action: 'Check the path, its permissions and free space.',
  },
} as const satisfies Record<string, CodeEntry>

/** A code kp emits: diag() and every reader's reporter take only these. */
export type DiagnosticCode = keyof typeof DIAGNOSTICS

/** The severities an entry is emitted with, as a list. */
export function severitiesOf(entry: CodeEntry): readonly Severity[] {
  return typeof entry.severity === 'string' ? [entry.severity] : entry.severity
}
