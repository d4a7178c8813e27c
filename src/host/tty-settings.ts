// The terminal's settings (termios) as they were before the session, put back right after it,
// before the checks after the session and any wait there. A session can change them (`stty intr R
// -isig`): the interrupt key became a letter, and the answer to a terminal query the session sent
// then interrupted claudebox in the middle of its work after the session (red team, rounds 91 and
// 92). Node puts stdio's settings back only at its exit. Read by the system's stty at the start of
// a launch with a terminal (~2 ms), never one from PATH (a folder of the project may be on it).
import { spawnSync } from 'node:child_process'
import { isatty } from 'node:tty'
import { debug } from '../cli/log.js'
import { controllingTerminalOnStdio, inBackgroundOfTerminal } from './fs.js'
import { systemProgram } from './system-programs.js'

export interface TtySettings {
  /** Puts the settings back, when claudebox is in the foreground (in the background stty would stop on SIGTTOU). */
  restore(): void
}

const STTY = systemProgram('stty')

export const NO_TTY_SETTINGS: TtySettings = { restore() {} }

/**
 * The settings of the terminal on stdin, stdout or stderr (the first that is one: the sandbox
 * gets it, `echo prompt | claudebox -p` included, red team round 93), read now; none: nothing to put back.
 */
export function saveTtySettings(): TtySettings {
  // The controlling terminal first: it is the one /dev/tty inside leads to (red team, round 95).
  const fd = controllingTerminalOnStdio() ?? [0, 1, 2].find(fd => isatty(fd))
  if (STTY === undefined || fd === undefined || inBackgroundOfTerminal()) return NO_TTY_SETTINGS
  const read = spawnSync(STTY, ['-g'], { stdio: [fd, 'pipe', 'ignore'], encoding: 'utf8', timeout: 2_000 })
  const saved = read.status === 0 ? read.stdout.trim() : ''
  if (!/^[0-9a-f:]+$/.test(saved)) return NO_TTY_SETTINGS
  return {
    restore() {
      if (inBackgroundOfTerminal()) return debug("the terminal's settings not put back: claudebox is in the background")
      const r = spawnSync(STTY, [saved], { stdio: [fd, 'ignore', 'ignore'], timeout: 2_000 })
      debug(`the terminal's settings put back (stty: ${r.status ?? r.signal ?? r.error?.message})`)
    },
  }
}
