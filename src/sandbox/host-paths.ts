// What the plan looks at on the host, by name: the probe (host/probe.ts) reads exactly these and
// hands the plan what it found (HostFacts). Pure data; the one place both sides take them from.
import { launchError, type ClaudeboxError } from '../errors.js'

/** System directories shown read-only when present; symlinks (merged /usr) are recreated as symlinks. */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/nix/store'] as const

/**
 * /etc entries a working system needs whose targets may lie outside the visible dirs (resolv.conf
 * is often a symlink into /run: systemd-resolved, NetworkManager, resolvconf). Only the resolved
 * target file is shown, never the rest of /run (no /run/user, no D-Bus).
 */
export const ETC_ENTRIES = ['resolv.conf', 'hosts', 'nsswitch.conf', 'localtime', 'passwd', 'group', 'ssl/certs/ca-certificates.crt', 'ssl/cert.pem', 'ca-certificates.crt'] as const

/** NixOS puts the system's programs behind these symlinks (into /nix/store, which is visible). */
export const RUN_LINKS = ['/run/current-system'] as const

/** Host files under $HOME that are shown read-only when present, so git behaves as outside. */
export const HOME_FILES_RO = ['.gitconfig', '.config/git/config', '.config/git/ignore', '.config/git/attributes'] as const

/**
 * A path with a newline is refused, never misread: git rev-parse prints its paths one a line (it
 * has no -z), and the project-root file and --list are line-based too.
 */
export function newlineRefusal(dir: string): ClaudeboxError {
  return launchError(`the project path ${JSON.stringify(dir)} (or its git dir) contains a newline, which claudebox does not support; rename the directory and rerun`)
}
