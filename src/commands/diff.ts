import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import type {DiffResult} from '../analyze/diff.js'
import {KpCommand} from '../cli/base-command.js'
import {EXIT, UsageError} from '../errors.js'

export default class Diff extends KpCommand {
  static override summary = 'Compare two states: do they proxy the same service ports the same way?'
  static override description = `Each of A and B is a dump file, "-" for stdin, a bundle folder from \`kp collect\`, a saved state, cluster objects (with --node), or "live" for this node. They may be of different modes. Service ports are matched by name (or by ClusterIP when one side has no names); chain names, counters, comments and rule order are ignored.

Exit status: ${EXIT.ok.code} when the states are equal, ${EXIT.found.code} when they differ (as kubectl diff), ${EXIT.input.code} or ${EXIT.environment.code} on errors.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> before/iptables-save.txt after/nft-ruleset.txt',
    '<%= config.bin %> <%= command.id %> live cluster.yaml --node worker-1',
    '<%= config.bin %> <%= command.id %> node-a-bundle/ node-b-bundle/ --json',
    '<%= config.bin %> <%= command.id %> node/worker-1 node/worker-2    # two nodes of the cluster, through kubectl',
  ]

  // -f names one node's inputs; diff takes two, as arguments. Kept (hidden) only to give a clear error.
  static override baseFlags = {
    ...KpCommand.baseFlags,
    file: Flags.string({
      char: 'f',
      multiple: true,
      hidden: true,
      helpGroup: 'INPUT',
      description: 'Not used by diff: give A and B as arguments.',
    }),
  }

  static override args = {
    a: Args.string({
      required: true,
      description:
        'The first state: FILE, -, a folder (a kp collect bundle, or several dumps of one node), live, or node/NAME (a node of the cluster, through kubectl).',
    }),
    b: Args.string({
      required: true,
      description: 'The second state: FILE, -, a folder, live, or node/NAME.',
    }),
  }

  async run(): Promise<DiffResult> {
    const {args, flags} = await this.parse(Diff)
    if (flags.file && flags.file.length > 0)
      throw new UsageError(
        'kp diff takes its two inputs as arguments A and B, not -f',
        'USAGE_DIFF_FILE_FLAG',
        ['kp diff A.txt B.txt'],
      )
    if (args.a === '-' && args.b === '-')
      throw new UsageError('stdin (-) can be only one of A and B', 'USAGE_DIFF_STDIN_TWICE')
    const [a, b] = await this.loadStatePair(args.a, args.b, flags)
    const {diffStates} = await import('../analyze/diff.js')
    const result = diffStates(a, b)
    if (!this.jsonEnabled()) {
      const {formatDiff} = await import('../cli/views/diff.js')
      const color = Boolean(process.stdout.isTTY) && !flags['no-color'] && !process.env.NO_COLOR
      this.log(formatDiff(result, {color}))
    }
    // Differences found in incomplete input still end with exit 3 (setExitStatus).
    if (!result.equal) this.setExitStatus('found')
    return result
  }
}
