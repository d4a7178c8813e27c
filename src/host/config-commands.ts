// The files a git config value may run, read from its words as a shell would roughly read them: the
// words that name a path, from every folder the command may be in when it names them (the work
// tree's top, where git runs it, and each folder a `cd` or `-C` takes it to), and the file an
// interpreter (`sh x`) runs. Plain string work; the caller protects what the words lead to.
import fs from 'node:fs'

/** Programs whose first argument is a file they run, found from their working folder (`sh x`, `python x`). */
const INTERPRETERS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish', 'python', 'python2', 'python3', 'node', 'nodejs', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'tclsh', 'source', '.'])
/** Words before a command that leave it the command (`env X=1 sh x`, `{ cd a; ./x; }`, `if ! ./x`). */
const BEFORE_COMMAND = new Set(['env', 'exec', 'command', 'nohup', 'time', 'nice', 'builtin', 'xargs', 'sudo', '{', '}', 'if', 'then', 'else', 'elif', 'do', 'while', 'until'])
/** Folders a command's `cd`s may take it to, at most (each multiplies the paths protected). */
const MAX_FOLDERS = 16

/**
 * The paths a command (a config value) could run, relative to the work tree's top or absolute (red
 * team, rounds 32 to 34: `sh tools/x`, `"tools"/x`, `~/p/tools/x`, `$HOME/...`, `$PWD/tools/x`,
 * `$(git rev-parse --show-toplevel)/tools/x`, `-c core.fsmonitor=tools/x`, `cd tools && ./x`).
 * `~`, `~user`, $HOME and $PWD are expanded (git runs the command at the top of the work tree),
 * other variables from the environment; what follows a `$(...)` or a variable not set is taken from
 * the top. Words are taken from every folder a `cd` or `-C` names, in any order (a subshell's `cd`
 * counts too: more is protected, never less).
 */
export function commandWords(value: string, home: string): string[] {
  const out = new Set<string>()
  const folders = ['.']
  for (const segment of segments(value.replace(/["'\\]/g, ''))) commandSegment(segment.split(/\s+/).filter(Boolean), { home, folders, out })
  return [...out]
}

interface Reading {
  home: string
  /** Where the command may be, relative to the top (or absolute): '.' first. */
  folders: string[]
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
  let at = 0
  while (at < words.length && (BEFORE_COMMAND.has(words[at] as string) || /^\w+=/.test(words[at] as string) || (at > 0 && (words[at] as string).startsWith('-')))) at++
  const command = words[at]?.split('/').pop() ?? ''
  const args = words.slice(at + 1)
  // The folders it goes to are not files it runs (a folder made read-only would stop the work in it).
  const folders = new Set<number>()
  if (command === 'cd' || command === 'pushd') folders.add(words.findIndex((w, i) => i > at && !w.startsWith('-')))
  words.forEach((w, i) => w === '-C' && folders.add(i + 1))
  for (const i of folders) enter(words[i], reading)
  // `sh -c 'cd tools && ./x'`: the quotes are gone, the script's words follow -c.
  const script = args.findIndex(w => /^-\w*c$/.test(w))
  if (INTERPRETERS.has(command) && script >= 0) return commandSegment(args.slice(script + 1), reading)
  words.forEach((word, i) => folders.has(i) || word.split(/[=,<>]+/).forEach(piece => pathWord(expand(piece, reading.home), reading)))
  const file = args.find(w => !w.startsWith('-'))
  if (INTERPRETERS.has(command) && file !== undefined && !file.includes('/')) fromEachFolder(expand(file, reading.home), reading)
}

/** A word naming a path: from each folder when relative; an unexpanded prefix (`$SUB/`, a variable not set) leaves the rest, from the top. */
function pathWord(word: string, reading: Reading): void {
  if (!word.includes('/') || word.includes('://') || word.includes('*')) return
  fromEachFolder(word.startsWith('$') ? word.replace(/^[^/]*\//, '') : word, reading)
}

function fromEachFolder(word: string, reading: Reading): void {
  if (word === '') return
  if (word.startsWith('/')) return void reading.out.add(word)
  for (const folder of reading.folders) reading.out.add(folder === '.' ? word : `${folder}/${word}`)
}

/** A `cd` target: each folder the command may be in, joined with it, is one more it may be in. */
function enter(target: string | undefined, reading: Reading): void {
  if (target === undefined) return
  const word = expand(target, reading.home)
  const relative = word.startsWith('$') ? word.replace(/^[^/]*\/?/, '') : word
  if (relative === '' || relative.startsWith('$')) return
  const reached = relative.startsWith('/') ? [relative] : reading.folders.map(f => (f === '.' ? relative : `${f}/${relative}`))
  for (const folder of reached) if (!reading.folders.includes(folder) && reading.folders.length < MAX_FOLDERS) reading.folders.push(folder)
}

function expand(word: string, home: string): string {
  return expandVariables(expandHome(word, home), home)
}

function expandVariables(word: string, home: string): string {
  return word.replace(/^\$\{?(\w+)\}?(?=\/|$)/, (whole, name: string) => (name === 'PWD' ? '.' : name === 'HOME' ? home : name === 'SUB' ? whole : (process.env[name] ?? whole)))
}

/** `~/` and `~user/` at the start, as git's --type=path and a shell expand them. */
export function expandHome(word: string, home: string): string {
  const tilde = /^~([a-z_][a-z0-9_-]*)?(?=\/|$)/i.exec(word)
  if (tilde === null) return word
  const user = tilde[1]
  const dir = user === undefined ? home : homeOfUser(user)
  return dir === undefined ? word : `${dir}${word.slice(tilde[0].length)}`
}

function homeOfUser(user: string): string | undefined {
  let passwd: string
  try {
    passwd = fs.readFileSync('/etc/passwd', 'utf8')
  } catch {
    return undefined
  }
  const line = passwd.split('\n').find(entry => entry.startsWith(`${user}:`))
  return line?.split(':')[5] || undefined
}
