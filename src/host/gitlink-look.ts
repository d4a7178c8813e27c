// The gitlink watch's look at an index during a session (gitlink-watch.ts): the same git runs as at
// the session's end (index-git.ts), without blocking the launcher's loop, and without the cache.
import { execFile, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { hostTempDir, lstatKind, removeDir } from './fs.js'
import { commonDirOf } from './git-dirs.js'
import { GIT } from './system-programs.js'
import { configBytes, formatsOfAsync } from './index-format.js'
import { anyEndOfEntries, bareGitEnv, indexFilesRegular, layoutsAgree, LS_FILES, RUN_MS, stagedEntries, THREADED, uniqueBuffers } from './index-git.js'

/**
 * The gitlinks `gitDir`'s index lists now, as git reads it (the same runs as at the session's end,
 * without blocking the launcher's loop), and the paths git would refuse: during the session
 * (gitlink-watch.ts). None when git cannot read it (the end's check says so); `irregular` when the
 * index or a shared part beside it is no regular file, which git never makes (red team, round 119:
 * a folder named sharedindex.zzz had every look skipped, and the host's git status entered a
 * gitlink staged meanwhile), or keeps records of where its entries lie that do not match them
 * (index-layout.ts: a threaded git reads it otherwise, round 121).
 */
export async function gitlinksNow(gitDir: string): Promise<{ gitlinks: Buffer[]; bad: string[]; irregular?: true }> {
  if (lstatKind(path.join(gitDir, 'index')) === 'missing') return { gitlinks: [], bad: [] }
  if (!indexFilesRegular(gitDir)) return { gitlinks: [], bad: [], irregular: true }
  const empty = await fs.promises.mkdtemp(path.join(hostTempDir(), 'claudebox-index-'))
  const look: InFlight = { dir: empty }
  lookAtExit(look)
  try {
    const formats = await formatsOfAsync(configBytes(path.join(commonDirOf(gitDir) ?? gitDir, 'config')), empty)
    const all: (string[] & { gitlinks: Buffer[] })[] = []
    let unread = 0
    for (const sha256 of formats) {
      const env = bareGitEnv(gitDir, sha256, fs.mkdtempSync(path.join(empty, 'g')))
      let refused = false
      const run = (threads: string): Promise<Buffer | undefined> =>
        new Promise(resolve => {
          look.child = execFile(GIT(), LS_FILES(threads), { env, cwd: env['GIT_DIR'], encoding: 'buffer', timeout: RUN_MS, maxBuffer: 256 << 20 }, (error, stdout) => {
            refused ||= typeof error?.code === 'number' // git ran and could not read it (not: not started, killed, too much)
            resolve(error ? undefined : stdout)
          })
        })
      const out = await run('1')
      if (out === undefined && refused) unread++
      if (out === undefined) continue
      all.push(stagedEntries(out))
      // Read one way with threads and another without: the host's git status may enter a gitlink this look does not see.
      if (!layoutsAgree(gitDir, sha256) || (anyEndOfEntries(gitDir, sha256) && !(await readsSameThreaded(run, out)))) return { gitlinks: [], bad: [], irregular: true }
    }
    // An index git reads in none of the formats, here, may still be read by the host's git elsewhere: ended for, as one git cannot read is at the end.
    if (all.length === 0 && unread === formats.length) return { gitlinks: [], bad: [], irregular: true }
    return { gitlinks: uniqueBuffers(all.flatMap(entries => entries.gitlinks)), bad: [...new Set(all.flat())] }
  } finally {
    inFlight.delete(look)
    removeDir(empty)
  }
}

/** Whether each threaded reading (THREADED), one after the other, gives `plain`. */
async function readsSameThreaded(run: (threads: string) => Promise<Buffer | undefined>, plain: Buffer): Promise<boolean> {
  for (const threads of THREADED) if ((await run(threads))?.equals(plain) !== true) return false
  return true
}

/** A look of the gitlink watch under way: its git dir and its git. */
interface InFlight {
  dir: string
  child?: ChildProcess
}
const inFlight = new Set<InFlight>()
let exitHooked = false

/**
 * The launcher exits as soon as the session's end is checked (bin/claudebox.js), cutting a look
 * that is under way short of its `finally`: its git is ended and its git dir removed then (220 of
 * them were left in /tmp by the test suite).
 */
function lookAtExit(look: InFlight): void {
  if (!exitHooked) process.once('exit', () => inFlight.forEach(left => (left.child?.kill(), removeDir(left.dir))))
  exitHooked = true
  inFlight.add(look)
}
