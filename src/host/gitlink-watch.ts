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
import { inlineSafe } from '../cli/terminal-safe.js'
import type { GitWatchSpec } from '../types.js'

/** Gitlink folders watched at most: each costs an inotify watch; the rest are the session end's to check. */
const MAX_WATCHED = 256
/** The first look waits this long: a git run while the sandbox starts would slow every launch (the index's writes start it earlier). */
const FIRST_LOOK_MS = 100

/**
 * `forbid` makes a `.git` a name the watch keeps missing; `endFor` ends the session, for a gitlink
 * the watch cannot keep (a path that is not UTF-8, past the bound: red team, round 86, each let a
 * nested repository's config run at the host's git status, 3 of 3). `startedMs`: when the session
 * began; a `.git` changed before is the user's.
 */
export function watchGitlinks(spec: NonNullable<GitWatchSpec['gitlinks']>, { forbid, endFor }: { forbid: (dotGit: string) => void; endFor: (why: string) => void }, startedMs: number): { stop(): void } {
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
          if (stopped) break
          const dotGit = path.join(workTree, name, '.git')
          if (known.has(dotGit) || forbidden.has(dotGit)) continue
          if (changedBefore(dotGit, startedMs)) {
            known.add(dotGit)
            continue
          }
          // A path Node cannot name (not UTF-8), or one past the bound: the watch could not keep its .git missing.
          if (!Buffer.from(name).equals(link) || forbidden.size >= MAX_WATCHED) {
            endFor(`the session registered ${forbidden.size >= MAX_WATCHED ? `more than ${MAX_WATCHED} gitlinks` : 'a gitlink whose path is not UTF-8'} in the index of ${inlineSafe(gitDir)} (your git status at the top enters the repository in such a folder, with its config), and was ended; run git status there only after you looked at them (git ls-files -s | grep ^160000)`)
            break
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
