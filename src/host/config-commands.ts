// The files a git config value may run, read from its words as a shell would roughly read them: the
// words that name a path, from every folder the command may be in when it names them (the work
// tree's top, where git runs it, and each folder a `cd`, `-C` or `--chdir` takes it to), and the
// files an interpreter runs (`sh x`, `timeout 60 python3 -W ignore x.py`). Plain string work; the
// caller protects what the words lead to.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { SYSTEM_PATH, systemProgram } from './system-programs.js'

/** Programs whose arguments are files they run or read as code, from their working folder (`sh x`, `deno run x.ts`, `cat x | sh`). */
const INTERPRETER = /^(sh|bash|dash|zsh|ksh|mksh|yash|fish|busybox|python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|tsx|ts-node|npx|bunx|pnpx|uv|uvx|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|wish|awk|gawk|mawk|nawk|source|\.|cat)$/
/** Words that run the command after them (`env X=1 sh x`, `timeout 60 sh x`), and shell keywords before a command. */
const WRAPPERS = new Set(['export', 'local', 'readonly', 'declare', 'env', 'exec', 'command', 'nohup', 'time', 'nice', 'ionice', 'chrt', 'taskset', 'timeout', 'stdbuf', 'setsid', 'sudo', 'doas', 'xargs', 'flock', 'unbuffer', 'builtin', '{', '}', 'if', 'then', 'else', 'elif', 'do', 'while', 'until'])
/** What a wrapper takes as its own option values: numbers, durations, signal names (`nice -n 10`, `timeout -s KILL 60`). */
const WRAPPER_VALUE = /^([0-9][0-9.,:-]*[smhd]?|[A-Z][A-Z0-9]*)$/
/** Variables whose value a program runs as a file: a shell's startup file, Python's and Node's, git's dir and programs. */
const FILE_VARIABLES = new Set(['BASH_ENV', 'ENV', 'PYTHONSTARTUP', 'NODE_OPTIONS', 'PERL5OPT', 'RUBYOPT', 'GIT_DIR', 'GIT_EXEC_PATH'])
/**
 * Words whose value is a path even without a slash: config keys given with `-c`
 * (`-c core.hooksPath=.githooks`), git's own options for the git dir and its programs
 * (`--git-dir=.meta`: that folder's config and hooks run; red team, round 37).
 */
const PATH_KEYS = /^(core\.hookspath|init\.templatedir|--git-dir|--exec-path)=/i
/** Folders a command's `cd`s may take it to, at most (each multiplies the paths protected). */
const MAX_FOLDERS = 16

/**
 * The paths a command (a config value) could run, relative to the work tree's top or absolute (red
 * team, rounds 32 to 36: `sh tools/x`, `"tools"/x`, `~/p/tools/x`, `$HOME/...`, `$PWD/tools/x`,
 * `$(git rev-parse --show-toplevel)/tools/x`, `-c core.fsmonitor=tools/x`, `cd tools && ./x`,
 * `/usr/bin/env bash x`, `bash -o pipefail x`, `D=tools; $D/x`). `~`, `~user`, `~+`, $HOME and
 * $PWD are expanded (git runs the command at the top of the work tree), variables the value sets
 * from it, others from the environment; what follows a `$(...)` or a variable not set is taken from
 * the top. Words are taken from every folder a `cd`, `-C` or `--chdir` names, in any order (a
 * subshell's `cd` counts too: more is protected, never less).
 */
export function commandWords(value: string, home: string): string[] {
  const reading: Reading = { home, folders: ['.'], vars: new Map(), out: new Set() }
  // bash's $'...' quotes as '...' does, for a path (red team, round 110: `$'tools/x'` was read as `x`).
  const text = value.replace(/\$'/g, "'")
  for (const segment of segments(text.replace(/["'\\]/g, ''))) commandSegment(segment.split(/\s+/).filter(Boolean), reading)
  // A path with a space, quoted or escaped (`'/home/u/My Proj/tools/x'`, `"$HOME/My Proj/"tools/x`,
  // `My\ Proj/x`), whole too: split at the space, it named nothing (round 109: 3 of 3 under a project
  // path with one).
  // (Not a command substitution's: the split above reads those, and what follows one is a folder a `cd` takes.)
  for (const whole of shellWords(text).filter(word => /\s/.test(word) && !/\$\(|`/.test(word))) pathWords(whole, reading)
  // ssh's options with their quotes, as ssh gets them (`-o 'ProxyCommand sh proxy.sh %h %p'`).
  for (const segment of segments(text)) {
    const words = shellWords(segment)
    const ssh = words.findIndex(word => /^(ssh|scp|sftp|autossh)$/.test(baseName(word)))
    if (ssh >= 0) sshOptions(words.slice(ssh + 1), reading)
  }
  return [...reading.out]
}

/** The words of `text` as a shell splits them: at blanks outside quotes, quotes removed, a backslash escaping the next character outside '...'. */
function shellWords(text: string): string[] {
  const words: string[] = []
  let [word, quote, started] = ['', '', false]
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quote === '' && /\s/.test(c)) {
      if (started) words.push(word)
      ;[word, started] = ['', false]
    } else if (c === quote) quote = ''
    else if (quote === '' && (c === '"' || c === "'")) [quote, started] = [c, true]
    else if (c === '\\' && quote !== "'" && i + 1 < text.length) [word, started, i] = [word + (text[i + 1] as string), true, i + 1]
    else [word, started] = [word + c, true]
  }
  if (started) words.push(word)
  return words
}

interface Reading {
  home: string
  /** Where the command may be, relative to the top (or absolute): '.' first. */
  folders: string[]
  /** Variables the value sets (`D=tools`). */
  vars: Map<string, string>
  out: Set<string>
}

/** The simple commands of a value: split at ; | & ( ) ! and newlines; each `$(...)` or `...` is one of its own, and stands as `$SUB` where it was. */
function segments(text: string): string[] {
  const inner: string[] = []
  let rest = text
  for (let i = 0; i < 64; i++) {
    const next = rest.replace(/\$\(([^()]*)\)|`([^`]*)`/, (_whole, a: string | undefined, b: string | undefined) => (inner.push(a ?? b ?? ''), '$SUB'))
    if (next === rest) break
    rest = next
  }
  return [...rest.split(/[;|&()!\n]+/), ...inner]
}

function commandSegment(words: string[], reading: Reading): void {
  const at = commandAt(words, reading)
  const command = baseName(expand(words[at] ?? '', reading))
  const args = words.slice(at + 1)
  // The folders it goes to are not files it runs (a folder made read-only would stop the work in it).
  const folders = new Set<number>()
  if (command === 'cd' || command === 'pushd') folders.add(words.findIndex((w, i) => i > at && !w.startsWith('-')))
  words.forEach((w, i) => w === '-C' && folders.add(i + 1))
  for (const i of folders) enter(words[i], reading)
  for (const word of words) if (word.startsWith('--chdir=')) enter(word.slice('--chdir='.length), reading)
  // `sh -c 'cd tools && ./x'`: the quotes are gone, the script's words follow -c (and a `--`).
  const script = args.findIndex(w => /^-\w*c$/.test(w))
  if (INTERPRETER.test(command) && script >= 0) return commandSegment(args.slice(args[script + 1] === '--' ? script + 2 : script + 1), reading)
  words.forEach((word, i) => folders.has(i) || pathWords(word, reading))
  optionFiles(args, reading)
  if (INTERPRETER.test(command)) interpreterFiles(args, reading)
  words.forEach((word, i) => (word === '<' ? fileWord(words[i + 1], reading) : word.startsWith('<') && fileWord(word.slice(1), reading)))
}

/** Where the command is among the words: after assignments (remembered; a startup file's counted) and wrappers with their options. */
function commandAt(words: readonly string[], reading: Reading): number {
  let at = 0
  while (at < words.length) {
    const word = words[at] as string
    const assignment = /^(\w+)=(.*)$/.exec(word)
    if (assignment !== null) {
      const [, name, value] = assignment as unknown as [string, string, string]
      reading.vars.set(name, expand(value, reading))
      if (FILE_VARIABLES.has(name)) fileWord(value, reading)
    } else if (!WRAPPERS.has(baseName(expand(word, reading)))) return at
    at++
    while (at < words.length && ((words[at] as string).startsWith('-') || WRAPPER_VALUE.test(words[at] as string))) at++
  }
  return at
}

/** The words of one shell word that name a path: split at = , < > (`-c core.fsmonitor=tools/x`); a hooksPath given with -c counts without a slash. */
function pathWords(word: string, reading: Reading): void {
  if (PATH_KEYS.test(word)) fileWord(word.slice(word.indexOf('=') + 1), reading)
  for (const piece of word.split(/[=,<>]+/)) {
    const expanded = expand(piece, reading)
    if (!expanded.includes('/') || expanded.includes('://') || expanded.includes('*')) continue
    // An unexpanded prefix ($SUB/, a variable not set): the rest, from the top.
    fromEachFolder(expanded.startsWith('$') ? expanded.replace(/^[^/]*\//, '') : expanded, reading)
  }
}

/** Options of any program whose value is a file (a credential helper's store, which git writes), `--file=x` or `--file x`. */
const FILE_OPTION = /^--(file|socket|config|config-file)(=|$)/
/** ssh's options that take a value (its getopt string), and of those, the ones whose value is a file it reads or loads. */
const SSH_VALUE_OPTIONS = 'bceilmopBDEFIJLOPQRSwW'
const SSH_FILE_OPTIONS = 'FiESI'
/** ssh settings (`-o Key=Value`, `-o 'Key Value'`) whose value is a file it reads or loads, or a command it runs on the host. */
const SSH_FILE_SETTING = /^(\w*file|controlpath|identityagent|pkcs11provider|securitykeyprovider|include|xauthlocation)$/i
const SSH_COMMAND_SETTING = /^(proxycommand|localcommand|knownhostscommand)$/i

/**
 * The files a program's options name, a slash or not (red team, round 110: `core.sshCommand = ssh
 * -F ssh_config`, whose ProxyCommand the session wrote, ran at the user's git fetch; a credential
 * helper's `--file=creds`); ssh's read as ssh reads them, flags bundled (`-vF cfg`), and the
 * commands its settings run (round 111: `-o 'ProxyCommand sh proxy.sh %h %p'`, 3 of 3).
 */
function optionFiles(args: readonly string[], reading: Reading): void {
  args.forEach((arg, i) => {
    const option = FILE_OPTION.exec(arg)
    if (option !== null) fileWord(option[2] === '=' ? arg.slice(arg.indexOf('=') + 1) : args[i + 1], reading)
  })
}

function sshOptions(args: readonly string[], reading: Reading): void {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (!arg.startsWith('-') || arg === '-' || arg.startsWith('--')) continue
    for (let at = 1; at < arg.length; at++) {
      const flag = arg[at] as string
      if (!SSH_VALUE_OPTIONS.includes(flag)) continue
      const value = at + 1 < arg.length ? arg.slice(at + 1) : args[++i]
      if (value !== undefined && SSH_FILE_OPTIONS.includes(flag) && value !== 'none') fileWord(value, reading)
      if (value !== undefined && flag === 'o') sshSetting(value, reading)
      break
    }
  }
}

function sshSetting(setting: string, reading: Reading): void {
  const match = /^\s*(\w+)\s*(?:=|\s)\s*(.*)$/.exec(setting)
  if (match === null) return
  const [, key, value] = match as unknown as [string, string, string]
  if (SSH_FILE_SETTING.test(key) && value !== 'none') fileWord(value, reading)
  if (SSH_COMMAND_SETTING.test(key)) for (const word of commandWords(value, reading.home)) fromEachFolder(word, reading)
}

/** An interpreter's arguments that are no options: each may be the file it runs (`bash -o pipefail x` takes `pipefail` too); `-m pkg.mod` is pkg/mod.py. */
function interpreterFiles(args: readonly string[], reading: Reading): void {
  args.forEach((arg, i) => {
    if (arg.startsWith('-')) return
    if (args[i - 1] === '-m') {
      const module = arg.replace(/\./g, '/')
      fileWord(`${module}.py`, reading)
      fileWord(`${module}/__main__.py`, reading)
    } else if (!expand(arg, reading).includes('/')) fileWord(arg, reading)
  })
}

/** A word that names a file whatever it looks like (an interpreter's argument, a startup file, a redirected input). */
function fileWord(word: string | undefined, reading: Reading): void {
  if (word === undefined || word === '') return
  const expanded = expand(word, reading)
  fromEachFolder(expanded.startsWith('$') ? expanded.replace(/^[^/]*\/?/, '') : expanded, reading)
}

function fromEachFolder(word: string, reading: Reading): void {
  if (word === '') return
  if (word.startsWith('/')) return void reading.out.add(word)
  for (const folder of reading.folders) reading.out.add(folder === '.' ? word : `${folder}/${word}`)
}

/** A `cd` target: each folder the command may be in, joined with it, is one more it may be in. */
function enter(target: string | undefined, reading: Reading): void {
  if (target === undefined) return
  const word = expand(target, reading)
  const relative = word.startsWith('$') ? word.replace(/^[^/]*\/?/, '') : word
  if (relative === '' || relative.startsWith('$')) return
  const reached = relative.startsWith('/') ? [relative] : reading.folders.map(f => (f === '.' ? relative : `${f}/${relative}`))
  for (const folder of reached) if (!reading.folders.includes(folder) && reading.folders.length < MAX_FOLDERS) reading.folders.push(folder)
}

const baseName = (word: string): string => word.slice(word.lastIndexOf('/') + 1)

function expand(word: string, reading: Reading): string {
  return expandVariables(expandHome(word.replace(/^~\+(?=\/|$)/, '.'), reading.home), reading)
}

/** A variable at the start of a word: $NAME, ${NAME}, or ${NAME:-word} (its word when NAME is not known). */
function expandVariables(word: string, reading: Reading): string {
  return word.replace(/^\$(?:(\w+)|\{(\w+)(?::?[-=]([^}]*))?\})(?=\/|$)/, (whole, plain: string | undefined, braced: string | undefined, fallback: string | undefined) => {
    const name = (plain ?? braced) as string
    if (name === 'PWD') return '.'
    if (name === 'HOME') return reading.home
    if (name === 'SUB') return whole
    return reading.vars.get(name) ?? process.env[name] ?? fallback ?? whole
  })
}

/** `~/` and `~user/` at the start, as git's --type=path and a shell expand them. */
export function expandHome(word: string, home: string): string {
  const tilde = /^~([^/]+)?(?=\/|$)/.exec(word)
  if (tilde === null) return word
  const user = tilde[1]
  const dir = user === undefined ? home : homeOfUser(user)
  return dir === undefined ? word : `${dir}${word.slice(tilde[0].length)}`
}

/**
 * A user's home as git's getpwnam finds it: from /etc/passwd, else through the name service
 * (`getent`: systemd, LDAP or sssd users; round 73, `~john.doe/x` was left unexpanded and taken as a
 * folder of the project). Unknown: undefined (git then refuses the value).
 */
function homeOfUser(user: string): string | undefined {
  let passwd = ''
  try {
    passwd = fs.readFileSync('/etc/passwd', 'utf8')
  } catch {
    // the name service below may still know the user
  }
  const line = passwd.split('\n').find(entry => entry.startsWith(`${user}:`)) ?? getent(user)
  return line?.split(':')[5] || undefined
}

function getent(user: string): string | undefined {
  // From the system's folders, never from PATH: a project folder on it (an activated virtualenv)
  // could hold one the session wrote, run here at the session's end (red team, round 92).
  const program = systemProgram('getent')
  if (program === undefined) return undefined
  try {
    return execFileSync(program, ['passwd', '--', user], { encoding: 'utf8', env: { PATH: SYSTEM_PATH, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'ignore'], timeout: 2_000 }).split('\n')[0]
  } catch {
    return undefined
  }
}
