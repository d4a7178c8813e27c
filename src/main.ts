// main(argv) -> exit status: dispatches the modes and is the one place errors become statuses.
import { parseArgs, helpText } from './cli.js'
import { ClaudeboxError, EXIT, launchError } from './errors.js'
import { homeDir, probe, readInstanceState } from './facts.js'
import { debug, warn } from './log.js'
import { planLaunch } from './plan.js'
import { auditLines, renderDryRun } from './render.js'
import { readSettings, type Settings } from './settings.js'
import type { CliOptions } from './cli.js'

declare const __CLAUDEBOX_VERSION__: string
export const VERSION = __CLAUDEBOX_VERSION__

export async function main(argv: readonly string[]): Promise<number> {
  try {
    const options = await parseArgs(argv)
    if (options.help) return print(await helpText())
    if (options.version) return print(`claudebox ${VERSION}\n`)
    const settings = readSettings(process.env, homeDir(process.env))
    switch (options.mode) {
      case 'check': {
        const { runCheck } = await import('./check-command.js')
        return await runCheck(settings)
      }
      case 'gc': {
        const { runGc } = await import('./gc-command.js')
        return runGc(settings, { dryRun: options.dryRun })
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

async function launch(settings: Settings, options: CliOptions): Promise<number> {
  const facts = probe(settings)
  const plan = planLaunch(facts, { claudeArgs: options.claudeArgs })
  for (const warning of plan.warnings) warn(warning)
  if (options.mode === 'dry-run') return print(renderDryRun(plan, auditLines(plan)))

  const { applyFiles, applyMkdirs } = await import('./state.js')
  applyMkdirs(plan.mkdirs, facts.claudeboxHome)
  applyFiles(plan.files)
  // Two first launches of projects whose ids collide would both pass the probe; the file decides.
  const state = readInstanceState(plan.summary.instanceDir)
  if (state.kind !== 'ok' || state.recordedRoot !== plan.summary.projectRoot) {
    throw launchError(`instance ${plan.summary.instanceDir} does not record ${plan.summary.projectRoot}; move it away and rerun`)
  }
  debug(`bwrap argv: ${JSON.stringify([plan.file, ...plan.argv])}`)
  const { runForeground } = await import('./run.js')
  return runForeground(plan)
}

function print(text: string): number {
  process.stdout.write(text)
  return EXIT.ok
}
