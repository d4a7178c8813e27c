// After the session: the commondir placeholders its launch made (sandbox/git-guard.ts) go again,
// so the repository is as the user left it. Not while another session of the project runs: its
// sandbox binds the same file, and the kernel detaches a mount whose file is removed from another
// mount namespace, which would free the name in there. The last session to end removes them; one
// left behind (a launcher killed, two ending at once) is neutral and taken over by the next launch.
import { removeFile } from './fs.js'
import { isCommondirPlaceholder } from './git-dirs.js'

export function removePlaceholders(placeholders: readonly string[], otherSessionRuns: () => boolean): void {
  if (placeholders.length === 0 || otherSessionRuns()) return
  // Only what still is the placeholder: anything else there is for the git watch's report.
  for (const file of placeholders) if (isCommondirPlaceholder(file)) removeFile(file)
}
