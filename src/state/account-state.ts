// .claude.json is per project: each instance has its own (its `projects` map, MCP servers, tips and
// counters stay there). Only the account keys below travel, by allowlist, between the account file
// in the shared tier and each instance: into the instance before a launch, and back after it.
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { withLockSync } from '../host/lock.js'
import { lstatKind, readNoFollow } from '../host/probe.js'
import { JSON_LIMIT } from './guard.js'
import { OWN_DIR } from './registry.js'
import { parseJson } from './tier-files.js'

/** The account keys of a Claude Code login: imported from the user's own file into the shared one. */
export const ACCOUNT_KEYS = ['oauthAccount', 'userID', 'hasCompletedOnboarding', 'lastOnboardingVersion', 'theme', 'primaryApiKey', 'customApiKeyResponses'] as const

/**
 * Never into a sandbox while the login stays on the host: a Console login's API key itself, and the
 * approvals of API keys, which name the user's real keys by their last 20 characters. (The gateway
 * serves the key; approvePlaceholderKey approves the session's placeholder.)
 */
export const SECRET_ACCOUNT_KEYS = ['primaryApiKey', 'customApiKeyResponses'] as const

/**
 * Carried back from a session into the shared file when the session changed them (a sign-in or a
 * theme chosen inside). Never the API key or the approvals of API keys: an agent that wrote its own
 * key there would otherwise route every other project's conversations to its account.
 */
export const ACCOUNT_KEYS_BACK = ['oauthAccount', 'userID', 'hasCompletedOnboarding', 'lastOnboardingVersion', 'theme'] as const

/**
 * The account's identity, carried back only when the session's sign-in is the one every project
 * uses (`claudebox --login`, or the opt-out): otherwise the agent of one project could show every
 * other project another account's name and organisation.
 */
const IDENTITY_KEYS = ['oauthAccount', 'userID']

/** The largest value carried back, as JSON text. */
const VALUE_LIMIT = 64 * 1024

/**
 * The shape of each setting carried back from any project: what Claude writes there, nothing else
 * (red team, round 35: any JSON value up to 64 KiB crossed to every other project, 192 KB of data
 * from a --network=none project to an open one). The identity keys come back only from a sign-in.
 */
const SETTING_SHAPES: Record<string, (value: unknown) => boolean> = {
  hasCompletedOnboarding: value => typeof value === 'boolean',
  lastOnboardingVersion: value => typeof value === 'string' && /^[0-9][0-9A-Za-z.+-]{0,31}$/.test(value),
  theme: value => typeof value === 'string' && /^[a-z][a-z0-9-]{0,31}$/.test(value),
}
const carriedShape = (key: string, value: unknown): boolean => SETTING_SHAPES[key]?.(value) ?? (JSON.stringify(value) ?? '').length <= VALUE_LIMIT

/** What was carried in at the last launch: the comparison point for carrying back. */
const CARRIED_FILE = `${OWN_DIR}/account-in.json`

type Json = Record<string, unknown>

/**
 * The file's object; 'empty' when it is missing or blank (a mount point of older versions);
 * undefined when it cannot be used (not JSON, too large, not a regular file): then it is left alone.
 */
function readObject(file: string): Json | undefined | 'empty' {
  const text = readNoFollow(file, JSON_LIMIT)
  if (text === undefined) return lstatKind(file) === 'missing' ? 'empty' : undefined
  if (text.trim() === '') return 'empty'
  const value = parseJson(text)
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/**
 * Before a launch: the account keys of the shared file into the instance's .claude.json. With the
 * login on the host (`secretless`), the secret ones are not carried, and removed where an earlier
 * version or the opt-out left them.
 */
export function carryAccountIn(sharedFile: string, instance: string, secretless = true): void {
  const shared = readObject(sharedFile)
  const file = path.join(instance, '.claude.json')
  const current = readObject(file)
  // A corrupt instance file was already dealt with by the guard; never rewrite one it left.
  if (current === undefined) return
  const next: Json = current === 'empty' ? {} : { ...current }
  const carried: Json = {}
  const secret = (key: string): boolean => secretless && (SECRET_ACCOUNT_KEYS as readonly string[]).includes(key)
  const removed = secretless && current !== 'empty' && SECRET_ACCOUNT_KEYS.some(key => Object.hasOwn(current, key))
  for (const key of SECRET_ACCOUNT_KEYS) if (secretless) delete next[key]
  for (const key of ACCOUNT_KEYS) {
    if (secret(key)) continue
    if (typeof shared !== 'object' || !Object.hasOwn(shared, key)) continue
    carried[key] = shared[key]
    if (!same(next[key], shared[key])) Object.defineProperty(next, key, { value: shared[key], enumerable: true, writable: true, configurable: true })
  }
  if (current === 'empty' || removed || Object.keys(carried).some(key => !same(current[key], carried[key]))) {
    writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`)
  }
  const record = JSON.stringify(carried)
  // The usual launch carries what the last one did: its record is not written again.
  if (readNoFollow(path.join(instance, CARRIED_FILE), JSON_LIMIT) !== record) writeFileAtomic(path.join(instance, CARRIED_FILE), `${record}\n`)
}

/** After a session: the account keys the session changed, back into the shared file. */
export function carryAccountOut(sharedFile: string, instance: string, identity = true): string[] {
  const current = readObject(path.join(instance, '.claude.json'))
  const carried = readObject(path.join(instance, CARRIED_FILE))
  if (typeof current !== 'object') return []
  const before: Json = typeof carried === 'object' ? carried : {}
  // A value is small (an account, a theme): a session cannot grow every project's file through one.
  const keys = ACCOUNT_KEYS_BACK.filter(key => identity || !IDENTITY_KEYS.includes(key))
  const changed = keys.filter(key => Object.hasOwn(current, key) && !same(current[key], before[key]) && carriedShape(key, current[key]))
  if (changed.length === 0) return []
  return withSharedAccountFile(sharedFile, shared => {
    if (shared === undefined) return []
    const next: Json = shared === 'empty' ? {} : { ...shared }
    for (const key of changed) next[key] = current[key]
    writeFileAtomic(sharedFile, `${JSON.stringify(next, null, 2)}\n`)
    return changed
  })
}

/** Held longer than this, the lock was left by a launcher that died (a change takes milliseconds). */
const ACCOUNT_LOCK_STALE_MS = 10_000

/**
 * Reads and rewrites the shared account file under its lock: sessions of several projects that
 * end together each carry their keys back, and none writes over another's change.
 */
export function withSharedAccountFile<T>(sharedFile: string, change: (shared: Json | undefined | 'empty') => T): T {
  return withLockSync(`${sharedFile}.lock`, ACCOUNT_LOCK_STALE_MS, () => change(readObject(sharedFile)))
}

/** Claude remembers which API key the user allowed by its last 20 characters. */
const keyTail = (key: string): string => key.slice(-20)
/** Records that the user allowed this project's placeholders (the previous one's tail, to replace it). */
const APPROVED_FILE = `${OWN_DIR}/api-key-approved`

/**
 * An API key from the environment is asked about once ("use this API key?") and remembered by its
 * tail. The sandbox sees a new placeholder each session: it is pre-approved when the user approved
 * the real key (on the host, before claudebox) or a placeholder in an earlier session of this project.
 */
export function approvePlaceholderKey(sharedFile: string, instance: string, realKey: string, placeholder: string, chosen = false): void {
  const file = path.join(instance, '.claude.json')
  const current = readObject(file)
  if (typeof current !== 'object') return
  const approvedIn = (data: Json | undefined | 'empty'): string[] => {
    const responses = typeof data === 'object' ? (data['customApiKeyResponses'] as { approved?: unknown } | undefined) : undefined
    return Array.isArray(responses?.approved) ? responses.approved.filter((k): k is string => typeof k === 'string') : []
  }
  const previous = readNoFollow(path.join(instance, APPROVED_FILE))
  const approved = approvedIn(current)
  // A Console login's own key (`chosen`) needs no approval: signing in was the choice.
  const allowed = chosen || [...approvedIn(readObject(sharedFile)), ...approved].includes(keyTail(realKey)) || previous !== undefined
  if (!allowed) return
  const responses = (current['customApiKeyResponses'] as Json | undefined) ?? {}
  const next = { ...current, customApiKeyResponses: { ...responses, approved: [...approved.filter(k => k !== previous), keyTail(placeholder)] } }
  writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`)
  writeFileAtomic(path.join(instance, APPROVED_FILE), `${keyTail(placeholder)}\n`)
}

/** After a session: the user approved this session's placeholder inside, so later ones are too. */
export function rememberPlaceholderApproval(instance: string, placeholder: string): void {
  const current = readObject(path.join(instance, '.claude.json'))
  const responses = typeof current === 'object' ? (current['customApiKeyResponses'] as { approved?: unknown } | undefined) : undefined
  if (Array.isArray(responses?.approved) && responses.approved.includes(keyTail(placeholder))) writeFileAtomic(path.join(instance, APPROVED_FILE), `${keyTail(placeholder)}\n`)
}
