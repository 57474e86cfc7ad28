import {Flags} from '@oclif/core'
import {KpCommand} from '../cli/base-command.js'
import type {ProxyState} from '../model/types.js'

export default class List extends KpCommand {
  static override summary = 'List the service ports this node proxies'
  static override examples = ['<%= config.bin %> <%= command.id %> -f iptables-save.txt']
  static override flags = {
    output: Flags.option({char: 'o', options: ['table', 'wide'] as const, default: 'table', description: 'Table layout.'})(),
  }

  async run(): Promise<ProxyState> {
    const {flags} = await this.parse(List)
    const state = await this.loadState(flags)
    if (!this.jsonEnabled()) this.log(`${state.services.length} service ports`)
    return state
  }
}
