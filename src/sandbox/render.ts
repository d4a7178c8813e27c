// Renders a launch plan as a POSIX shell script: what --dry-run prints.
import { sha256Hex } from '../sha256.js'
import path from 'node:path'
import { shq } from './quote.js'
import type { LaunchPlan, LaunchSummary } from '../types.js'

export function renderDryRun(plan: LaunchPlan, audit: readonly string[] = []): string {
  const lines: string[] = [...audit.map(line => `# ${line}`)]
  for (const dir of plan.mkdirs) lines.push(`mkdir -p -m ${dir.mode.toString(8)} ${shq(dir.path)}`)
  for (const file of plan.files) {
    if (typeof file.content !== 'string') {
      // Programs (the seccomp filter, the Landlock helper) are files --dry-run wrote, named by
      // their digest: the script checks them instead of carrying kilobytes of escapes.
      const digest = sha256Hex(file.content)
      lines.push(`# ${file.path}: ${file.content.length} bytes, sha256 ${digest} (written by claudebox --dry-run)`)
      lines.push(`[ "$(sha256sum < ${shq(file.path)})" = '${digest}  -' ] || { echo ${shq(`${file.path} is missing or changed; run claudebox --dry-run again`)} >&2; exit 1; }`)
      continue
    }
    const dir = shq(path.dirname(file.path))
    lines.push(`[ -e ${shq(file.path)} ] || (umask 077 && mkdir -p ${dir} && printf '%s' ${shq(file.content)} > ${shq(file.path)})`)
  }
  // Pasted, the shell joins the cgroups of the limits and bwrap starts in them.
  for (const step of plan.cgroups) {
    const dir = `${shq(step.parent)}/claudebox-$$`
    const writes = step.files.map(([name, value]) => `printf '%s' ${shq(value)} > ${dir}/${name}`)
    // A limit that cannot be set stops the script, as it stops a launch: never a sandbox without it.
    const fail = `{ echo ${shq(`claudebox: cannot set the limits in ${step.parent}/claudebox-<pid>`)} >&2; exit 125; }`
    lines.push(`{ ${[`mkdir ${dir}`, ...writes, `echo $$ > ${dir}/cgroup.procs`].join(' && ')}; } || ${fail}`)
  }
  // A pasted script has nothing to wait for: it gives the sandbox's gate its go at once.
  const redirects = plan.fds.map(step => (step.kind === 'info' || step.kind === 'ready' ? `${step.fd}>/dev/null` : step.kind === 'go' ? `${step.fd}<<'CLAUDEBOX_GO'` : `${step.fd}<${shq(step.path ?? '')}`))
  const groups = plan.groups.map(group => group.map(shq).join(' '))
  const last = groups.length - 1
  if (last >= 0) groups[last] = [groups[last], ...redirects].join(' ')
  // `env -i` gives bwrap exactly the plan's environment: the host's values by name (never printed:
  // any may be a secret), claudebox's own literally.
  const assignments = Object.entries(plan.env).map(([name, value]) => (plan.hostEnv.includes(name) ? `${name}="$${name}"` : `${name}=${shq(value)}`))
  lines.push(['env -i', ...assignments, shq(plan.file), ...groups].join(' \\\n  '))
  if (plan.fds.some(step => step.kind === 'go')) lines.push('go', 'CLAUDEBOX_GO')
  if (plan.cgroups.length > 0) {
    // The shell leaves the cgroups and removes them, as the launcher does, keeping bwrap's status.
    lines.push('status=$?')
    for (const step of plan.cgroups) lines.push(`echo $$ > ${shq(step.parent)}/cgroup.procs && rmdir ${shq(step.parent)}/claudebox-$$`)
    lines.push('exit $status')
  }
  return lines.join('\n') + '\n'
}

/** The short human-readable audit shared by --dry-run (as comments) and --check. */
export function auditLines(plan: LaunchPlan): string[] {
  const s = plan.summary
  return [
    ...s.applied.map(a => `applied: ${a}`),
    `project root: ${s.projectRoot}`,
    `instance: ${s.instanceId} (${s.instanceDir})`,
    `writable inside: ${s.writable.join(', ')}`,
    `read-only inside: ${[...s.system, ...s.readOnly].join(', ')}`,
    `home inside: empty except the paths above; ~/.claude points to the instance`,
    `shared by every project: the sign-in (${s.credentials.held === 'inside' ? 'inside the sandbox: secretless is off' : 'kept on the host'}), the account keys of .claude.json; copied per project: ${s.shared.join(', ')}`,
    ...networkLines(s),
    ...s.protections.map(p => `protection: ${p}`),
    ...[...s.limits.inForce, ...s.limits.notInForce].map(l => `limit: ${l}`),
  ]
}

/** What the first launch in a project says: three lines, the details being --check's. */
export function shortAudit(plan: LaunchPlan): string[] {
  const s = plan.summary
  const [project, ...rest] = s.writable
  // The instance and the session's credential store are "this project's Claude state"; others are the user's binds.
  const home = path.dirname(path.dirname(s.instanceDir))
  const binds = rest.filter(p => !p.startsWith(`${home}/`))
  const network =
    s.network === 'open'
      ? "open: the host's network (the agent can reach any host and the host's loopback)"
      : s.network === 'none'
        ? 'none: loopback only'
        : `allow: only ${briefList(s.egress?.allow ?? [])}, through claudebox's proxy`
  return [
    `writable: ${project ?? ''} and this project's Claude state${binds.length > 0 ? `, ${binds.join(', ')}` : ''}; the rest of your home is hidden`,
    `network: ${network}`,
    'details: claudebox --check',
  ]
}

const briefList = (items: readonly string[]): string => (items.length <= 3 ? items.join(', ') : `${items.slice(0, 3).join(', ')} and ${items.length - 3} more`)

/** The network mode, and for allow the lists in force. */
export function networkLines(s: LaunchSummary): string[] {
  if (s.network === 'open') return ["network: open (the host's network, shared) -- warning: the agent can reach any host and the services on the host's loopback"]
  if (s.network === 'none') return ['network: none (loopback only)']
  const lines = [`network: allow (no network inside; claudebox's proxy admits only the allowlist and logs what it refuses; it runs only while claudebox does, so this command pasted alone has no way out)`]
  lines.push(`network allow: ${s.egress?.allow.join(', ') ?? ''}`)
  if (s.egress?.deny.length) lines.push(`network deny: ${s.egress.deny.join(', ')}`)
  const wildcards = s.egress?.allow.filter(pattern => pattern.startsWith('*')) ?? []
  if (wildcards.length > 0) {
    lines.push(`network note: ${wildcards.join(', ')} let the sandbox choose names that this host resolves, and DNS queries can carry data out; list exact names to avoid it`)
  }
  return lines
}

