// Which host environment variables reach the sandbox. Everything else is cleared (--clearenv):
// host secrets (cloud keys, tokens) and host sockets (ssh-agent, D-Bus, X11, Wayland) stay out.

/** Passed through when set on the host. */
export const PASS_EXACT: ReadonlySet<string> = new Set([
  // terminal and locale: the same terminal behaviour as outside
  'TERM', 'COLORTERM', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION', 'COLORFGBG', 'NO_COLOR', 'FORCE_COLOR',
  'LANG', 'LANGUAGE', 'TZ', 'COLUMNS', 'LINES',
  // identity and tools
  'PATH', 'USER', 'LOGNAME', 'SHELL', 'EDITOR', 'VISUAL', 'PAGER',
  // network: proxies and extra CA certificates, in both spellings tools read
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'all_proxy',
  'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR',
  // Claude Code settings that are not under the CLAUDE_CODE_ prefix (strings of the 2.1.330 binary)
  'DISABLE_TELEMETRY', 'DISABLE_ERROR_REPORTING', 'DISABLE_BUG_COMMAND', 'DISABLE_COST_WARNINGS',
  'DISABLE_NON_ESSENTIAL_MODEL_CALLS', 'DISABLE_PROMPT_CACHING', 'DISABLE_INTERLEAVED_THINKING',
  'MAX_THINKING_TOKENS', 'MAX_MCP_OUTPUT_TOKENS', 'MCP_TIMEOUT', 'MCP_TOOL_TIMEOUT',
  'BASH_DEFAULT_TIMEOUT_MS', 'BASH_MAX_TIMEOUT_MS', 'BASH_MAX_OUTPUT_LENGTH',
  'USE_BUILTIN_RIPGREP', 'CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR', 'DO_NOT_TRACK', 'DISABLE_GROWTHBOOK', 'DISABLE_UPDATES',
])

/** Passed through by prefix: locale categories and Claude/Anthropic settings. */
export const PASS_PREFIXES: readonly string[] = ['LC_', 'ANTHROPIC_', 'CLAUDE_CODE_']

/** Never passed through, even when a prefix matches: claudebox sets these itself. */
const OWNED = new Set(['CLAUDE_CONFIG_DIR', 'CLAUDE_SECURESTORAGE_CONFIG_DIR', 'HOME', 'IS_SANDBOX', 'DISABLE_AUTOUPDATER', 'CLAUDEBOX'])

/**
 * Claude Code variables that name host paths, commands or file descriptors, or belong to a
 * running Claude session (set when claudebox is started from inside one): passing them would make
 * the sandboxed Claude run host programs or talk to the outer session (strings of 2.1.330).
 */
const DENIED = new Set([
  'CLAUDE_CODE_TMPDIR', 'CLAUDE_CODE_SHELL_PREFIX', 'CLAUDE_CODE_PROCESS_WRAPPER', 'CLAUDE_CODE_HOST_CREDS_FILE',
  'CLAUDE_CODE_API_KEY_FILE_DESCRIPTOR', 'CLAUDE_CODE_GIT_BASH_PATH', 'CLAUDE_CODE_SHELL', 'CLAUDE_CODE_CLIENT_CERT', 'CLAUDE_CODE_CLIENT_KEY',
  'CLAUDE_CODE_SESSION_ID', 'CLAUDE_CODE_CHILD_SESSION', 'CLAUDE_CODE_CHILD_NOTES_DIR', 'CLAUDE_CODE_MESSAGING_SOCKET',
  'CLAUDE_CODE_MESSAGING_TOKEN', 'CLAUDE_CODE_EXECPATH', 'CLAUDE_CODE_ENTRYPOINT', 'CLAUDE_CODE_SESSION_ATTENDED',
  'CLAUDE_CODE_SUBPROCESS_ENV_SCRUB', 'ANTHROPIC_UNIX_SOCKET', 'ANTHROPIC_CONFIG_DIR',
])

export function isPassedThrough(name: string): boolean {
  if (OWNED.has(name) || DENIED.has(name) || looksSecret(name)) return false
  return PASS_EXACT.has(name) || PASS_PREFIXES.some(prefix => name.startsWith(prefix))
}

/** The variables that hold a secret on the host: with the gateway they never reach the sandbox as they are. */
export const SECRET_VARIABLES = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_CUSTOM_HEADERS'] as const

/** Words that name a secret, as a whole part of a variable's name between underscores (TOKENS is not one: MAX_OUTPUT_TOKENS). */
const SECRET_WORDS = new Set(['TOKEN', 'KEY', 'KEYS', 'APIKEY', 'AUTHTOKEN', 'SECRET', 'SECRETS', 'PASSWORD', 'PASSWD', 'PASSPHRASE', 'CREDENTIAL', 'CREDENTIALS', 'COOKIE', 'BEARER', 'PRIVATE'])
/** The same inside a part (REFRESHTOKEN, CLIENTSECRET): a part ending in TOKEN, KEY or SECRET, or holding PASSW. */
const SECRET_PART = /(TOKEN|KEY|SECRET)$|PASSW/

/**
 * A variable under the passed prefixes whose name says it holds a secret, other than the four the
 * gateway keeps on the host (SECRET_VARIABLES): kept out, unless the user passes it with --env
 * (red team, round 140: CLAUDE_CODE_OAUTH_REFRESH_TOKEN, CLAUDE_CODE_CLIENT_KEY_PASSPHRASE,
 * ANTHROPIC_IDENTITY_TOKEN and more entered as they were; the binary reads about twenty such).
 */
export function looksSecret(name: string): boolean {
  return !(SECRET_VARIABLES as readonly string[]).includes(name) && PASS_PREFIXES.some(p => name.startsWith(p)) && name.split('_').some(word => SECRET_WORDS.has(word) || SECRET_PART.test(word))
}

/** The URLs under the passed prefixes whose user name and password stay on the host (ANTHROPIC_BASE_URL, ANTHROPIC_BEDROCK_BASE_URL, ...). */
export const isUrlVariable = (name: string): boolean => PASS_PREFIXES.some(p => name.startsWith(p)) && /_URL$/.test(name)

/** The proxy variables: with --network=none nothing inside can use them, and their URL may hold a password. */
export const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy'] as const

/** A URL without its user name and password (`https://user:pw@host/` as `https://host/`); as it was when it has none or is no URL. */
export function withoutUserinfo(value: string): string {
  try {
    const url = new URL(value)
    if (url.username === '' && url.password === '') return value
    url.username = ''
    url.password = ''
    return url.toString()
  } catch {
    return value
  }
}
