import { describe, expect, test } from 'vitest'
import { hostSeccompArch, seccompFilter, type SeccompArch } from '../../src/seccomp.js'

/** A small classic-BPF interpreter over struct seccomp_data, enough for the filter's opcodes. */
function run(program: Buffer, data: { nr: number; arch: number; args?: bigint[] }): number {
  const mem = Buffer.alloc(64)
  mem.writeUInt32LE(data.nr >>> 0, 0)
  mem.writeUInt32LE(data.arch >>> 0, 4)
  ;(data.args ?? []).forEach((a, i) => mem.writeBigUInt64LE(BigInt.asUintN(64, a), 16 + 8 * i))
  let acc = 0
  for (let pc = 0; pc * 8 < program.length; ) {
    const code = program.readUInt16LE(pc * 8)
    const jt = program.readUInt8(pc * 8 + 2)
    const jf = program.readUInt8(pc * 8 + 3)
    const k = program.readUInt32LE(pc * 8 + 4)
    switch (code) {
      case 0x20: acc = mem.readUInt32LE(k); pc++; break
      case 0x15: pc += 1 + (acc === k ? jt : jf); break
      case 0x35: pc += 1 + (acc >= k ? jt : jf); break
      case 0x45: pc += 1 + ((acc & k) !== 0 ? jt : jf); break
      case 0x05: pc += 1 + k; break
      case 0x06: return k
      default: throw new Error(`opcode ${code.toString(16)}`)
    }
  }
  throw new Error('fell off the end')
}

const ALLOW = 0x7fff0000
const EPERM = 0x50001
const ENOSYS = 0x50026
const ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7 }
const NR = {
  x86_64: { ioctl: 16, clone: 56, clone3: 435, mount: 165, unshare: 272, keyctl: 250, ptrace: 101, read: 0, open_tree: 428, fsopen: 430, setns: 308 },
  aarch64: { ioctl: 29, clone: 220, clone3: 435, mount: 40, unshare: 97, keyctl: 219, ptrace: 117, read: 63, open_tree: 428, fsopen: 430, setns: 268 },
}

describe.each(['x86_64', 'aarch64'] as SeccompArch[])('seccomp filter for %s', arch => {
  const filter = seccompFilter(arch)
  const sys = (name: keyof (typeof NR)['x86_64'], args: bigint[] = []): number => run(filter, { nr: NR[arch][name], arch: ARCH[arch], args })

  test('is a whole number of instructions, well under the jump range', () => {
    expect(filter.length % 8).toBe(0)
    expect(filter.length / 8).toBeLessThan(120)
  })
  test('TIOCSTI and TIOCLINUX fail, also with high bits set in the request (CVE-2019-10063)', () => {
    expect(sys('ioctl', [0n, 0x5412n])).toBe(EPERM)
    expect(sys('ioctl', [0n, 0x541cn])).toBe(EPERM)
    expect(sys('ioctl', [0n, 0xffffffff00005412n])).toBe(EPERM)
  })
  test('other ioctls, window size included, are allowed', () => {
    for (const request of [0x5401n, 0x5413n /* TIOCGWINSZ */, 0x5414n /* TIOCSWINSZ */, 0x541bn /* FIONREAD */]) {
      expect(sys('ioctl', [0n, request])).toBe(ALLOW)
    }
  })
  test('clone with a namespace flag fails; a plain fork or thread is allowed; clone3 is ENOSYS', () => {
    expect(sys('clone', [0x10000000n | 17n])).toBe(EPERM) // CLONE_NEWUSER
    expect(sys('clone', [0x00020000n | 17n])).toBe(EPERM) // CLONE_NEWNS
    expect(sys('clone', [0x01200011n])).toBe(ALLOW) // fork: CLONE_CHILD_SETTID|CHILD_CLEARTID|SIGCHLD
    expect(sys('clone', [0x003d0f00n])).toBe(ALLOW) // pthread_create
    expect(sys('clone3')).toBe(ENOSYS)
  })
  test('mount, the new mount API, unshare, setns and the keyring fail', () => {
    for (const name of ['mount', 'open_tree', 'fsopen', 'unshare', 'setns', 'keyctl'] as const) expect(sys(name), name).toBe(EPERM)
  })
  test('ordinary syscalls and ptrace are allowed', () => {
    expect(sys('read')).toBe(ALLOW)
    expect(sys('ptrace')).toBe(ALLOW)
  })
  test('another ABI is refused as a whole', () => {
    expect(run(filter, { nr: NR[arch].read, arch: 0x40000003 /* i386 */ })).toBe(ENOSYS)
    expect(run(filter, { nr: NR[arch].read, arch: 0x40000028 /* arm */ })).toBe(ENOSYS)
  })
})

test('x32 syscalls on x86_64 cannot bypass the rules', () => {
  expect(run(seccompFilter('x86_64'), { nr: 0x40000000 + 16, arch: ARCH.x86_64, args: [0n, 0x5412n] })).toBe(ENOSYS)
})

test('host architecture mapping', () => {
  expect(hostSeccompArch('x64')).toBe('x86_64')
  expect(hostSeccompArch('arm64')).toBe('aarch64')
  expect(hostSeccompArch('riscv64')).toBeUndefined()
})
