// Typed errors: main.ts is the one place that turns them into messages and exit statuses.

export const EXIT = {
  ok: 0,
  checkFailed: 1,
  usage: 2,
  cannotLaunch: 125,
  cannotRun: 126,
  notFound: 127,
  /** Ctrl-C at one of claudebox's own questions: 128 + SIGINT, as the shell reports a Ctrl-C. */
  interrupted: 130,
} as const

const BRAND = Symbol.for('claudebox.error')

/** An error meant for the user: a one- or two-line message and an exit status. */
export class ClaudeboxError extends Error {
  readonly [BRAND] = true

  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
    this.name = 'ClaudeboxError'
  }

  // Each mode is its own bundle with its own copy of this class (scripts/build.mjs): `instanceof`
  // in main.ts must still know an error --check or --gc threw. A subclass (ApprovalNeeded) keeps
  // the ordinary check: the brand alone took every claudebox error for one (red team).
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== ClaudeboxError) return Function.prototype[Symbol.hasInstance].call(this, value)
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
  }
}

/** The signals whose default ends claudebox, which it handles while a launch needs to (run.ts, cgroups.ts, prompt.ts). */
export const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const

export const usageError = (message: string): ClaudeboxError => new ClaudeboxError(message, EXIT.usage)
export const launchError = (message: string): ClaudeboxError => new ClaudeboxError(message, EXIT.cannotLaunch)
