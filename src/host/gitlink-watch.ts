// During the session: a gitlink the session puts in the top's index makes the host's `git status`
// at the top enter that folder's `.git` and run its config (red team, round 84: 3 of 3, and nothing
// was reported once the session took both out again before its end). At each write of that index
// its gitlinks are listed, by git as git reads the index (index-entries.ts), and the `.git` of each
// that was no submodule at the launch and is not older than the session becomes a name the git
// watch keeps missing: moved aside now and whenever it appears, reported, counted. That leaves the
// watch's window of milliseconds. A nested repository the user had is never moved.
import fs from 'node:fs'
import path from 'node:path'
import { gitlinksNow } from './index-entries.js'
import type { GitWatchSpec } from '../types.js'

/** Gitlink folders watched at most: each costs an inotify watch; the rest are the session end's to check. */
const MAX_WATCHED = 256
/** The first look waits this long: a git run while the sandbox starts would slow every launch (the index's writes start it earlier). */
const FIRST_LOOK_MS = 100

/** `startedMs`: when the session began; a `.git` changed before is the user's. */
export function watchGitlinks(spec: NonNullable<GitWatchSpec['gitlinks']>, forbid: (dotGit: string) => void, startedMs: number): { stop(): void } {
  const { gitDir, workTree } = spec
  const known = new Set(spec.known)
  const forbidden = new Set<string>()
  let [running, again, stopped] = [false, false, false]
  const scan = async (): Promise<void> => {
    if (running) return void (again = true)
    running = true
    try {
      do {
        again = false
        for (const link of await gitlinksNow(gitDir).catch(() => [])) {
          const name = link.toString('utf8')
          // Not UTF-8: the end's check, which keeps paths as bytes, looks at it.
          if (stopped || name.includes('\uFFFD') || forbidden.size >= MAX_WATCHED) continue
          const dotGit = path.join(workTree, name, '.git')
          if (known.has(dotGit) || forbidden.has(dotGit)) continue
          if (changedBefore(dotGit, startedMs)) {
            known.add(dotGit)
            continue
          }
          forbidden.add(dotGit)
          forbid(dotGit)
        }
      } while (again && !stopped)
    } catch {
      // a look that failed (no temp folder, the name gone): the session's end checks the index
    } finally {
      running = false
    }
  }
  let watcher: fs.FSWatcher | undefined
  try {
    watcher = fs.watch(gitDir, { persistent: false }, (_event, name) => {
      if (name === 'index' && !stopped) void scan()
    })
    watcher.on('error', () => watcher?.close())
  } catch {
    // gone or not watchable: the session's end checks the index
  }
  // Gitlinks the index held before (an earlier session's), whose .git may appear later.
  const first = setTimeout(() => void scan(), FIRST_LOOK_MS).unref()
  return {
    stop(): void {
      stopped = true
      clearTimeout(first)
      watcher?.close()
    },
  }
}

/** Whether `p` is there, unchanged since before `sinceMs` (its change time: a rename into place sets it). */
function changedBefore(p: string, sinceMs: number): boolean {
  const st = fs.lstatSync(p, { throwIfNoEntry: false })
  return st !== undefined && st.ctimeMs < sinceMs
}
