// Shell completions for claudebox's own options, falling back to claude's completion (when the
// shell has one loaded) for everything else. Pure: returns the script text.
import type { OwnOption } from './options.js'

export type Shell = 'bash' | 'zsh' | 'fish'
export const SHELLS: readonly Shell[] = ['bash', 'zsh', 'fish']

/** Values offered after an option that takes one. */
const VALUE_KIND: Readonly<Record<string, 'dir' | 'shell' | 'none'>> = {
  '--ro-bind': 'dir',
  '--bind': 'dir',
  '--adopt': 'dir',
  '--completions': 'shell',
}

const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`

export function completionScript(shell: Shell, options: readonly OwnOption[]): string {
  switch (shell) {
    case 'bash':
      return bash(options)
    case 'zsh':
      return zsh(options)
    case 'fish':
      return fish(options)
  }
}

function bash(options: readonly OwnOption[]): string {
  const flags = options.map(o => o.flag).join(' ')
  const dirs = options.filter(o => VALUE_KIND[o.flag] === 'dir').map(o => o.flag).join('|')
  const valued = options.filter(o => o.value !== undefined && VALUE_KIND[o.flag] === undefined).map(o => o.flag).join('|')
  return `# bash completion for claudebox
_claudebox() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  case "$prev" in
    ${dirs}) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --completions) COMPREPLY=($(compgen -W "${SHELLS.join(' ')}" -- "$cur")); return ;;
    ${valued}) COMPREPLY=(); return ;;
  esac
  if [[ $cur == --* ]]; then
    COMPREPLY=($(compgen -W "${flags}" -- "$cur"))
  fi
  # Everything else is claude's: use its completion when one is loaded.
  local spec func
  spec=$(complete -p claude 2>/dev/null)
  if [[ $spec =~ -F\\ ([^ ]+) ]]; then
    func=\${BASH_REMATCH[1]}
    local saved=("\${COMPREPLY[@]}")
    COMP_WORDS[0]=claude
    "$func" claude "$cur" "$prev"
    COMPREPLY=("\${saved[@]}" "\${COMPREPLY[@]}")
  fi
  if [[ \${#COMPREPLY[@]} -eq 0 ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _claudebox claudebox
`
}

function zsh(options: readonly OwnOption[]): string {
  const specs = options.map(o => {
    const description = o.description.replaceAll('[', '(').replaceAll(']', ')').replaceAll("'", '')
    const kind = VALUE_KIND[o.flag]
    const action = kind === 'dir' ? ':path:_files -/' : kind === 'shell' ? `:shell:(${SHELLS.join(' ')})` : o.value ? `:${o.value}: ` : ''
    return `    '${o.flag}[${description}]${action}' \\`
  })
  return `#compdef claudebox
# zsh completion for claudebox
_claudebox() {
  local state
  _arguments -s \\
${specs.join('\n')}
    '*::claude argument:->claude'
  if [[ $state == claude ]]; then
    # Everything else is claude's: use its completion when one is loaded.
    if (( $+functions[_claude] )); then
      words=(claude "\${words[@]}")
      (( CURRENT++ ))
      _claude
    else
      _files
    fi
  fi
}
_claudebox "$@"
`
}

function fish(options: readonly OwnOption[]): string {
  const lines = options.map(o => {
    const kind = VALUE_KIND[o.flag]
    const value = kind === 'dir' ? ' -r -F' : kind === 'shell' ? ` -x -a ${quote(SHELLS.join(' '))}` : o.value ? ' -x' : ''
    return `complete -c claudebox -l ${o.flag.slice(2)}${value} -d ${quote(o.description)}`
  })
  return `# fish completion for claudebox
${lines.join('\n')}
# Everything else is claude's.
complete -c claudebox -w claude
`
}
