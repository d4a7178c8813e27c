// Bundles src/ into dist/ with esbuild. Bundling matters for launch speed: the same three
// dependencies cost 2.65x `node -e 0` unbundled and 1.41x bundled (shared/research/launch-speed.md).
// Code splitting keeps --check/--gc code out of the chunk a normal launch loads.
import { build } from 'esbuild'
import { readFileSync, rmSync } from 'node:fs'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true })
await build({
  // bridge.ts runs inside the sandbox of --network=allow: its own small file, imports only node:.
  entryPoints: { main: 'src/main.ts', bridge: 'src/network/bridge.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  define: { __CLAUDEBOX_VERSION__: JSON.stringify(version) },
  // Some bundled CommonJS (fs-extra, commander) calls require(): give ESM output one.
  banner: { js: "import { createRequire as __cbRequire } from 'node:module'; const require = __cbRequire(import.meta.url);" },
  logLevel: 'warning',
})
