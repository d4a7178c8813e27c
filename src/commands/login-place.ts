// `claudebox --login` signs in for every project, so it runs in none: in an empty folder of its
// own, with a fresh instance, both removed afterwards. Run from the project, it used that
// project's instance, whose settings.json any earlier session of the project may have written, and
// Claude Code applies that file's `env` during `claude auth login` (red team, round 35: an
// env.BROWSER planted there ran beside the new login in the same store, put the attacker's tokens
// in its place, and every project then used them); the identity keys carried out of that
// instance's .claude.json after a login would have been the session's too.
//
// The folder is made where no sandbox writes: in $XDG_RUNTIME_DIR (the user's own, 0700), else in
// /tmp, never in $TMPDIR, which users point into projects (red team, round 89: a running session
// of that project replaced the folder with a link to ~/.ssh, and its removal emptied ~/.ssh); and
// claudebox looks for no repository above it (host/probe.ts inProject).
import fs from 'node:fs'
import path from 'node:path'
import { removeDir } from '../host/fs.js'
import { ownRuntimeDir } from '../host/probe.js'
import { canonicalRoot, instanceDir, instanceId } from '../state/instance.js'

/** Moves the launcher into a new empty folder; the function returned moves it back and removes the folder and its instance. */
export function enterLoginPlace(claudeboxHome: string): () => void {
  let back: string | undefined
  try {
    back = process.cwd()
  } catch {
    back = undefined // the folder it was started in is gone: nothing to go back to
  }
  const place = fs.realpathSync.native(fs.mkdtempSync(path.join(ownRuntimeDir(process.env['XDG_RUNTIME_DIR']) ?? '/tmp', 'claudebox-login-')))
  process.chdir(place)
  return () => {
    try {
      process.chdir(back ?? '/')
    } catch {
      process.chdir('/')
    }
    const home = fs.existsSync(claudeboxHome) ? fs.realpathSync.native(claudeboxHome) : claudeboxHome
    removeDir(instanceDir(home, instanceId(canonicalRoot(place, undefined))))
    removeDir(place)
  }
}
