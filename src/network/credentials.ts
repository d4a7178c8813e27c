// The user's login, held on the host only. Which kind of sign-in this launch uses (an API key or
// token in the environment, or the OAuth login in claudebox's store), the header that carries it,
// the placeholder the sandbox gets instead, and the one refresh of an OAuth login that every
// session of every project shares (refresh tokens are single-use: anthropics/claude-code#76561).
import path from 'node:path'
import { writeFileAtomic } from '../host/atomic-write.js'
import { randomHex, readNoFollow } from '../host/fs.js'
import type { UpstreamProxy } from './upstream-proxy.js'
import { takeLock, withLockSync } from '../host/lock.js'

export type { SignInKind } from '../types.js'
import type { SignInKind } from '../types.js'


/** Where Claude Code refreshes an OAuth login, and as which client (strings of the 2.1.330 binary). */
export const TOKEN_URL = 'https://platform.claude.com/v1/oauth/token'
export const OAUTH_CLIENT_ID = '9d1c250a-e61b-44d9-88ed-5944d1962f5e'
/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_MS = 5 * 60_000
/** A refresh another launcher holds longer than this was abandoned (its launcher died): longer than the refresh's own 30 s timeout. */
const LOCK_STALE_MS = 45_000

export interface OAuthLogin {
  accessToken: string
  refreshToken?: string
  expiresAt?: number
  scopes?: string[]
  subscriptionType?: string
  [key: string]: unknown
}

export interface SignIn {
  kind: SignInKind
  /** An apiKeyHelper command from the shared settings: run on the host for the key. */
  helper?: string
  /** The variable the sandbox gets the placeholder in (none for the store: a placeholder file instead). */
  variable?: 'ANTHROPIC_API_KEY' | 'ANTHROPIC_AUTH_TOKEN' | 'CLAUDE_CODE_OAUTH_TOKEN'
  /** A Console login's API key (primaryApiKey of the shared account file), kept on the host. */
  storedKey?: string
  /** How the credential travels: the x-api-key header or a bearer token. */
  header: 'x-api-key' | 'authorization'
}

/**
 * Claude Code's own precedence: a token in the environment before a key, then the apiKeyHelper of
 * the user's settings, then a long-lived OAuth token, then the stored login (OAuth, or a Console
 * login's API key).
 */
export function signInKind(env: Readonly<Record<string, string | undefined>>, storeFile: string, helper?: string, storedKey?: string): SignIn | undefined {
  if (env['ANTHROPIC_AUTH_TOKEN']) return { kind: 'auth-token', variable: 'ANTHROPIC_AUTH_TOKEN', header: 'authorization' }
  if (env['ANTHROPIC_API_KEY']) return { kind: 'api-key', variable: 'ANTHROPIC_API_KEY', header: 'x-api-key' }
  if (helper) return { kind: 'api-key', variable: 'ANTHROPIC_API_KEY', header: 'x-api-key', helper }
  if (env['CLAUDE_CODE_OAUTH_TOKEN']) return { kind: 'oauth-token', variable: 'CLAUDE_CODE_OAUTH_TOKEN', header: 'authorization' }
  if (readLogin(storeFile) !== undefined) return { kind: 'oauth-store', header: 'authorization' }
  return storedKey ? { kind: 'api-key', variable: 'ANTHROPIC_API_KEY', header: 'x-api-key', storedKey } : undefined
}

/** A fresh random placeholder shaped like the real thing (Claude checks prefixes for some kinds). */
export function placeholderFor(kind: SignInKind): string {
  const random = randomHex(24)
  return kind === 'api-key' ? `sk-ant-api03-claudebox-${random}` : `sk-ant-oat01-claudebox-${random}`
}

export function readLogin(storeFile: string): OAuthLogin | undefined {
  try {
    const data = JSON.parse(readNoFollow(storeFile, 1 << 20) ?? '') as { claudeAiOauth?: OAuthLogin }
    const login = data.claudeAiOauth
    return typeof login?.accessToken === 'string' && login.accessToken !== '' ? login : undefined
  } catch {
    return undefined
  }
}

/**
 * The placeholder credential file the sandbox gets: the real login's shape (plan, scopes) with
 * random tokens and a far-future expiry, so Claude never tries to refresh by itself.
 */
export function placeholderLogin(real: OAuthLogin, accessToken: string): string {
  const { scopes, subscriptionType, rateLimitTier } = real
  return `${JSON.stringify({ claudeAiOauth: { accessToken, refreshToken: `${accessToken}-refresh`, expiresAt: 4102444800000, scopes, subscriptionType, rateLimitTier } })}\n`
}

export interface RefreshResult {
  login?: OAuthLogin
  /** Why there is no usable login, in words for the user. */
  problem?: string
}

/**
 * The current login, refreshed first when it expires within REFRESH_MARGIN_MS, or when the API
 * refused `rejected` (the access token a request carried) and the store still holds it. One
 * launcher refreshes at a time (a lock file next to the store); the others wait and then use what
 * it stored. The store is only ever rewritten whole, by rename.
 */
export async function currentLogin(storeFile: string, rejected: string | undefined, tokenUrl: string, companyProxy?: UpstreamProxy): Promise<RefreshResult> {
  const seen = readLogin(storeFile)
  if (seen === undefined) return { problem: `no login in ${storeFile}; run claudebox --login` }
  // Refused, but the store already holds another token (another session refreshed): use that.
  if (rejected !== undefined && seen.accessToken !== rejected) return { login: seen }
  if (rejected === undefined && (seen.expiresAt === undefined || seen.expiresAt - Date.now() > REFRESH_MARGIN_MS)) return { login: seen }
  const lock = await takeLock(`${storeFile}.refresh-lock`, LOCK_STALE_MS)
  try {
    const now = readLogin(storeFile)
    // Another launcher refreshed meanwhile: its token is the one to use.
    if (now !== undefined && now.accessToken !== seen.accessToken) return { login: now }
    if (now?.refreshToken === undefined) return { problem: `the login in ${storeFile} expired and cannot be refreshed; run claudebox --login` }
    return await refresh(storeFile, now, tokenUrl, companyProxy)
  } finally {
    lock()
  }
}

/**
 * Replaces the store's login under the refresh lock: a refresh in flight would otherwise write the
 * old login, refreshed, over the new one. Waits synchronously, so never from a launcher whose own
 * gateway may be refreshing this store.
 */
export function replaceLogin(storeFile: string, login: OAuthLogin): void {
  withLockSync(`${storeFile}.refresh-lock`, LOCK_STALE_MS, () => writeFileAtomic(storeFile, `${JSON.stringify({ claudeAiOauth: login })}\n`))
}

async function refresh(storeFile: string, login: OAuthLogin, tokenUrl: string, companyProxy: UpstreamProxy | undefined): Promise<RefreshResult> {
  const body = { grant_type: 'refresh_token', refresh_token: login.refreshToken, client_id: OAUTH_CLIENT_ID, scope: (login.scopes ?? []).join(' ') }
  let answer: { status: number; text: string }
  try {
    answer = await postJson(new URL(tokenUrl), JSON.stringify(body), companyProxy)
  } catch (error) {
    return { problem: `could not refresh the login at ${tokenUrl} (${(error as Error).message}); check the network, or run claudebox --login` }
  }
  if (answer.status < 200 || answer.status > 299) return { problem: `the login could not be refreshed (${tokenUrl} answered ${answer.status}); run claudebox --login` }
  let data: { access_token?: string; refresh_token?: string; expires_in?: number; scope?: string }
  try {
    data = JSON.parse(answer.text) as typeof data
  } catch {
    data = {}
  }
  if (typeof data.access_token !== 'string') return { problem: `the refresh answer from ${tokenUrl} holds no token; run claudebox --login` }
  const next: OAuthLogin = {
    ...login,
    accessToken: data.access_token,
    ...(data.refresh_token ? { refreshToken: data.refresh_token } : {}),
    expiresAt: Date.now() + (data.expires_in ?? 3600) * 1000,
    ...(data.scope ? { scopes: data.scope.split(' ') } : {}),
  }
  const file = JSON.parse(readNoFollow(storeFile, 1 << 20) ?? '{}') as Record<string, unknown>
  writeFileAtomic(storeFile, `${JSON.stringify({ ...file, claudeAiOauth: next })}\n`)
  return { login: next }
}

/** The largest answer of the token endpoint read. */
const ANSWER_LIMIT = 1 << 20

/**
 * POSTs `body` to `url` and reads the answer, through the host's company proxy when it applies (a
 * refresh that went directly failed where only the proxy reaches out), within 30 s.
 */
async function postJson(url: URL, body: string, companyProxy: UpstreamProxy | undefined): Promise<{ status: number; text: string }> {
  const { requestTo, tunnelsTo } = await import('./tunnels.js')
  const tunnels = tunnelsTo(url, companyProxy)
  const request = await requestTo(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, signal: AbortSignal.timeout(30_000) }, tunnels)
  try {
    return await new Promise((resolve, reject) => {
      request.on('error', reject)
      request.on('response', response => {
        const chunks: Buffer[] = []
        let size = 0
        response.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > ANSWER_LIMIT) return void request.destroy(new Error('the answer is too large'))
          chunks.push(chunk)
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
        response.on('error', reject)
      })
      request.end(body)
    })
  } finally {
    tunnels?.destroy()
  }
}

/** ANTHROPIC_CUSTOM_HEADERS ("Name: value" lines) as pairs, for the host to add. */
export function customHeaders(value: string | undefined): [string, string][] {
  return (value ?? '')
    .split(/\r?\n/)
    .map(line => line.trim())
    .filter(line => line.includes(':'))
    .map(line => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()] as [string, string])
}

export const storeFileOf = (storeDir: string): string => path.join(storeDir, '.credentials.json')
