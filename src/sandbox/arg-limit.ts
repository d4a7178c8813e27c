// bwrap refuses a command line of more than BWRAP_MAX_ARGS arguments, with a message of its own
// and status 1 before it has made any namespace, which claudebox took for a machine whose user
// namespaces are refused. The plan is checked against it before anything is created or started.
import { launchError } from '../errors.js'

/**
 * bwrap's own limit: bubblewrap.c, parse_args_recurse, `static const uint32_t MAX_ARGS = 9000`
 * (a hardening of 2016), over every argument after bwrap's own name, the sandboxed command's
 * included; one more and bwrap dies with "Exceeded maximum number of arguments 9000". Checked
 * with bubblewrap 0.8.0: 9000 arguments run, 9001 are refused.
 */
export const BWRAP_MAX_ARGS = 9000

/** The binds of the plan that can be many, for the message: the user's and the git guard's (three arguments each). */
export interface ManyBinds {
  /** --bind and --ro-bind paths: the command line, config.json, a profile, .claudebox.json. */
  user: number
  /** The project's git dirs (submodules, worktrees) and what in them git runs or reads, each bound on its own. */
  git: number
}

/** The plan's bwrap arguments; a launch error (125) when bwrap would refuse that many. */
export function bwrapArgv(groups: readonly (readonly string[])[], binds: ManyBinds): string[] {
  const argv = groups.flat()
  if (argv.length <= BWRAP_MAX_ARGS) return argv
  const [user, git] = [binds.user * 3, binds.git * 3]
  const rest = argv.length - user - git
  const parts: [number, string][] = [
    [user, `${user} for ${binds.user} --bind/--ro-bind paths (command line, config.json, a profile or .claudebox.json)`],
    [git, `${git} for the project's git dirs and submodules`],
    [rest, `${rest} for the rest`],
  ]
  const cause = `bwrap accepts at most ${BWRAP_MAX_ARGS} arguments and this sandbox needs ${argv.length}: ${parts.filter(([n]) => n > 0).map(([, text]) => text).join(', ')}`
  const next =
    user >= git && user >= rest
      ? 'bind one directory that holds those paths instead of each, and rerun'
      : git >= rest
        ? 'run claudebox in a checkout with fewer submodules or worktrees (or with --writable-git-config, which drops most of those binds and the protection they give)'
        : 'pass Claude fewer arguments (after --), and rerun'
  throw launchError(`${cause}; ${next}`)
}
