// The Landlock helper's ELF wrapper (pure); what the helper does is proven inside real sandboxes
// (test/escape: the host's abstract socket refused with EPERM).
import { describe, expect, test } from 'vitest'
import { scopeHelper } from '../../src/sandbox/landlock.js'

describe('scopeHelper', () => {
  test('x86_64: a static ELF64 executable whose one segment loads the whole file, entered right after the headers', () => {
    const elf = scopeHelper('x64') as Uint8Array
    const view = new DataView(elf.buffer, elf.byteOffset, elf.byteLength)
    expect([...elf.subarray(0, 8)]).toEqual([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0])
    expect(view.getUint16(16, true)).toBe(2) // ET_EXEC
    expect(view.getUint16(18, true)).toBe(0x3e) // x86-64
    expect(view.getBigUint64(24, true)).toBe(0x400000n + 120n)
    expect(view.getUint32(64, true)).toBe(1) // PT_LOAD
    expect(view.getUint32(68, true)).toBe(5) // R+X, never writable
    expect(view.getBigUint64(96, true)).toBe(BigInt(elf.length))
    // The code starts by saving the stack pointer (mov %rsp,%r12) and ends in exit_group(127).
    expect([...elf.subarray(120, 123)]).toEqual([0x49, 0x89, 0xe4])
    expect([...elf.subarray(-12)]).toEqual([0xb8, 0xe7, 0, 0, 0, 0xbf, 0x7f, 0, 0, 0, 0x0f, 0x05])
  })

  test('other architectures get no helper (--check warns)', () => {
    expect(scopeHelper('arm64')).toBeUndefined()
    expect(scopeHelper('ia32')).toBeUndefined()
  })
})
