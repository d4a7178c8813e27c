// Plain-data types shared by the probe, the pure planners and the thin I/O shell.
import type { UpstreamProxy } from './network/upstream-proxy.js'
import type { EgressPolicy, NetworkMode } from './network/policy.js'
import type { CgroupFacts, CgroupStep } from './sandbox/limits.js'

/** What a path is on the host, as seen by lstat. */
export type PathKind = 'file' | 'dir' | 'symlink' | 'missing'

/** The git layout of the current directory, from `git rev-parse` (all paths resolved). */
export interface GitFacts {
  /** The working tree's top-level directory. */
  topLevel: string
  /** This worktree's git dir (differs from commonDir in a linked worktree). */
  gitDir: string
  /** The repository's common git dir: the same for every worktree. */
  commonDir: string
}

/** How the `claude` program to run was found and what it needs to be visible inside. */
export interface ClaudeFacts {
  /** The path found on PATH or given by CLAUDEBOX_CLAUDE, as the user would name it. */
  found: string
  /** Fully symlink-resolved path of the program. */
  resolved: string
  /** Directory to make visible read-only: the npm package root, or the program itself. */
  installRoot: string
  /** For a script (`#!`), the resolved interpreter and its installation root. */
  interpreter?: { resolved: string; installRoot: string }
  /** Version read from the installation without running it, when it can be. */
  version?: string
}

export interface HostFacts {
  /** Resolved current directory, or undefined when it was deleted. */
  cwd: string | undefined
  /** The current directory exists but its path is not UTF-8 (shown with U+FFFD): it cannot be named to bwrap, git or Claude. */
  cwdNotText?: string
  home: string
  uid: number
  /** The full host environment; the planner picks the allowlisted part. */
  env: Readonly<Record<string, string | undefined>>
  /** Absolute, resolved `$CLAUDEBOX_HOME`. */
  claudeboxHome: string
  git: GitFacts | undefined
  gitAvailable: boolean
  /** remote.origin.url, read on a first launch only (for the --adopt hint); else undefined. */
  gitRemote?: string
  claude: ClaudeFacts | undefined
  /** Why claude could not be used, when `claude` is undefined. */
  /**
   * manager-in-reach: `claude` is a version manager's shim whose tool, or what it reads, lies where
   * the sandbox writes; leads-out: `claude` lies in (or leads through) such a folder and leads out of it.
   */
  claudeProblem?: 'not-found' | 'not-executable' | 'manager-in-reach' | 'leads-out'
  /** The `claude` found on PATH (or CLAUDEBOX_CLAUDE's), looked at once the folders the sandbox writes are known (claude-install.ts withClaude). */
  claudeFound?: string
  bwrap: string | undefined
  /** lstat kinds (and symlink targets) of the system paths the sandbox may show. */
  systemPaths: Readonly<Record<string, { kind: PathKind; target?: string }>>
  /** Kinds of the optional home files the sandbox may show read-only (~/.gitconfig, ...). */
  homeFiles: Readonly<Record<string, PathKind>>
  /** The instance dir's current state. */
  instance: InstanceState
  /** Entries of the instance dir that the launch binds over, lstat'ed (an agent may plant symlinks). */
  instanceEntries: Readonly<Record<string, PathKind>>
  /** lstat kinds of the shared tier's entries under $CLAUDEBOX_HOME/shared (by name). */
  sharedKinds: Readonly<Record<string, PathKind>>
  /** Node's process.arch, for the seccomp filter. */
  arch: string
  /** Paths named by options (extra binds, the ssh-agent socket): their real path and kind. */
  paths: Readonly<Record<string, { real: string | undefined; kind: PathKind | 'socket'; holdsSessions?: true }>>
  /** Each writable --bind of a directory, by real path: the git protections it gets (probe.ts bindGitFacts). */
  bindGit?: Readonly<Record<string, BindGit>>
  /**
   * Resolved: claudebox homes (this one, ~/.claudebox) and where sessions keep their sockets
   * ($XDG_RUNTIME_DIR, /tmp): no bind may expose them (sandbox/policy.ts bindRefusal).
   */
  guarded?: { state: readonly string[]; sockets: readonly string[] }
  /** The `.git` entry behind `git`, to check it was not forged (see git-trust.ts). */
  gitLayout: GitLayout | undefined
  /** /etc entries that are symlinks, with their resolved targets (resolv.conf into /run...). */
  etcLinks: Readonly<Record<string, string>>
  /**
   * Secret files under /etc (shadow, ssh host keys) that exist, and for root every file in /etc and
   * /opt that others cannot read (host/root-only.ts): masked with /dev/null inside.
   */
  etcSecrets: readonly string[]
  /** For root: the folders in /etc and /opt that others cannot enter, shown empty inside. */
  rootOnlyDirs: readonly string[]
  /**
   * What a later `claudebox` runs on the host, as named and as real paths: the script the shell
   * ran, the package it belongs to (bin/, dist/), node, and the `node` PATH gives its `env node`.
   * None may lie where the sandbox writes (sandbox/policy.ts launcherWithin).
   */
  launcherFiles: readonly string[]
  /** The git data of the checkout claudebox runs from (git dir, common dir, alternates), when it runs from one. */
  launcherGit: readonly string[]
  /**
   * Whether the launcher's controlling terminal is on stdin, stdout or stderr: without it there,
   * /dev/tty inside is /dev/null (a terminal of another on stdio is reached only through that descriptor).
   */
  stdioTerminal: boolean
  /** Symlinks under /run that the system's PATH goes through (NixOS /run/current-system). */
  runLinks: Readonly<Record<string, string>>
  /** Git files that run code outside the sandbox (config, hooks), found in the trusted git dirs. */
  gitProtect: GitProtectFacts
  /** util-linux's prlimit, which sets the process limit inside (limits.ts). */
  prlimit?: string
  /** The cgroups a launch can create a child in, for the limits (none: undefined). */
  cgroups?: CgroupFacts
  /** --network=allow: the node that runs the bridge inside (and its installation), and the bridge script. */
  egress?: { node: string; nodeRoot: string; bridge: string }
}

/**
 * What the host's git would read from the writable project (git-guard-probe.ts): git dirs to pin
 * as mount points, files to show read-only, and what must not appear.
 */
export interface GitProtectFacts {
  /** Git dirs and the directories leading to them, parents first: bound onto themselves so they cannot be renamed or replaced. */
  pinned: readonly string[]
  /** The work trees in the project where the host's git runs (the top, submodules, linked worktrees inside): their host-run files are protected and watched. */
  workTrees: readonly string[]
  /** Each of them with the git dir git takes there (its index lists the gitlinks git status enters). */
  repos: readonly { gitDir: string; workTree: string }[]
  /** The git dirs among them (the rest are folders on the way): their HEAD is checked after the session. */
  gitDirs: readonly string[]
  /** Why the git dirs cannot all be protected (a folder the launcher cannot list, too many, too deep): the launch refuses. */
  refusals: readonly string[]
  /** Existing files and directories that make git run programs or look elsewhere (config, hooks, commondir, .git files). */
  readOnly: readonly string[]
  /** Missing hooks, remotes and branches directories: created empty, then read-only (git reads a remote's file there). */
  emptyDirs: readonly string[]
  /** Missing config.worktree files that git would read (extensions.worktreeConfig): created empty, then read-only. */
  emptyConfigs: readonly string[]
  /**
   * The commondir of each git dir that is not a linked worktree's: made a placeholder (sandbox/
   * git-guard.ts), read-only during the session, removed after it. Also watched (forbidden), in
   * case it goes while the session runs.
   */
  placeholders: readonly string[]
  /** The HEAD at the top of each work tree, where there is none: an empty folder the same way (git takes no folder with one for a repository). */
  headPlaceholders: readonly string[]
  /** Names git would read that do not exist and cannot be pinned: watched during the session. */
  forbidden: readonly string[]
  /** Forbidden names that are present already (a planted commondir): the launch refuses. */
  present: readonly string[]
  /** Working-tree files that run on the host (HOST_RUN_FILES marked read-only, the hooksPath target), with their kinds. */
  workTree: readonly { path: string; kind: PathKind }[]
  /** Directories between the working tree and a read-only entry (.claude of .claude/settings.json), parents first: pinned. */
  workTreePins: readonly string[]
  /**
   * Those entries (and git's config and hooks) that are symlinks, which a bind would follow: not
   * bound, but the link and what it leads to in the project are watched (a user's hooks dir kept
   * in the project, .git/hooks -> ../tools/githooks).
   */
  symlinked: readonly string[]
  /** The symlinks among them (and on their way) in the project, with their text: anything put in their place is moved aside at once. */
  links: readonly { path: string; text: string }[]
}

/** A writable bind's protections, or why it cannot have them (the rest of a sentence after "--bind X"). */
export type BindGit = { protect: GitProtectFacts } | { refusal: string }

export type InstanceState =
  | { kind: 'missing' }
  | { kind: 'ok'; recordedRoot: string }
  | { kind: 'no-root-file' }
  | { kind: 'not-a-directory' }

/** A directory the launch creates before starting bwrap. */
export interface MkdirStep {
  path: string
  mode: number
}

/** A file the launch creates when it does not exist yet (never overwritten). */
export interface FileStep {
  path: string
  content: string | Uint8Array
  mode: number
  /** Replace the file when its content differs (for files only claudebox writes, like the filter). */
  replace?: boolean
  /** The launch refuses when a file already there has other content (a placeholder the sandbox binds read-only). */
  exact?: boolean
}

/** Extra file descriptors bwrap reads or writes, and how a pasted command provides them. */
export interface FdStep {
  fd: number
  /** 'info' is bwrap's --info-fd; 'go' the launcher's go to the sandbox's gate (plan.ts GO_FD); 'ready' the gate's word that the sandbox is built (READY_FD); 'file' is opened read-only from `path`. */
  kind: 'info' | 'go' | 'ready' | 'file'
  path?: string
  /** For 'go': the words that also send the program's stderr into its stdout (plan.ts GO_MERGED). */
  merged?: string
}

export interface LaunchPlan {
  file: string
  argv: readonly string[]
  /** bwrap's whole environment, which it passes to the sandbox: no value ever goes into argv. */
  env: Readonly<Record<string, string>>
  /** Names in `env` whose value is the host's own: --dry-run prints them as "$NAME", not the value. */
  hostEnv: readonly string[]
  /** The same argv cut into logical groups, one per line of --dry-run output. */
  groups: readonly (readonly string[])[]
  mkdirs: readonly MkdirStep[]
  files: readonly FileStep[]
  fds: readonly FdStep[]
  /**
   * The user's --ro-bind and --bind (their real paths): host/bind-fds.ts binds each through a
   * descriptor it opens and checks just before bwrap starts (--ro-bind-fd), as a path the sandbox
   * of a running session can change could be swapped between the probe and bwrap's mount.
   */
  userBinds: readonly string[]
  /** The places a sandbox can write: every bind from inside them is pinned the same way. */
  pinWithin: readonly string[]
  warnings: readonly string[]
  /** Paths that run code outside the sandbox: snapshot before and after the session. */
  watch: readonly string[]
  /** What the launcher watches in git during the session and checks after it (git-watch.ts). */
  gitWatch: GitWatchSpec
  /** What the audit prints: the project, the instance and what is writable. */
  summary: LaunchSummary
  /** --network=allow: the proxy's socket on the host, the key its connections present, and the policy it enforces. */
  egress?: { socket: string; key: string; policy: EgressPolicy; upstream?: UpstreamProxy }
  /** Cgroups created for the limits, with bwrap started inside them. */
  cgroups: readonly CgroupStep[]
  /**
   * The host directory of the launcher's sockets (proxy, API gateway), bound read-only inside: it
   * exists before bwrap starts; the servers start listening once bwrap runs.
   */
  socketsDir?: string
}

export interface GitWatchSpec {
  /** Names that must not appear (a commondir in a git dir): moved aside at once if they do. */
  forbidden: readonly string[]
  /** Of those, the commondir placeholders claudebox made: left where they are, removed after the last session binding them (host/placeholders.ts). */
  placeholders: readonly string[]
  /** The same for the empty HEAD folders at the tops of the work trees. */
  headPlaceholders: readonly string[]
  /** Symlinks that lead to protected files: a replacement of one is moved aside at once. */
  links: readonly { path: string; text: string }[]
  /** Git dirs whose HEAD must stay valid and whose modules/ and worktrees/ must not grow unnoticed. */
  gitDirs: readonly string[]
  /** The working trees searched for new or changed nested `.git` entries after the session: the project's, then each writable bind. */
  workTrees: readonly string[]
  /**
   * The folders on the way to each git dir in the project (a submodule's work tree, the folders of
   * a `.git` file's gitdir: path): write access for others on one would let them swap what git
   * enters there (red team, round 65); it is taken back.
   */
  ways: readonly string[]
  /** The user's home: the git configs there name hooks folders in every repository (nested ones too). */
  home: string
  /** Where planted files are moved, out of the session's reach ($CLAUDEBOX_HOME/quarantine/<id>); in place on another file system. */
  quarantineDir: string
  /**
   * The instance folder: writable inside and there on the host afterwards, so a repository made in
   * it and reached through a symlink in the project runs its config there; searched like the work
   * trees, its own top included.
   */
  instance: string
  /** Where the nested-repository search keeps what it saw in each folder ($CLAUDEBOX_HOME/cache, out of every sandbox's reach); none: every folder is listed. */
  folderCache?: string
  /** Where what each nested repository was at the session's end is kept for the next ($CLAUDEBOX_HOME/nested, out of every sandbox's reach). */
  nestedRecord?: string
  /** The repositories checked out in the project, whose indexes' gitlinks are watched during the session (gitlink-watch.ts), and the submodules' `.git` there at the launch. */
  gitlinks?: { repos: readonly { gitDir: string; workTree: string }[]; known: readonly string[] }
}

export interface LaunchSummary {
  /** The command is Claude Code, given claudebox's session settings (plan.ts sessionSettings). */
  claudeCode: boolean
  projectRoot: string
  instanceId: string
  instanceDir: string
  writable: readonly string[]
  readOnly: readonly string[]
  system: readonly string[]
  network: NetworkMode
  /** --network=allow: the host patterns in force (Claude's, presets', the user's) and the deny list. */
  egress?: { allow: readonly string[]; deny: readonly string[] }
  protections: readonly string[]
  /** Resource limits in force and not (limits.ts). */
  limits: { inForce: readonly string[]; notInForce: readonly string[] }
  /** held: on the host with a placeholder inside (kind), none yet, or inside (the opt-out). */
  credentials: { mechanism: 'store-dir' | 'file-bind'; path: string; held: 'host' | 'none-yet' | 'inside'; kind?: string }
  /** Config-dir entries shared by every project. */
  shared: readonly string[]
  /** Config file and profile applied. */
  applied: readonly string[]
}

/** What the file system says about the `.git` entry that git discovered. */
export type GitLayout =
  | { kind: 'env' } // GIT_DIR / GIT_WORK_TREE set by the user: their explicit choice
  | { kind: 'none' } // no `.git` entry above the current directory
  | {
      kind: 'dir' | 'file'
      /** The directory holding the `.git` entry. */
      worktree: string
      /** For a `.git` file: the resolved `gitdir:` target. */
      target?: string
      /** <target>/gitdir of a linked worktree: the resolved `.git` file it names. */
      backPointer?: string
      /** core.worktree of the target's config, resolved (submodules, separate git dirs). */
      coreWorktree?: string
      /** For a submodule: the layout of the superproject that holds it. */
      superproject?: GitLayout
      /** The superproject's git dir, when `superproject` is set. */
      superGitDir?: string
    }

/** How the sign-in reaches the API (credentials.ts). */
export type SignInKind = 'api-key' | 'auth-token' | 'oauth-token' | 'oauth-store'
