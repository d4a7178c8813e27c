// First run: reuse the login of the user's normal Claude Code, once, by copying (never moving)
// what Claude needs into the shared tier. The user's own ~/.claude is never changed. Only an API
// key (in the account file) is copied: an OAuth login's refresh token works once, so two copies of
// it sign each other out at the first refresh, the user's own Claude Code or every project (red
// team, round 94; anthropics/claude-code#76561). For that one, claudebox gets a login of its own
// (claudebox --login), and the user is told so once.
import { ACCOUNT_KEYS, withSharedAccountFile } from './account-state.js'
import { writeFileAtomic } from '../host/atomic-write.js'
import fs from 'node:fs'
import path from 'node:path'
import { readNoFollow } from '../host/probe.js'
import { JSON_LIMIT } from './guard.js'
import { sharedPaths } from './instance.js'


export interface HostLogin {
  /** Where the credential file was found, if one was: an OAuth login, never copied. */
  credentials?: string
  /** The host's account file with a login in it, if one was found. */
  accountFile?: string
}

/** Whether the login can be copied: not when it is an OAuth login's credential file. */
export const copyable = (login: HostLogin): boolean => login.credentials === undefined

/** Marks that the question was asked (answered or declined): it is asked once. */
export const DECISION_FILE = 'login-import'

/** The user's normal Claude Code login, when claudebox has none yet and has not asked before. */
export function findHostLogin(claudeboxHome: string, home: string, env: Readonly<Record<string, string | undefined>>): HostLogin | undefined {
  const shared = sharedPaths(claudeboxHome)
  if (fs.existsSync(path.join(shared.secureStorage, '.credentials.json')) || fs.existsSync(path.join(shared.dir, DECISION_FILE))) return undefined
  const configDir = env['CLAUDE_CONFIG_DIR'] || path.join(home, '.claude')
  const login: HostLogin = {}
  const credentials = path.join(configDir, '.credentials.json')
  if (fs.existsSync(credentials)) login.credentials = credentials
  for (const candidate of [path.join(configDir, '.claude.json'), path.join(home, '.claude.json')]) {
    const account = parseJson(readNoFollow(candidate, JSON_LIMIT))
    if (account && (account['oauthAccount'] !== undefined || account['primaryApiKey'] !== undefined)) {
      login.accountFile = candidate
      break
    }
  }
  return login.credentials || login.accountFile ? login : undefined
}

/**
 * Copies a copyable login's account keys into the shared tier; records the decision either way
 * (`accepted` false, or a login that cannot be copied: nothing copied, and not offered again).
 */
export function importLogin(claudeboxHome: string, login: HostLogin, accepted: boolean): void {
  const shared = sharedPaths(claudeboxHome)
  fs.mkdirSync(shared.secureStorage, { recursive: true, mode: 0o700 })
  if (accepted && copyable(login)) {
    const account = parseJson(readNoFollow(login.accountFile ?? '', JSON_LIMIT))
    if (account) {
      withSharedAccountFile(shared.claudeJson, found => {
        const current = typeof found === 'object' ? { ...found } : {}
        for (const key of ACCOUNT_KEYS) if (account[key] !== undefined) current[key] = account[key]
        replace(shared.claudeJson, `${JSON.stringify(current, null, 2)}\n`)
      })
    }
  }
  const decision = !copyable(login) ? 'not copied (an OAuth login)' : accepted ? 'imported' : 'declined'
  replace(path.join(shared.dir, DECISION_FILE), `${decision} ${new Date().toISOString()}\n`)
}

function parseJson(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined
  try {
    const value = JSON.parse(text) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}


function replace(file: string, content: string): void {
  writeFileAtomic(file, Buffer.from(content))
}
