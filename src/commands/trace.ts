import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import type {ClientKind, TraceResult} from '../analyze/trace/index.js'
import type {ServiceQuery} from '../analyze/explain-query.js'
import {KpCommand, type LoadFlags} from '../cli/base-command.js'
import {OUTPUT_FORMATS} from '../cli/output-format.js'
import {InputError, UsageError} from '../errors.js'
import type {ProxyState, Protocol} from '../model/types.js'
import type {TraceSources} from '../analyze/trace/inputs.js'
import type {ReadFocus} from '../readers/types.js'

/** What the walk reads: the state, and the rules as read with their paths. */
interface TraceRead extends TraceSources {
  state: ProxyState
}

const CLIENT_KINDS: readonly ClientKind[] = ['pod', 'node', 'external']

export default class Trace extends KpCommand {
  static override summary =
    'Walk one new connection through the rules and say where it ends, and why'
  static override description =
    "DESTINATION is IP:PORT[/PROTO], [IPv6]:PORT, :PORT (a NodePort on an address of this node), or a service (ns/name[:port], or name with -n). kp follows the connection through the iptables or nftables rules as read (in IPVS mode: kube-proxy's iptables rules with their ipset matches, then the virtual server and the real servers its scheduler picks, from ipvsadm -Ln/-Sn and ipset save), in the order the kernel applies them: every rule it matches (path:line), each branch with its chance (-m statistic), the DNAT target, masquerade, and the final verdict; a drop or reject comes with the rule that does it and the reason in words. Facts the rules depend on but the packet cannot tell (an interface, whether an address is this node's) split the answer into conditions. The walk reads the rules, not the model `kp explain` uses: where the two disagree, one is wrong. -o dot / -o mermaid draw the paths."
  static override examples = [
    '<%= config.bin %> <%= command.id %> 172.30.0.44:80 -f iptables-save.txt',
    '<%= config.bin %> <%= command.id %> ns5/svc5 --from external -f iptables-save.txt',
    '<%= config.bin %> <%= command.id %> 5.6.7.8:80 --from 198.51.100.7 -f iptables-save.txt',
    '<%= config.bin %> <%= command.id %> :3001 --from node --json -f iptables-save.txt | jq .outcomes',
  ]
  static override args = {
    destination: Args.string({
      required: true,
      description: 'IP:PORT[/PROTO], [v6]:PORT, :NODEPORT, or ns/name[:port]',
    }),
  }
  static override flags = {
    from: Flags.string({
      description:
        'The client: pod (a pod on this node, not an endpoint), node (a process on this node), external (outside the cluster), or its IP address.',
      default: 'pod',
    }),
    namespace: Flags.string({
      char: 'n',
      description: 'The namespace of DESTINATION when it is given as a bare name.',
    }),
    // kp's -o, and a picture of the path: Graphviz DOT (`dot -Tsvg`) or a Mermaid flowchart.
    output: Flags.option({
      char: 'o',
      options: [...OUTPUT_FORMATS, 'dot', 'mermaid'] as const,
      helpGroup: 'OUTPUT',
      description:
        'json: the result as one JSON document (same as --json); yaml: that document as YAML; table, wide: the text view; dot: the paths as a Graphviz graph (pipe to `dot -Tsvg`); mermaid: the paths as a Mermaid flowchart.',
    })(),
    'node-ip': Flags.string({
      description:
        'An address of this node (repeatable): `-m addrtype --dst-type LOCAL` matches it.',
      multiple: true,
    }),
  }

  async run(): Promise<TraceResult> {
    const {args, flags} = await this.parse(Trace)
    const {parseServiceQuery} = await import('../analyze/explain-query.js')
    const {traceFocus} = await import('../analyze/trace/focus.js')
    const query = parseServiceQuery(args.destination, flags.namespace)
    if ('invalid' in query)
      throw new UsageError(`cannot read DESTINATION: ${query.invalid}`, 'USAGE_BAD_SERVICE', [
        'write it as IP:PORT/PROTO, [v6]:PORT, :NODEPORT, ns/name or ns/name:port',
      ])
    // Only the rules the connection can reach are read (docs/performance.md, "kp trace"); a name
    // the focused read does not find is looked for again in everything, for the closest names.
    const focus = traceFocus(query)
    let read = await this.readForTrace(flags, focus)
    if (focus && query.by === 'name' && !(await this.names(read.state, query)))
      read = await this.readForTrace(flags, null)
    const {state, rulesets, nftDocuments, ipvsListings, ipsets} = read
    const nodeIps = await this.nodeIps(flags['node-ip'] ?? [])
    const destination = await this.destination(state, query)
    const from = await this.client(flags.from, state, nodeIps)
    const {traceConnection} = await import('../analyze/trace/index.js')
    const result = traceConnection({
      state,
      rulesets,
      nftDocuments,
      ipvsListings,
      ipsets,
      nodeIps,
      packet: {...from, ...destination},
    })
    if (result.unsupported !== null)
      throw new InputError(`cannot trace: ${result.unsupported}`, 'INPUT_TRACE_UNSUPPORTED')
    // The base command's -o type does not know this command's two extra values.
    const output = flags.output as string | undefined
    if (output === 'dot' || output === 'mermaid') {
      const {renderTraceGraph} = await import('../cli/views/trace-graph.js')
      this.log(renderTraceGraph(result, output))
    } else if (!this.jsonEnabled()) {
      const {renderTrace} = await import('../cli/views/trace.js')
      const {outputStyle} = await import('../cli/views/style.js')
      this.log(renderTrace(result, outputStyle(flags['no-color'])))
    }
    return result
  }

  private async nodeIps(given: string[]): Promise<string[]> {
    const {canonicalIp} = await import('../core/address.js')
    return given.map((text) => {
      const ip = canonicalIp(text)
      if (ip === null)
        throw new UsageError(
          `--node-ip ${JSON.stringify(text)} is not an IP address`,
          'USAGE_BAD_VALUE',
        )
      return ip
    })
  }

  private async client(
    text: string,
    state: ProxyState,
    nodeIps: string[],
  ): Promise<{from: ClientKind; source: string | null}> {
    if ((CLIENT_KINDS as readonly string[]).includes(text))
      return {from: text as ClientKind, source: null}
    const {canonicalIp, cidrContains} = await import('../core/address.js')
    const ip = canonicalIp(text)
    if (ip === null)
      throw new UsageError(
        `--from ${JSON.stringify(text)} is neither a kind of client nor an IP address`,
        'USAGE_BAD_VALUE',
        ['use pod, node, external, or the client address'],
      )
    const from: ClientKind = nodeIps.includes(ip)
      ? 'node'
      : state.node.podCIDRs.some((c) => cidrContains(c, ip))
        ? 'pod'
        : 'external'
    return {from, source: ip}
  }

  /** Reads the input (focused when `focus` says what to read), keeping the rules as read for the walk. */
  private async readForTrace(flags: LoadFlags, focus: ReadFocus | null): Promise<TraceRead> {
    const {collectTraceSources} = await import('../analyze/trace/inputs.js')
    const {sources, onParsed} = collectTraceSources()
    const state = await this.loadState(flags, {...(focus ? {focus} : {}), onParsed})
    return {state, ...sources}
  }

  /** Whether the state has the service `query` names. */
  private async names(state: ProxyState, query: ServiceQuery): Promise<boolean> {
    const {explainService} = await import('../analyze/explain.js')
    return explainService(state, query).kind !== 'NotFound'
  }

  /** The destination address, port and protocol: given, or a service's ClusterIP frontend. */
  private async destination(
    state: ProxyState,
    query: ServiceQuery,
  ): Promise<{destination: string | null; port: number; protocol: Protocol}> {
    if (query.by === 'address' && query.port !== null)
      return {destination: query.ip, port: query.port, protocol: query.protocol ?? 'TCP'}
    const {explainService} = await import('../analyze/explain.js')
    const found = explainService(state, query)
    if (found.kind === 'NotFound')
      throw new InputError(`no service port matches "${query.text}"`, 'INPUT_SERVICE_NOT_FOUND', [
        ...(found.suggestions.length > 0 ? [`closest: ${found.suggestions.join(', ')}`] : []),
        '`kp list` shows every service port',
      ])
    const targets = found.matches.flatMap((m) =>
      m.frontends
        .filter(
          (f) =>
            f.port !== null && (query.by === 'name' ? f.type === 'ClusterIP' : f.ip === query.ip),
        )
        .map((f) => ({
          destination: f.ip,
          port: f.port!,
          protocol: m.service.protocol,
          name: `${m.service.displayName} ${f.address}`,
        })),
    )
    if (targets.length !== 1)
      throw new UsageError(
        targets.length === 0
          ? `"${query.text}" has no frontend with a known port to trace`
          : `"${query.text}" is ${targets.length} frontends; trace one`,
        'USAGE_TRACE_AMBIGUOUS',
        targets.length === 0 ? ['give the destination as IP:PORT'] : targets.map((t) => t.name),
      )
    const {name: _name, ...target} = targets[0]!
    return target
  }
}
