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
  'USE_BUILTIN_RIPGREP', 'CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR',
])

/** Passed through by prefix: locale categories and Claude/Anthropic settings. */
export const PASS_PREFIXES: readonly string[] = ['LC_', 'ANTHROPIC_', 'CLAUDE_CODE_']

/** Never passed through, even when a prefix matches: claudebox sets these itself. */
const OWNED = new Set(['CLAUDE_CONFIG_DIR', 'CLAUDE_SECURESTORAGE_CONFIG_DIR', 'HOME', 'IS_SANDBOX', 'DISABLE_AUTOUPDATER', 'CLAUDEBOX'])

export function isPassedThrough(name: string): boolean {
  if (OWNED.has(name)) return false
  return PASS_EXACT.has(name) || PASS_PREFIXES.some(prefix => name.startsWith(prefix))
}
