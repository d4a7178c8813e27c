// --help: rendered by commander from the options table (cli/options.ts). Its own bundle
// (dist/help.cjs): commander is 125 KB that a launch never needs.
import { OWN_OPTIONS } from './options.js'

const HELP_FOOTER = `
Every other argument, and everything after \`--\`, goes to claude unchanged:
  claudebox -c                 continue the last conversation, sandboxed
  claudebox -p "fix the tests" one prompt, non-interactive
  claudebox -- --version       Claude Code's own --version
  claudebox -- --help          Claude Code's own help

Environment: CLAUDEBOX_HOME (state, default ~/.claudebox), CLAUDEBOX_CLAUDE (program to run),
CLAUDEBOX_BWRAP (bwrap to use), CLAUDEBOX_DEBUG=1 (debug lines on stderr).
Exit status: claude's own; 128+N when it dies of signal N; 2 usage; 125 cannot launch;
126 claude not runnable; 127 claude not found; --check: 0 all required checks pass, 1 otherwise.
`

/** commander's program for claudebox's own options: --help is rendered from it (and tests read options with it). */
export async function buildProgram() {
  const { Command, Option } = await import('commander')
  const program = new Command('claudebox')
    .usage('[claudebox options] [--] [claude arguments...]')
    .description('Run Claude Code in a bubblewrap sandbox with per-project state.')
    .helpOption(false)
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
  for (const own of OWN_OPTIONS) {
    const option = new Option(own.value ? `${own.flag} <${own.value}>` : own.flag, own.description)
    if (own.conflicts) option.conflicts([...own.conflicts])
    if (own.choices) option.choices([...own.choices])
    if (own.repeatable) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value])
    program.addOption(option)
  }
  return program
}

/** The help text, for `--help`. */
export async function helpText(): Promise<string> {
  return (await buildProgram()).helpInformation() + HELP_FOOTER
}
