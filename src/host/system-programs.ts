// Where claudebox takes the host's programs from (find, stty, getent): the system's own folders,
// never PATH, which may name a folder of the project the session fills (host-env.ts says why).
// Node's own modules only: the root-only search's small bundle starts before the launch bundle.
import fs from 'node:fs'
import path from 'node:path'

/** The system's own folders of programs (NixOS: the current system's profile), never a project's. */
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/run/current-system/sw/bin']

/** `name` from the system's folders, never from PATH (a folder of the project may be on it); undefined when there is none. */
export function systemProgram(name: string): string | undefined {
  return SYSTEM_BIN.map(dir => path.join(dir, name)).find(p => fs.existsSync(p))
}

/** The PATH a system program runs with: the system's folders only. */
export const SYSTEM_PATH = SYSTEM_BIN.join(':')
