// Typed errors: main.ts is the one place that turns them into messages and exit statuses.

export const EXIT = {
  ok: 0,
  checkFailed: 1,
  usage: 2,
  cannotLaunch: 125,
  cannotRun: 126,
  notFound: 127,
} as const

/** An error meant for the user: a one- or two-line message and an exit status. */
export class ClaudeboxError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
    this.name = 'ClaudeboxError'
  }
}

export const usageError = (message: string): ClaudeboxError => new ClaudeboxError(message, EXIT.usage)
export const launchError = (message: string): ClaudeboxError => new ClaudeboxError(message, EXIT.cannotLaunch)
