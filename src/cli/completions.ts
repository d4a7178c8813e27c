// Shell completions for claudebox's own options, falling back to claude's completion (when the
// shell has one) for everything else, since every other argument goes to claude. Pure: returns
// the script text.

export type Shell = 'bash' | 'zsh' | 'fish'
export const SHELLS: readonly Shell[] = ['bash', 'zsh', 'fish']

/** One of claudebox's long options. `OwnOption` (options.ts) fits as it is. */
export interface CompletionOption {
  /** Long flag, e.g. `--dry-run`. */
  flag: string
  description: string
  /** Takes a value; when absent, whether a `value` placeholder is given. */
  takesValue?: boolean
  /** Placeholder of the value, e.g. `path`. */
  value?: string
  /** May be given several times. */
  repeatable?: boolean
  /** The values to offer after it (--network's modes, the preset names). */
  choices?: readonly string[]
}

/** What to offer after an option that takes a value (others: its choices, or nothing: free text). */
const VALUE_KIND: Readonly<Record<string, 'dir' | 'shell' | 'profile'>> = {
  '--ro-bind': 'dir',
  '--bind': 'dir',
  '--adopt': 'dir',
  '--completions': 'shell',
  '--profile': 'profile',
}

/** Profile names come from the user's config.json when completing, by asking claudebox itself. */
const PROFILES_COMMAND = 'claudebox --profiles 2>/dev/null'

const takesValue = (o: CompletionOption): boolean => o.takesValue ?? o.value !== undefined
const posixQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`
const fishQuote = (text: string): string => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

export function completionScript(shell: Shell, options: readonly CompletionOption[]): string {
  switch (shell) {
    case 'bash':
      return bash(options)
    case 'zsh':
      return zsh(options)
    case 'fish':
      return fish(options)
  }
}

function bash(options: readonly CompletionOption[]): string {
  const flags = options.map(o => o.flag).join(' ')
  const withKind = (kind: 'dir' | 'shell' | 'profile'): string[] => options.filter(o => takesValue(o) && VALUE_KIND[o.flag] === kind).map(o => o.flag)
  const withChoices = options.filter(o => takesValue(o) && VALUE_KIND[o.flag] === undefined && o.choices?.length)
  const freeText = options.filter(o => takesValue(o) && VALUE_KIND[o.flag] === undefined && !o.choices?.length).map(o => o.flag)
  const cases = [
    withKind('dir').length > 0 ? `    ${withKind('dir').join('|')}) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;` : '',
    withKind('shell').length > 0 ? `    ${withKind('shell').join('|')}) COMPREPLY=($(compgen -W ${posixQuote(SHELLS.join(' '))} -- "$cur")); return ;;` : '',
    withKind('profile').length > 0 ? `    ${withKind('profile').join('|')}) COMPREPLY=($(compgen -W "$(${PROFILES_COMMAND})" -- "$cur")); return ;;` : '',
    ...withChoices.map(o => `    ${o.flag}) COMPREPLY=($(compgen -W ${posixQuote((o.choices ?? []).join(' '))} -- "$cur")); return ;;`),
    freeText.length > 0 ? `    ${freeText.join('|')}) COMPREPLY=(); return ;;` : '',
  ].filter(line => line !== '')
  return `# bash completion for claudebox
_claudebox() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=
  (( COMP_CWORD > 0 )) && prev=\${COMP_WORDS[COMP_CWORD-1]}
  case "$prev" in
${cases.join('\n')}
  esac
  COMPREPLY=()
  if [[ $cur == --* ]]; then
    COMPREPLY=($(compgen -W ${posixQuote(flags)} -- "$cur"))
  fi
  # Everything else is claude's: use its completion when there is one (loading it on demand
  # through bash-completion), completing the same words as if the command were claude.
  local spec func=
  spec=$(complete -p claude 2>/dev/null) || {
    if declare -F _comp_load >/dev/null; then _comp_load claude >/dev/null 2>&1
    elif declare -F _completion_loader >/dev/null; then _completion_loader claude >/dev/null 2>&1
    fi
    spec=$(complete -p claude 2>/dev/null)
  }
  if [[ $spec =~ -F\\ ([^ ]+) ]]; then
    func=\${BASH_REMATCH[1]}
  elif declare -F _claude >/dev/null; then
    func=_claude
  fi
  if [[ -n $func ]]; then
    local ours=("\${COMPREPLY[@]}") first=\${COMP_WORDS[0]}
    COMP_WORDS[0]=claude
    COMP_LINE=claude\${COMP_LINE#"$first"}
    (( COMP_POINT += 6 - \${#first} ))
    COMPREPLY=()
    "$func" claude "$cur" "$prev"
    COMPREPLY=("\${ours[@]}" "\${COMPREPLY[@]}")
  fi
  if (( \${#COMPREPLY[@]} == 0 )); then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _claudebox claudebox
`
}

function zsh(options: readonly CompletionOption[]): string {
  const specs = options.map(o => {
    // Inside _arguments' [description]: no brackets; the spec itself is single-quoted.
    const description = o.description.replaceAll('[', '(').replaceAll(']', ')').replaceAll("'", '')
    const kind = VALUE_KIND[o.flag]
    const action = !takesValue(o)
      ? ''
      : kind === 'dir'
        ? ':path:_files -/'
        : kind === 'shell'
          ? `:shell:(${SHELLS.join(' ')})`
          : kind === 'profile'
            ? `:profile:{compadd -- $(${PROFILES_COMMAND})}`
            : o.choices?.length
              ? `:${o.value ?? 'value'}:(${o.choices.join(' ')})`
              : `:${o.value ?? 'value'}: `
    return `    '${o.repeatable ? '*' : ''}${o.flag}[${description}]${action}' \\`
  })
  return `#compdef claudebox
# zsh completion for claudebox: install as _claudebox in $fpath, or source it after compinit.
_claudebox() {
  local state
  _arguments -s \\
${specs.join('\n')}
    '*::claude argument:->claude'
  if [[ $state == claude ]]; then
    # Everything else is claude's: complete it as \`claude ...\` when claude has a completion.
    words=(claude "\${words[@]}")
    (( CURRENT++ ))
    if (( $+functions[_claude] )); then
      _claude
    else
      _files
    fi
  fi
}
if [[ $funcstack[1] == _claudebox ]]; then
  _claudebox "$@"
else
  compdef _claudebox claudebox
fi
`
}

function fish(options: readonly CompletionOption[]): string {
  const lines = options.map(o => {
    const kind = VALUE_KIND[o.flag]
    const value = !takesValue(o)
      ? ''
      : kind === 'dir'
        ? ' -r -F'
        : kind === 'shell'
          ? ` -x -a ${fishQuote(SHELLS.join(' '))}`
          : kind === 'profile'
            ? ` -x -a ${fishQuote(`(${PROFILES_COMMAND})`)}`
            : o.choices?.length
              ? ` -x -a ${fishQuote(o.choices.join(' '))}`
              : ' -x'
    return `complete -c claudebox -l ${o.flag.replace(/^--/, '')}${value} -d ${fishQuote(o.description)}`
  })
  return `# fish completion for claudebox
${lines.join('\n')}
# Everything else is claude's.
complete -c claudebox -w claude
`
}
