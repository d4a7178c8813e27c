// claudebox's own options, as data: the launch path splits and parses argv with this table alone
// (args.ts parseOwn); commander, which costs ~15 ms to load, only renders --help from it.

export interface OwnOption {
  /** Long flag, e.g. `--dry-run`. */
  flag: string
  /** Placeholder of the value, for options that take one. */
  value?: string
  description: string
  /** Other options (attribute names) this one cannot be combined with. */
  conflicts?: readonly string[]
  /** May be given several times; the values are collected in order. */
  repeatable?: boolean
  /** The only values accepted. */
  choices?: readonly string[]
}

export const OWN_OPTIONS: readonly OwnOption[] = [
  { flag: '--dry-run', description: 'print the directories and the bwrap command a launch would use; create nothing' },
  { flag: '--check', description: 'diagnose this machine and show what protects you', conflicts: ['dryRun', 'gc', 'list'] },
  { flag: '--gc', description: 'remove the state of projects that no longer exist (asks first; --dry-run shows the plan)', conflicts: ['list'] },
  { flag: '--broken', description: 'with --gc: also remove broken instances (no readable project-root)' },
  { flag: '--force', description: 'with --gc: remove even when most projects look gone at once' },
  { flag: '--list', description: 'list every instance: state, last use, size, conversations, project root', conflicts: ['dryRun'] },
  { flag: '--json', description: 'with --list or --sessions: JSON for scripts' },
  { flag: '--sessions', description: "list this project's conversations (all worktrees), newest first, for --resume ID" },
  { flag: '--adopt', value: 'old-root', description: "take over the instance of a project that moved from OLD-ROOT (with --dry-run: show the plan)" },
  { flag: '--proposals', description: 'show the changes sessions made to shared Claude settings, per project, as diffs' },
  { flag: '--promote', value: 'id', description: 'apply proposal ID to the shared tier, for every project (asks first; --dry-run shows it)' },
  { flag: '--dismiss', value: 'id', description: 'stop proposing ID (the change stays in its project)' },
  { flag: '--login', description: "sign in once for every project: runs claude auth login in the sandbox and keeps the login on the host" },
  { flag: '--profiles', description: 'list the profile names of config.json, one per line' },
  { flag: '--profile', value: 'name', description: 'use a named profile from config.json (options and Claude settings)' },
  { flag: '--network', value: 'mode', description: 'allow (default: Claude\'s API and the hosts you allow, through a proxy), none (loopback only) or open (the host\'s network)', choices: ['allow', 'none', 'open'] },
  { flag: '--no-network', description: 'the same as --network=none' },
  { flag: '--allow-host', value: 'host[:port]', description: 'also allow HOST (port 80/443 unless given; *.domain; repeatable)', repeatable: true },
  { flag: '--deny-host', value: 'host[:port]', description: 'block HOST even when a list allows it (repeatable)', repeatable: true },
  { flag: '--allow-preset', value: 'name', description: 'also allow a preset: npm, pypi, crates, go, github (repeatable)', repeatable: true },
  { flag: '--connectors', description: "let Claude load your claude.ai connectors (Gmail, Drive...) in this launch (off by default)" },
  { flag: '--ssh-agent', description: 'forward the ssh-agent socket ($SSH_AUTH_SOCK), never the keys' },
  { flag: '--ro-bind', value: 'path', description: 'also show PATH read-only at its own path (repeatable)', repeatable: true },
  { flag: '--bind', value: 'path', description: 'also make PATH writable at its own path (repeatable)', repeatable: true },
  { flag: '--env', value: 'name[=value]', description: "pass NAME (the host's value) or set NAME=VALUE inside (repeatable)", repeatable: true },
  { flag: '--pids-limit', value: 'n', description: 'at most N processes and threads inside (default 4096; 0: no limit)' },
  { flag: '--memory-limit', value: 'size', description: 'at most SIZE of memory inside, like 4G (needs a cgroup claudebox can use; --check tells)' },
  { flag: '--cpu-limit', value: 'cpus', description: 'at most this many CPUs, like 2 or 0.5 (needs a cgroup claudebox can use; --check tells)' },
  { flag: '--shell', description: 'start your shell instead of Claude, in the same sandbox' },
  { flag: '--writable-git-config', description: 'let the agent change .git/config and .git/hooks (read-only by default)' },
  { flag: '--hard-links', description: 'let programs inside make hard links (refused by default, as across file systems: through one, a change the session made to a file can later pass for yours)' },
  { flag: '--io-uring', description: 'let programs inside use io_uring (refused by default: it makes sockets past the filter, vsock out of the network)' },
  { flag: '--allow-dangerous-root', description: 'allow a project root that is /, your home, a system dir... (never the default)' },
  { flag: '--yes', description: "answer yes to claudebox's own questions (login import, first-launch confirmation, --gc)" },
  { flag: '--completions', value: 'shell', description: 'print the completion script for bash, zsh or fish' },
  { flag: '--help', description: "show this help (also -h; Claude's own: claudebox -- --help)" },
  { flag: '--version', description: "show claudebox's version (claude's: claudebox -- --version)" },
]

/**
 * Splits argv into claudebox's own options and Claude's arguments. Our options are long options
 * Claude Code does not have, recognised only before the first argument that is not one of ours:
 * that argument and everything after it (and after `--`) are Claude's, unchanged and in order, so
 * a prompt that looks like an option (`claudebox -p "--ro-bind=/x"`) is never taken for one.
 */
export function splitArgs(argv: readonly string[]): { own: string[]; claude: string[]; missingValue?: string } {
  const takesValue = new Map(OWN_OPTIONS.map(o => [o.flag, o.value !== undefined]))
  const own: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--') return { own, claude: argv.slice(i + 1) }
    // -h is ours, as in gh, docker and npm: Claude's own help is claudebox -- --help.
    if (arg === '-h') {
      own.push('--help')
      continue
    }
    const name = arg.startsWith('--') ? (arg.split('=', 1)[0] as string) : undefined
    const valued = name === undefined ? undefined : takesValue.get(name)
    if (valued === undefined) return { own, claude: argv.slice(i) }
    if (valued && !arg.includes('=')) {
      const value = argv[i + 1]
      if (value === undefined) return { own, claude: [], missingValue: name as string }
      own.push(arg, value)
      i++
    } else {
      own.push(arg)
    }
  }
  return { own, claude: [] }
}

/** The own option closest to a mistyped one (edit distance <= 2), for "did you mean". */
export function closestOption(arg: string): string | undefined {
  const name = arg.split('=', 1)[0] as string
  let best: { flag: string; distance: number } | undefined
  for (const { flag } of OWN_OPTIONS) {
    const distance = editDistance(name, flag)
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { flag, distance }
  }
  return best?.flag
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
