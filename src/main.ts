// main(argv) -> exit status: dispatches the modes and is the one place errors become statuses.
import { parseArgs } from './cli/args.js'
import { ClaudeboxError, EXIT, usageError } from './errors.js'
import { homeDir, homeProblem } from './host/probe.js'
import { FILE_VIEW } from './host/fs.js'
import { launch } from './commands/launch.js'
import { print, warn } from './cli/log.js'
import { OWN_OPTIONS } from './cli/options.js'
import { readSettings } from './config/settings.js'
import { VERSION } from './version.js'

export async function main(argv: readonly string[]): Promise<number> {
  try {
    const options = parseArgs(argv)
    if (options.help) return print(await (await import('./cli/help.js')).helpText())
    if (options.version) return print(`claudebox ${VERSION}\n`)
    if (options.completions !== undefined) {
      const { completionScript, SHELLS } = await import('./cli/completions.js')
      const shell = SHELLS.find(s => s === options.completions)
      if (shell === undefined) throw usageError(`--completions: unknown shell "${options.completions}"; use one of ${SHELLS.join(', ')}`)
      const { PRESETS } = await import('./network/policy.js')
      return print(completionScript(shell, OWN_OPTIONS.map(o => (o.flag === '--allow-preset' ? { ...o, choices: Object.keys(PRESETS) } : o))))
    }
    if (options.profiles) {
      const { loadConfig } = await import('./commands/setup.js')
      const names = Object.keys(loadConfig(readSettings(process.env, homeDir(process.env), homeProblem(homeDir(process.env)), FILE_VIEW)).profiles)
      return print(names.map(name => `${name}\n`).join(''))
    }
    const settings = readSettings(process.env, homeDir(process.env), homeProblem(homeDir(process.env)), FILE_VIEW)
    switch (options.mode) {
      case 'check': {
        const { runCheck } = await import('./commands/check.js')
        return await runCheck(settings, options)
      }
      case 'gc': {
        const { runGc } = await import('./commands/gc.js')
        const { dryRun, yes, force, broken } = options
        return await runGc(settings, homeDir(process.env), { dryRun, yes, force, broken })
      }
      case 'sessions': {
        const { runSessions } = await import('./commands/sessions.js')
        return runSessions(settings, options.json)
      }
      case 'adopt': {
        const { runAdopt } = await import('./commands/adopt.js')
        return runAdopt(settings, options.adopt ?? '', options.dryRun)
      }
      case 'list': {
        const { runList } = await import('./commands/list.js')
        return runList(settings, options.json)
      }
      case 'proposals': {
        const { runProposals } = await import('./commands/proposals.js')
        const { json, dryRun, yes, promote, dismiss } = options
        return await runProposals(settings, { json, dryRun, yes, ...(promote === undefined ? {} : { promote }), ...(dismiss === undefined ? {} : { dismiss }) })
      }
      case 'dry-run':
      case 'launch':
        return await launch(settings, options)
    }
  } catch (error) {
    if (error instanceof ClaudeboxError) {
      warn(error.message)
      return error.exitCode
    }
    warn(`internal error: ${(error as Error).message}${process.env['CLAUDEBOX_DEBUG'] === '1' ? `\n${(error as Error).stack}` : ' (CLAUDEBOX_DEBUG=1 shows more)'}`)
    return EXIT.cannotLaunch
  }
}

