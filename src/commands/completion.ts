import * as Args from '@oclif/core/args'
import {Command} from '@oclif/core/command'
import {KpError, UsageError} from '../errors.js'
import {SHELLS, completionCommands, completionScript} from '../cli/completion.js'
import {printKpError} from '../cli/print-error.js'
import {usageErrorOf} from '../cli/usage-error.js'

export default class Completion extends Command {
  static override summary = 'Print a shell completion script for commands, flags, formats and modes'
  static override description =
    'Completes the commands, their flags, and the values of flags with a fixed set (--format, --mode, -o, --to, ...); file names for -f, --cluster and --out.'
  static override examples = [
    'source <(<%= config.bin %> <%= command.id %> bash)   # in ~/.bashrc',
    'source <(<%= config.bin %> <%= command.id %> zsh)    # in ~/.zshrc, after compinit',
    '<%= config.bin %> <%= command.id %> fish > ~/.config/fish/completions/<%= config.bin %>.fish',
  ]
  static override args = {
    shell: Args.string({required: true, options: [...SHELLS], description: 'bash, zsh or fish'}),
  }

  async run(): Promise<void> {
    const {args} = await this.parse(Completion)
    // A script for the name `kubectl kp` would take over completion of kubectl itself.
    if (this.config.bin !== 'kp') throw pluginCompletionError(this.config.bin)
    const commands = completionCommands(this.config.commands as never)
    process.stdout.write(
      completionScript(args.shell as (typeof SHELLS)[number], this.config.bin, commands),
    )
  }

  /** Usage errors as every kp command reports them (src/cli/usage-error.ts): exit 2, one line. */
  protected override async catch(err: Error & {oclif?: {exit?: number}}): Promise<unknown> {
    const usage = err instanceof KpError ? err : usageErrorOf(err, this.id)
    if (usage) {
      printKpError(usage, false)
      this.exit(usage.exitCode)
    }
    return super.catch(err)
  }
}

/** `kubectl kp completion`: kubectl completes its plugins itself, through kubectl_complete-kp. */
function pluginCompletionError(bin: string): UsageError {
  const plugin = bin.replace(/^kubectl /, '').replaceAll(' ', '-')
  return new UsageError(
    `as \`${bin}\`, kp completes through kubectl's own shell completion`,
    'USAGE_COMPLETION_PLUGIN',
    [
      `put kubectl_complete-${plugin} on PATH, a link to the same executable as kubectl-${plugin}: ` +
        `ln -s kubectl-${plugin} "$(dirname "$(command -v kubectl-${plugin})")/kubectl_complete-${plugin}"`,
      'then `source <(kubectl completion bash)` (or zsh, fish) completes `kubectl kp …` (kubectl ≥ 1.26)',
    ],
  )
}
