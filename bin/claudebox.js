#!/usr/bin/env node
// Entry shim: all logic lives in src/ (bundled to dist/main.cjs). The launch path runs at every
// start of Claude, so the bundle runs from V8's code cache when there is one: the functions a
// launch compiled last time are not compiled again (~20 ms of a ~200 ms launch here). The cache is
// $CLAUDEBOX_HOME/cache/main-*.v8 (default ~/.claudebox; never visible in a sandbox), named after
// this bundle's size, time and inode and this Node's version; V8 itself refuses one made by
// another V8 or for other source, and then it is made anew. CLAUDEBOX_CODE_CACHE=0 turns it off.
// CommonJS (bin/package.json), not an ES module: Node's ES module loader costs ~5 ms a start.
'use strict'
const fs = require('node:fs')
const { createRequire, wrap } = require('node:module')
const path = require('node:path')
const vm = require('node:vm')

const bundle = path.join(__dirname, '..', 'dist', 'main.cjs')
// For root, the search of what only root may read in /etc and /opt (which root's sandbox hides)
// starts now and runs while the launch bundle loads: the bundle requires the same file and waits
// for this search, not a new one. Other users have nothing to search for.
if (process.getuid?.() === 0) require(path.join(__dirname, '..', 'dist', 'root-only-search.cjs')).startRootOnlySearch()
// Output that could not be written (a full disk; a reader gone is the reader's choice) makes the
// status a failure. Listened for from the start: Node forgets a stdio stream's error once it has
// been emitted (red team), and a session's relayed output fails long before the end.
let outputFailed = false
for (const stream of [process.stdout, process.stderr]) stream.on('error', error => (outputFailed ||= error.code !== 'EPIPE'))
const loader = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
const cache = loader !== undefined && process.env.CLAUDEBOX_CODE_CACHE !== '0' ? cacheFile() : undefined
const { main } = cache === undefined ? require(bundle) : fromCache(cache)
void main(process.argv.slice(2)).then(async status => {
  process.exitCode = status
  if (cache?.write) saveCache(cache)
  // Done: whatever a session left pending (a call to the API through a company proxy that never
  // answers, a token refresh) must not keep the launcher, and the shell, waiting. What is still
  // on its way to stdout or stderr (a slow reader of the relayed output) is not cut.
  await Promise.all([process.stdout, process.stderr].map(written))
  process.exit(status === 0 && outputFailed ? 1 : status)
})

/**
 * Resolves once what was queued for `stream` has left it: an empty write's callback comes after
 * the writes before it ('drain' comes only after a write that was refused, red team).
 */
function written(stream) {
  return new Promise(resolve => {
    // Nothing queued: no empty write either (on /dev/full even that fails, red team); the 'error'
    // of a last write that failed comes on the next tick: let it be counted first.
    if (stream.destroyed || stream.writableEnded || stream.writableLength === 0) return void setImmediate(resolve)
    stream.write('', error => {
      if (error && error.code !== 'EPIPE') outputFailed = true
      // The 'error' event of a failed write comes on the next tick: let it be counted first.
      setImmediate(resolve)
    })
  })
}

/** Where this bundle's cache lives, or undefined when there is no usable claudebox home. */
function cacheFile() {
  const home = process.env.CLAUDEBOX_HOME || (process.env.HOME ? path.join(process.env.HOME, '.claudebox') : undefined)
  if (!home || !path.isAbsolute(home)) return undefined
  const st = fs.statSync(bundle)
  const dir = path.join(home, 'cache')
  return { dir, file: path.join(dir, `main-${st.size}-${Math.trunc(st.mtimeMs)}-${st.ino}-${process.version}.v8`) }
}

function fromCache(cache) {
  const source = fs.readFileSync(bundle, 'utf8')
  const cachedData = readCache(cache.file)
  cache.script = new vm.Script(wrap(source), { filename: bundle, cachedData, importModuleDynamically: loader })
  cache.write = cachedData === undefined || cache.script.cachedDataRejected === true
  const module = { exports: {} }
  cache.script.runInThisContext().call(module.exports, module.exports, createRequire(bundle), module, bundle, path.dirname(bundle))
  return module.exports
}

/** The cache's bytes; never through a symlink, never a FIFO, undefined when there is none. */
function readCache(file) {
  let fd
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    return fs.fstatSync(fd).isFile() ? fs.readFileSync(fd) : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/**
 * After the launch, with what it compiled: written whole (temp file, then rename), older caches
 * removed. A dry run writes nothing; a failure costs only the next launch's speed.
 */
function saveCache(cache) {
  if (process.argv.includes('--dry-run')) return
  let temp
  try {
    if (!fs.lstatSync(path.dirname(cache.dir)).isDirectory()) return
    fs.mkdirSync(cache.dir, { mode: 0o700, recursive: true })
    if (!fs.lstatSync(cache.dir).isDirectory()) return
    for (const name of fs.readdirSync(cache.dir)) if (name.startsWith('main-') && path.join(cache.dir, name) !== cache.file) fs.rmSync(path.join(cache.dir, name), { force: true })
    temp = `${cache.file}.${process.pid}.tmp`
    fs.writeFileSync(temp, cache.script.createCachedData(), { mode: 0o600, flag: 'wx' })
    fs.renameSync(temp, cache.file)
  } catch {
    // no room, or a read-only home: the next launch compiles again (a partial temp file would
    // have filled a full disk further at every launch, red team)
    if (temp !== undefined) fs.rmSync(temp, { force: true })
  }
}
