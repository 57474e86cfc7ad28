import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import type {ExplainResult} from '../analyze/explain.js'
import {KpCommand} from '../cli/base-command.js'
import {InputError, UsageError} from '../errors.js'

export default class Explain extends KpCommand {
  static override summary = 'Explain where traffic to a service goes on this node, and why'
  static override description =
    'SERVICE is ns/name, ns/name:port (port name or number), name with -n NAMESPACE, or an address: IP, IP:PORT, IP:PORT/PROTO, [IPv6]:PORT, or :PORT for a NodePort on any node address. For every matching service port and frontend, kp says what a new connection gets (forwarded to which endpoints with what share, rejected, dropped), whether its source is masqueraded and why, source ranges, session affinity and endpoint locality. An unknown service exits 3 and names the closest matches.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> ns5/svc5 -f iptables-save.txt',
    '<%= config.bin %> <%= command.id %> svc5 -n ns5 --rules -f iptables-save.txt',
    '<%= config.bin %> <%= command.id %> 172.30.0.45:80/tcp -f nft-ruleset.txt',
    '<%= config.bin %> <%= command.id %> :3002 --json -f state.json | jq .matches[0].frontends',
    '<%= config.bin %> <%= command.id %> kube-system/kube-dns --node worker-1    # through kubectl',
  ]
  static override args = {
    service: Args.string({
      required: true,
      description:
        'ns/name[:port][/proto], name (with -n), or IP[:PORT[/PROTO]], [v6]:PORT, :NODEPORT',
    }),
  }
  static override flags = {
    namespace: Flags.string({
      char: 'n',
      description: 'The namespace of SERVICE when it is given as a bare name.',
    }),
    rules: Flags.boolean({
      description:
        'Also list the rules the sources hold for the service, in source order: path:line and the rule as read (live and bundle outputs too; nft -j rules as `chain NAME handle N: RULE`). -o wide does too.',
    }),
  }

  async run(): Promise<ExplainResult> {
    const {args, flags} = await this.parse(Explain)
    const {focusNeedles, parseServiceQuery} = await import('../analyze/explain-query.js')
    const query = parseServiceQuery(args.service, flags.namespace)
    if ('invalid' in query) {
      throw new UsageError(`cannot read SERVICE: ${query.invalid}`, 'USAGE_BAD_SERVICE', [
        'write it as ns/name, ns/name:port, name -n ns, IP:PORT/PROTO, [v6]:PORT or :NODEPORT',
      ])
    }
    // A name is found in the rules' comments: read only that service's rules (docs/performance.md).
    const needles = focusNeedles(query)
    const {explainService} = await import('../analyze/explain.js')
    let result = explainService(
      await this.loadState(flags, needles ? {focus: {needles}} : {}),
      query,
    )
    // Not found: read everything, so the closest names come from the whole state.
    if (result.kind === 'NotFound' && needles)
      result = explainService(await this.loadState(flags), query)
    if (result.kind === 'NotFound') {
      const hints =
        result.suggestions.length > 0
          ? [`closest: ${result.suggestions.join(', ')}`]
          : ['this state has no service ports']
      throw new InputError(`no service port matches "${query.text}"`, 'INPUT_SERVICE_NOT_FOUND', [
        ...hints,
        '`kp list` shows every service port',
      ])
    }
    if (!this.jsonEnabled()) {
      const {renderExplain} = await import('../cli/views/explain.js')
      const {outputStyle} = await import('../cli/views/style.js')
      const {ruleTextOf} = await import('../readers/rule-text.js')
      const {terminalWidth} = await import('../cli/wrap.js')
      // -o wide: the rule lines too, as --rules.
      const rules = flags.rules || flags.output === 'wide'
      const ruleText = ruleTextOf(rules ? this.loadedSources : [])
      this.log(
        renderExplain(result, {
          rules,
          ruleText,
          style: outputStyle(flags['no-color']),
          width: terminalWidth(),
        }),
      )
    }
    return result
  }
}
