// The command line: claudebox's own long options, picked out of argv; everything else is Claude's.
import { Command, CommanderError, Option } from 'commander'
import { usageError } from './errors.js'

export type Mode = 'launch' | 'dry-run' | 'check' | 'gc'

export interface CliOptions {
  mode: Mode
  /** With --gc: show the plan only. */
  dryRun: boolean
  help: boolean
  version: boolean
  /** Arguments for `claude`, unchanged and in order. */
  claudeArgs: string[]
}

const HELP_FOOTER = `
Every other argument, and everything after \`--\`, goes to claude unchanged:
  claudebox -c                 continue the last conversation, sandboxed
  claudebox -p "fix the tests" one prompt, non-interactive
  claudebox -- --version       Claude Code's own --version

Environment: CLAUDEBOX_HOME (state, default ~/.claudebox), CLAUDEBOX_CLAUDE (program to run),
CLAUDEBOX_BWRAP (bwrap to use), CLAUDEBOX_DEBUG=1 (debug lines on stderr).
Exit status: claude's own; 128+N when it dies of signal N; 2 usage; 125 cannot launch;
126 claude not runnable; 127 claude not found; --check: 0 all required checks pass, 1 otherwise.`

function buildProgram(): Command {
  return new Command('claudebox')
    .usage('[claudebox options] [--] [claude arguments...]')
    .description('Run Claude Code in a bubblewrap sandbox with per-project state.')
    .helpOption(false)
    .addOption(new Option('--dry-run', 'print the directories and the bwrap command a launch would use; create nothing'))
    .addOption(new Option('--check', 'diagnose this machine and show what protects you').conflicts(['dryRun', 'gc']))
    .addOption(new Option('--gc', 'remove the state of projects that no longer exist'))
    .addOption(new Option('--help', 'show this help'))
    .addOption(new Option('--version', "show claudebox's version (claude's: claudebox -- --version)"))
    .addHelpText('after', HELP_FOOTER)
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
}

/** The help text, for `--help`. */
export function helpText(): string {
  return buildProgram().helpInformation() + HELP_FOOTER.slice(1) + '\n'
}

/**
 * Splits argv into claudebox's own options and Claude's arguments. Our options are long options
 * Claude Code does not have, recognised anywhere before `--`; everything else keeps its order.
 * Commander alone cannot do this: after the first unknown option it treats the rest as unknown.
 */
export function splitArgs(argv: readonly string[], program: Command = buildProgram()): { own: string[]; claude: string[] } {
  const takesValue = new Map<string, boolean>()
  for (const option of program.options) if (option.long) takesValue.set(option.long, option.required || option.optional)
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
      if (value === undefined) throw usageError(`option ${name} needs a value; see claudebox --help`)
      own.push(arg, value)
      i++
    } else {
      own.push(arg)
    }
  }
  return { own, claude }
}

export function parseArgs(argv: readonly string[]): CliOptions {
  const program = buildProgram()
  const { own, claude } = splitArgs(argv, program)
  try {
    program.parse(own, { from: 'user' })
  } catch (error) {
    if (error instanceof CommanderError) throw usageError(`${error.message.replace(/^error: /, '')}; see claudebox --help`)
    throw error
  }
  const opts = program.opts<{ dryRun?: true; check?: true; gc?: true; help?: true; version?: true }>()
  const mode: Mode = opts.check ? 'check' : opts.gc ? 'gc' : opts.dryRun ? 'dry-run' : 'launch'
  return { mode, dryRun: opts.dryRun === true, help: opts.help === true, version: opts.version === true, claudeArgs: claude }
}
