// Bundles src/ into dist/ with esbuild. The launch path runs at every start of Claude, so it is one
// CommonJS file that bin/claudebox.js runs from V8's code cache: dist/main.cjs holds main.ts and
// everything a launch can reach (its lazy parts inlined, run only when reached). Each other mode
// (--check, --gc, --list, --sessions, --adopt, --proposals, --completions, --help, and the
// first-run takeover of a moved project) is its own bundle,
// required by main.cjs only in that mode. Measured (scripts/bench.mjs): one file instead of 22
// saves the ESM loader's per-module resolve and link work; the code cache, the compilation.
import { build } from 'esbuild'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const MODES = {
  check: 'src/commands/check.ts',
  gc: 'src/commands/gc.ts',
  list: 'src/commands/list.ts',
  sessions: 'src/commands/sessions.ts',
  adopt: 'src/commands/adopt.ts',
  proposals: 'src/commands/proposals.ts',
  completions: 'src/cli/completions.ts',
  help: 'src/cli/help.ts',
  takeover: 'src/commands/takeover.ts',
}
const modeFiles = new Map(Object.entries(MODES).map(([name, file]) => [path.resolve(file.replace(/\.ts$/, '.js')), `./${name}.cjs`]))

/**
 * The root-only search is its own small bundle, which bin/claudebox.js starts before it loads the
 * launch bundle: every bundle requires that one file (so that they share the search it started)
 * instead of holding a copy of it.
 */
const SEARCH = path.resolve('src/host/root-only-search.js')
const searchApart = {
  name: 'search-apart',
  setup(b) {
    b.onResolve({ filter: /root-only-search\.js$/ }, args => (path.resolve(args.resolveDir, args.path) === SEARCH ? { path: './root-only-search.cjs', external: true } : undefined))
  },
}

/** In the launch bundle, import() of a mode stays an import() of that mode's own bundle. */
const modesApart = {
  name: 'modes-apart',
  setup(b) {
    b.onResolve({ filter: /^\./ }, args => {
      if (args.kind !== 'dynamic-import') return undefined
      const bundle = modeFiles.get(path.resolve(args.resolveDir, args.path))
      return bundle === undefined ? undefined : { path: bundle, external: true }
    })
  },
}

const common = {
  outdir: 'dist',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  define: { __CLAUDEBOX_VERSION__: JSON.stringify(version) },
  // Some bundled CommonJS (commander) calls require(): give ESM output one.
  banner: { js: "import { createRequire as __cbRequire } from 'node:module'; const require = __cbRequire(import.meta.url);" },
  logLevel: 'warning',
}

/**
 * esbuild's interop helper for `import x from 'node:fs'` in CommonJS output copies every export
 * of the module into a new object (a getter each): 84 imports at every launch, ~15 ms here. This
 * one gives the same reads through the prototype chain instead (x.default is the module, any
 * other name reads the module's own, live). The helper's text is checked: a new esbuild that
 * writes it differently stops the build rather than leave the slow one in.
 */
const SLOW_TO_ESM = `var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
  // If the importer is in node compatibility mode or this is not an ESM
  // file that has been converted to a CommonJS file using a Babel-
  // compatible transform (i.e. "__esModule" has not been set), then set
  // "default" to the CommonJS "module.exports" for node compatibility.
  isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
  mod
));`
const FAST_TO_ESM = 'var __toESM = (mod, isNodeMode) => mod == null ? { default: mod } : isNodeMode || !mod.__esModule ? __create(mod, { default: { value: mod, enumerable: true } }) : mod;'

function fastInterop(file) {
  const text = readFileSync(file, 'utf8')
  if (!text.includes('var __toESM')) return
  if (!text.includes(SLOW_TO_ESM)) throw new Error(`${file}: esbuild's __toESM helper changed; update scripts/build.mjs`)
  writeFileSync(file, text.replace(SLOW_TO_ESM, FAST_TO_ESM))
}

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true })
await Promise.all([
  // CommonJS, so that bin/claudebox.js can run it from V8's code cache (vm.Script cachedData).
  build({
    ...common,
    entryPoints: { main: 'src/main.ts' },
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    splitting: false,
    // import() becomes require(): V8 does not carry import()'s loader into functions it takes from
    // a code cache ("A dynamic import callback was not specified"), so the launch bundle has none.
    supported: { 'dynamic-import': false },
    plugins: [modesApart, searchApart],
    define: { ...common.define, 'import.meta.url': '__cbImportMetaUrl' },
    banner: { js: "const __cbImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  }),
  // bridge.ts runs inside the sandbox of --network=allow off x86_64: its own small file, imports only node:.
  build({ ...common, entryPoints: { bridge: 'src/network/bridge.ts' } }),
  // Each mode whole in its own file (CommonJS, required by main.cjs: no chunks to share).
  build({ ...common, entryPoints: MODES, format: 'cjs', outExtension: { '.js': '.cjs' }, plugins: [searchApart], define: { ...common.define, 'import.meta.url': '__cbImportMetaUrl' }, banner: { js: "const __cbImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" } }),
  // Node's own modules only: no banner, nothing of the launch bundle's.
  build({ ...common, entryPoints: { 'root-only-search': 'src/host/root-only-search.ts' }, format: 'cjs', outExtension: { '.js': '.cjs' }, banner: {} }),
])
for (const name of readdirSync('dist')) if (name.endsWith('.cjs')) fastInterop(path.join('dist', name))
