// claudebox's own options, as data: the launch path splits argv with this table alone and loads
// commander only when one of these options is present (commander costs ~15 ms to load).

export interface OwnOption {
  /** Long flag, e.g. `--dry-run`. */
  flag: string
  /** Placeholder of the value, for options that take one. */
  value?: string
  description: string
  /** Other options (attribute names) this one cannot be combined with. */
  conflicts?: readonly string[]
}

export const OWN_OPTIONS: readonly OwnOption[] = [
  { flag: '--dry-run', description: 'print the directories and the bwrap command a launch would use; create nothing' },
  { flag: '--check', description: 'diagnose this machine and show what protects you', conflicts: ['dryRun', 'gc'] },
  { flag: '--gc', description: 'remove the state of projects that no longer exist' },
  { flag: '--help', description: 'show this help' },
  { flag: '--version', description: "show claudebox's version (claude's: claudebox -- --version)" },
]

/**
 * Splits argv into claudebox's own options and Claude's arguments. Our options are long options
 * Claude Code does not have, recognised anywhere before `--`; everything else keeps its order.
 * (Commander alone cannot do this: after the first unknown option it treats the rest as unknown.)
 */
export function splitArgs(argv: readonly string[]): { own: string[]; claude: string[]; missingValue?: string } {
  const takesValue = new Map(OWN_OPTIONS.map(o => [o.flag, o.value !== undefined]))
  const own: string[] = []
  const claude: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--') {
      claude.push(...argv.slice(i + 1))
      break
    }
    const name = arg.startsWith('--') ? (arg.split('=', 1)[0] as string) : undefined
    const valued = name === undefined ? undefined : takesValue.get(name)
    if (valued === undefined) {
      claude.push(arg)
    } else if (valued && !arg.includes('=')) {
      const value = argv[i + 1]
      if (value === undefined) return { own, claude, missingValue: name as string }
      own.push(arg, value)
      i++
    } else {
      own.push(arg)
    }
  }
  return { own, claude }
}
