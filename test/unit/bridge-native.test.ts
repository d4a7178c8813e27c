// The native bridge claudebox ships is what its source builds to (scripts/build-bridge.sh), so the
// bytes in src/network/bridge-native.ts can be read as bridge.x86_64.c. What it does is proven in
// real sandboxes (test/integration/bridge.test.ts).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { nativeBridge } from '../../src/network/bridge-native.js'
import { REPO, requiredTool, tempDir } from '../helpers/cli.js'

const HAVE_GCC = requiredTool('gcc', ['--version'], 'gcc (apt-get install gcc libc6-dev)')

describe('nativeBridge', () => {
  test.skipIf(!HAVE_GCC || os.arch() !== 'x64')('x86_64: the shipped bytes are what bridge.x86_64.c builds to', () => {
    const out = path.join(tempDir('cb-bridge-build-'), 'bridge')
    execFileSync('bash', [path.join(REPO, 'scripts/build-bridge.sh'), out])
    expect(Buffer.from(nativeBridge('x64') as Uint8Array).equals(fs.readFileSync(out))).toBe(true)
  })

  test('a static ELF64 executable for x86_64 whose segments are never writable and executable at once', () => {
    const elf = nativeBridge('x64') as Uint8Array
    const view = new DataView(elf.buffer, elf.byteOffset, elf.byteLength)
    expect([...elf.subarray(0, 8)]).toEqual([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0])
    expect(view.getUint16(16, true)).toBe(2) // ET_EXEC: static, no interpreter
    expect(view.getUint16(18, true)).toBe(0x3e)
    const [phoff, phnum] = [Number(view.getBigUint64(32, true)), view.getUint16(56, true)]
    for (let i = 0; i < phnum; i++) {
      const type = view.getUint32(phoff + i * 56, true)
      const flags = view.getUint32(phoff + i * 56 + 4, true)
      expect(type).not.toBe(3) // PT_INTERP
      expect(flags & 3).not.toBe(3) // PF_W | PF_X
    }
  })

  test('other architectures get none (the Node bridge serves them)', () => {
    expect(nativeBridge('arm64')).toBeUndefined()
  })
})
