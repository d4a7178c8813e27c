// claudebox's own version, from package.json at build time (scripts/build.mjs defines it).
declare const __CLAUDEBOX_VERSION__: string
export const VERSION = __CLAUDEBOX_VERSION__
