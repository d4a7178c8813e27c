#!/usr/bin/env node
// Entry shim: all logic lives in src/main.ts (bundled to dist/main.js).
import { main } from '../dist/main.js'

process.exitCode = await main(process.argv.slice(2))
