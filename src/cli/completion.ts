/**
 * Shell completion scripts for `kp completion bash|zsh|fish`, made from the commands' own flag
 * definitions (oclif's command list), so a new command, flag, format or mode completes without
 * an edit here.
 */
export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

export interface CompletionFlag {
  name: string
  char?: string
  summary: string
  /** boolean: takes no value; file: a path; choice: one of options; value: anything else. */
  kind: 'boolean' | 'file' | 'choice' | 'value'
  options?: string[]
}

export interface CompletionCommand {
  id: string
  summary: string
  flags: CompletionFlag[]
  /** The values an argument takes when they are a closed list (`kp completion SHELL`). */
  argOptions: string[]
}

/** Flags whose value is a path: complete file names. */
const PATH_FLAGS = new Set(['file', 'cluster', 'out', 'out-dir'])

interface OclifFlag {
  name: string
  char?: string
  type: string
  options?: readonly string[]
  summary?: string
  description?: string
  hidden?: boolean
}

interface OclifCommand {
  id: string
  summary?: string
  description?: string
  hidden?: boolean
  flags: Record<string, OclifFlag>
  args: Record<string, {options?: readonly string[]}>
}

const firstSentence = (text: string | undefined) => (text ?? '').split(/(?<=\.)\s|\n/)[0] ?? ''

/** The completion model of oclif's commands (Config.commands), hidden ones left out. */
export function completionCommands(commands: readonly OclifCommand[]): CompletionCommand[] {
  return commands
    .filter((c) => !c.hidden)
    .map((c) => ({
      id: c.id,
      summary: firstSentence(c.summary ?? c.description),
      argOptions: Object.values(c.args ?? {}).flatMap((a) => [...(a.options ?? [])]),
      flags: [
        ...Object.values(c.flags)
          .filter((f) => !f.hidden)
          .map((f): CompletionFlag => ({
            name: f.name,
            ...(f.char ? {char: f.char} : {}),
            summary: firstSentence(f.summary ?? f.description),
            kind:
              f.type === 'boolean'
                ? 'boolean'
                : f.options && f.options.length > 0
                  ? 'choice'
                  : PATH_FLAGS.has(f.name)
                    ? 'file'
                    : 'value',
            ...(f.options ? {options: [...f.options]} : {}),
          })),
        {name: 'help', char: 'h', summary: 'Show help.', kind: 'boolean'} as CompletionFlag,
      ].sort((a, b) => a.name.localeCompare(b.name)),
    }))
    .sort((a, b) => a.id.localeCompare(b.id))
}

/** The script for `shell`, completing the program `bin`. */
export function completionScript(shell: Shell, bin: string, commands: CompletionCommand[]): string {
  if (shell === 'bash') return bashScript(bin, commands)
  if (shell === 'zsh') return zshScript(bin, commands)
  return fishScript(bin, commands)
}

const flagWords = (f: CompletionFlag) => [`--${f.name}`, ...(f.char ? [`-${f.char}`] : [])]
/** Single-quoted for sh, zsh and fish alike. */
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

function bashScript(bin: string, commands: CompletionCommand[]): string {
  const fn = `_${bin.replace(/\W/g, '_')}_completion`
  const cases = commands.map((c) => {
    const values = c.flags
      .filter((f) => f.kind !== 'boolean')
      .map((f) => {
        const reply =
          f.kind === 'choice'
            ? `COMPREPLY=($(compgen -W ${quote(f.options!.join(' '))} -- "$cur"))`
            : f.kind === 'file'
              ? 'COMPREPLY=($(compgen -f -- "$cur"))'
              : 'COMPREPLY=()'
        return `        ${flagWords(f).join('|')}) ${reply}; return ;;`
      })
    const words = [...c.flags.flatMap(flagWords), ...c.argOptions].join(' ')
    return [
      `    ${c.id})`,
      '      case "$prev" in',
      ...values,
      '      esac',
      `      COMPREPLY=($(compgen -W ${quote(words)} -- "$cur")) ;;`,
    ].join('\n')
  })
  return `# bash completion for ${bin} (${bin} completion bash); add to ~/.bashrc:
#   source <(${bin} completion bash)
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W ${quote(commands.map((c) => c.id).join(' '))} -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
  esac
}
complete -o default -F ${fn} ${bin}
`
}

/** zsh's _arguments spec text: brackets and colons end a description. */
const zshText = (s: string) => s.replace(/[[\]:\\]/g, ' ').replaceAll("'", '')

function zshScript(bin: string, commands: CompletionCommand[]): string {
  const fn = `_${bin.replace(/\W/g, '_')}`
  const described = commands.map((c) => quote(`${c.id}:${zshText(c.summary)}`)).join(' ')
  const cases = commands.map((c) => {
    const specs = c.flags.flatMap((f) => {
      const action =
        f.kind === 'boolean'
          ? ''
          : f.kind === 'choice'
            ? `:${f.name}:(${f.options!.join(' ')})`
            : f.kind === 'file'
              ? `:${f.name}:_files`
              : `:${f.name}: `
      return flagWords(f).map((w) => quote(`*${w}[${zshText(f.summary)}]${action}`))
    })
    if (c.argOptions.length > 0) specs.push(quote(`1:argument:(${c.argOptions.join(' ')})`))
    return `    ${c.id}) _arguments -s ${specs.join(' ')} ;;`
  })
  return `#compdef ${bin}
# zsh completion for ${bin}; add to ~/.zshrc (after compinit):
#   source <(${bin} completion zsh)
${fn}() {
  if (( CURRENT == 2 )); then
    local -a commands=(${described})
    _describe command commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join('\n')}
  esac
}
compdef ${fn} ${bin}
`
}

function fishScript(bin: string, commands: CompletionCommand[]): string {
  const lines = [
    `# fish completion for ${bin}; save it as ~/.config/fish/completions/${bin}.fish:`,
    `#   ${bin} completion fish > ~/.config/fish/completions/${bin}.fish`,
    `complete -c ${bin} -f`,
  ]
  for (const c of commands)
    lines.push(`complete -c ${bin} -n __fish_use_subcommand -a ${c.id} -d ${quote(c.summary)}`)
  for (const c of commands) {
    const when = `-n ${quote(`__fish_seen_subcommand_from ${c.id}`)}`
    for (const f of c.flags) {
      const names = `${f.char ? `-s ${f.char} ` : ''}-l ${f.name}`
      const value =
        f.kind === 'boolean'
          ? ''
          : f.kind === 'choice'
            ? ` -x -a ${quote(f.options!.join(' '))}`
            : f.kind === 'file'
              ? ' -r -F'
              : ' -x'
      lines.push(`complete -c ${bin} ${when} ${names}${value} -d ${quote(f.summary)}`)
    }
    if (c.argOptions.length > 0)
      lines.push(`complete -c ${bin} ${when} -a ${quote(c.argOptions.join(' '))}`)
  }
  return `${lines.join('\n')}\n`
}

/**
 * kubectl's completion of a plugin's words (cobra's `__complete` protocol, kubectl ≥ 1.26):
 * kubectl runs `kubectl_complete-kp WORD...` with the words after `kubectl kp`, the last one the
 * word being completed ('' for a new one), and reads back one `value<TAB>description` line per
 * candidate, then `:N`, cobra's directive (0: the shell may complete file names, 4: it may not).
 */
export function completeWords(commands: CompletionCommand[], words: readonly string[]): string {
  const cur = words.at(-1) ?? ''
  const before = words.slice(0, -1)
  if (before.length === 0)
    return cobraReply(
      commands.filter((c) => c.id.startsWith(cur)).map((c) => [c.id, c.summary]),
      NO_FILES,
    )
  const command = commands.find((c) => c.id === before[0])
  if (!command) return cobraReply([], NO_FILES)
  const flagOf = (word: string) =>
    command.flags.find((f) => word === `--${f.name}` || (f.char && word === `-${f.char}`))
  const prev = before.length > 1 ? flagOf(before.at(-1)!) : undefined
  if (prev && prev.kind !== 'boolean') return flagValues(prev, cur, '')
  const assigned = /^(--[^=]+)=(.*)$/.exec(cur)
  if (assigned) {
    const flag = flagOf(assigned[1]!)
    return flag ? flagValues(flag, assigned[2]!, `${assigned[1]}=`) : cobraReply([], NO_FILES)
  }
  if (cur.startsWith('-'))
    return cobraReply(
      command.flags.flatMap((f) =>
        flagWords(f)
          .filter((w) => w.startsWith(cur))
          .map((w): [string, string] => [w, f.summary]),
      ),
      NO_FILES,
    )
  const options = command.argOptions.filter((o) => o.startsWith(cur))
  // A command whose arguments are not a closed list takes sources or services: let the shell
  // offer file names, as the bash script's `complete -o default` does.
  return cobraReply(
    options.map((o) => [o, '']),
    command.argOptions.length > 0 ? NO_FILES : FILES,
  )
}

const FILES = 0
const NO_FILES = 4

function flagValues(flag: CompletionFlag, cur: string, prefix: string): string {
  if (flag.kind === 'file') return cobraReply([], FILES)
  const options = (flag.options ?? []).filter((o) => o.startsWith(cur))
  return cobraReply(
    options.map((o) => [`${prefix}${o}`, '']),
    NO_FILES,
  )
}

function cobraReply(candidates: [string, string][], directive: number): string {
  const lines = candidates.map(([value, description]) =>
    description ? `${value}\t${description.replace(/\s+/g, ' ')}` : value,
  )
  return `${[...lines, `:${directive}`].join('\n')}\n`
}
