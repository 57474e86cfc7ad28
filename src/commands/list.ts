import * as Flags from '@oclif/core/flags'
import {KpCommand} from '../cli/base-command.js'
import type {ProxyState} from '../model/types.js'

export default class List extends KpCommand {
  static override summary = 'List the service ports this node proxies'
  static override description =
    'One row per service port: its frontends (ClusterIP, NodePort, external and load-balancer IPs, with REJECT/DROP marks), how many endpoints it has, its traffic policies and session affinity. With --json, prints the ProxyState, which every kp command reads back with -f.'
  static override examples = [
    '<%= config.bin %> <%= command.id %> -f iptables-save.txt',
    '<%= config.bin %> <%= command.id %> -n kube-system -o wide',
    '<%= config.bin %> <%= command.id %> --json -f nft-ruleset.txt > state.json',
    '<%= config.bin %> <%= command.id %> --node worker-1 --context prod    # a node of the cluster, through kubectl',
  ]
  static override flags = {
    namespace: Flags.string({
      char: 'n',
      description: 'Only service ports of this namespace (default: all namespaces).',
    }),
  }

  async run(): Promise<ProxyState> {
    const {flags} = await this.parse(List)
    const state = await this.loadState(flags)
    const shown =
      flags.namespace === undefined
        ? state
        : {...state, services: state.services.filter((sp) => sp.namespace === flags.namespace)}
    if (!this.jsonEnabled()) {
      const {renderServiceList} = await import('../cli/views/list.js')
      const {outputStyle} = await import('../cli/views/style.js')
      const {terminalWidth} = await import('../cli/wrap.js')
      const style = outputStyle(flags['no-color'])
      this.log(
        renderServiceList(shown, {
          wide: flags.output === 'wide',
          namespace: flags.namespace,
          total: state.services.length,
          style,
          width: terminalWidth(),
        }),
      )
    }
    return shown
  }
}
