// The seccomp program, run in a small classic-BPF interpreter against synthetic seccomp_data.
import fs from 'node:fs'
import { describe, expect, test } from 'vitest'
import {
  AUDIT_ARCH,
  describeSeccompRules,
  hostSeccompArch,
  SECCOMP_ABIS,
  SECCOMP_RULES,
  seccompFilter,
  SYSCALL_NUMBERS,
  type SeccompAbi,
  type SeccompArch,
  type SyscallName,
} from '../../src/sandbox/seccomp.js'

interface Insn {
  code: number
  jt: number
  jf: number
  k: number
}
const decode = (program: Buffer): Insn[] =>
  Array.from({ length: program.length / 8 }, (_, i) => ({
    code: program.readUInt16LE(i * 8),
    jt: program.readUInt8(i * 8 + 2),
    jf: program.readUInt8(i * 8 + 3),
    k: program.readUInt32LE(i * 8 + 4),
  }))

/** Runs the program over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]} (little-endian). */
function run(program: Buffer, data: { nr: number; arch: number; args?: readonly bigint[] }): number {
  const mem = Buffer.alloc(64)
  mem.writeUInt32LE(data.nr >>> 0, 0)
  mem.writeUInt32LE(data.arch >>> 0, 4)
  ;(data.args ?? []).forEach((a, i) => mem.writeBigUInt64LE(BigInt.asUintN(64, a), 16 + 8 * i))
  const insns = decode(program)
  let acc = 0
  for (let pc = 0, steps = 0; steps < 10_000; steps++) {
    const insn = insns[pc]
    if (insn === undefined) throw new Error(`fell off the program at ${pc}`)
    const { code, jt, jf, k } = insn
    const branch = (taken: boolean): number => pc + 1 + (taken ? jt : jf)
    switch (code) {
      case 0x20: // BPF_LD | BPF_W | BPF_ABS
        if (k % 4 !== 0 || k > 60) throw new Error(`bad load offset ${k}`)
        acc = mem.readUInt32LE(k)
        pc++
        break
      case 0x54: acc = (acc & k) >>> 0; pc++; break // BPF_ALU | BPF_AND | BPF_K
      case 0x05: pc = pc + 1 + k; break // BPF_JMP | BPF_JA
      case 0x15: pc = branch(acc === k); break // JEQ
      case 0x25: pc = branch(acc > k); break // JGT
      case 0x35: pc = branch(acc >= k); break // JGE
      case 0x45: pc = branch((acc & k) !== 0); break // JSET
      case 0x06: return k // BPF_RET | BPF_K
      default: throw new Error(`unknown opcode 0x${code.toString(16)} at ${pc}`)
    }
  }
  throw new Error('no return')
}

const ALLOW = 0x7fff0000
const EPERM = 0x50001
const ENOSYS = 0x50026
const EXDEV = 0x50012
const EOPNOTSUPP = 0x5005f
const EAFNOSUPPORT = 0x50061
const ERRNO_RESULT = { EPERM, EXDEV, ENOSYS, EOPNOTSUPP, EAFNOSUPPORT } as const

// Written out independently of src/sandbox/seccomp.ts (from the kernel's tables) for the cases named below.
const ARCH = { x86_64: 0xc000003e, i386: 0x40000003, aarch64: 0xc00000b7, arm: 0x40000028 } as const
const NR = {
  x86_64: { inotify_add_watch: 254, fanotify_init: 300, fcntl: 72, read: 0, ioctl: 16, clone: 56, clone3: 435, unshare: 272, setns: 308, mount: 165, umount2: 166, chroot: 161, pivot_root: 155, open_tree: 428, fsopen: 430, mount_setattr: 442, keyctl: 250, add_key: 248, request_key: 249, ptrace: 101, personality: 135, socket: 41, bpf: 321, perf_event_open: 298, process_vm_readv: 310, io_uring_setup: 425, fchmod: 91, fchmodat: 268, mknodat: 259, setxattr: 188, fsetxattr: 190, linkat: 265 },
  i386: { inotify_add_watch: 292, fanotify_init: 338, fcntl: 55, read: 3, ioctl: 54, clone: 120, clone3: 435, unshare: 310, setns: 346, mount: 21, umount2: 52, chroot: 61, pivot_root: 217, open_tree: 428, fsopen: 430, mount_setattr: 442, keyctl: 288, add_key: 286, request_key: 287, ptrace: 26, personality: 136, socket: 359, bpf: 357, perf_event_open: 336, process_vm_readv: 347, io_uring_setup: 425, fchmod: 94, fchmodat: 306, mknodat: 297, setxattr: 226, fsetxattr: 228, linkat: 303 },
  aarch64: { inotify_add_watch: 27, fanotify_init: 262, fcntl: 25, read: 63, ioctl: 29, clone: 220, clone3: 435, unshare: 97, setns: 268, mount: 40, umount2: 39, chroot: 51, pivot_root: 41, open_tree: 428, fsopen: 430, mount_setattr: 442, keyctl: 219, add_key: 217, request_key: 218, ptrace: 117, personality: 92, socket: 198, bpf: 280, perf_event_open: 241, process_vm_readv: 270, io_uring_setup: 425, fchmod: 52, fchmodat: 53, mknodat: 33, setxattr: 5, fsetxattr: 7, linkat: 37 },
  arm: { inotify_add_watch: 317, fanotify_init: 367, fcntl: 55, read: 3, ioctl: 54, clone: 120, clone3: 435, unshare: 337, setns: 375, mount: 21, umount2: 52, chroot: 61, pivot_root: 218, open_tree: 428, fsopen: 430, mount_setattr: 442, keyctl: 311, add_key: 309, request_key: 310, ptrace: 26, personality: 136, socket: 281, bpf: 386, perf_event_open: 364, process_vm_readv: 376, io_uring_setup: 425, fchmod: 94, fchmodat: 333, mknodat: 324, setxattr: 226, fsetxattr: 228, linkat: 330 },
} as const
type Name = keyof (typeof NR)['x86_64']

const ARCHES: SeccompArch[] = ['x86_64', 'aarch64']
const ABIS: SeccompAbi[] = ['x86_64', 'i386', 'aarch64', 'arm']

describe.each(ARCHES)('the filter generated for %s', arch => {
  const filter = seccompFilter(arch)
  const insns = decode(filter)

  test('is whole sock_filter records, decodes to the expected instructions, and every jump is forward and in range', () => {
    expect(filter.length % 8).toBe(0)
    expect(insns.length).toBe(582) // 4 tables; changes whenever a rule does
    expect(insns.length).toBeLessThan(4096) // BPF_MAXINSNS
    expect(insns.at(-1)?.code).toBe(0x06)
    insns.forEach((insn, pc) => {
      expect([0x20, 0x05, 0x15, 0x35, 0x45, 0x54, 0x06]).toContain(insn.code)
      const targets = insn.code === 0x05 ? [insn.k] : insn.code === 0x06 || insn.code === 0x20 ? [] : [insn.jt, insn.jf]
      for (const t of targets) expect(pc + 1 + t).toBeLessThan(insns.length)
      if (insn.code === 0x20) expect([0, 4, 16, 24, 32]).toContain(insn.k) // nr, arch, low halves of args 0, 1 and 2
    })
    expect(seccompFilter(arch).equals(filter)).toBe(true) // deterministic (the launcher names the file by content)
  })

  test('the native table comes first: an ordinary native syscall is decided in a short path', () => {
    expect(insns[1]?.k).toBe(AUDIT_ARCH[arch])
  })

  describe.each(ABIS)('%s syscalls', abi => {
    const sys = (name: Name, args: bigint[] = []): number => run(filter, { nr: NR[abi][name], arch: ARCH[abi], args })

    test('ioctl TIOCSTI and TIOCLINUX fail with EPERM, also with high bits set in the request (CVE-2019-10063)', () => {
      expect(sys('ioctl', [1n, 0x5412n])).toBe(EPERM)
      expect(sys('ioctl', [1n, 0x541cn])).toBe(EPERM)
      expect(sys('ioctl', [1n, 0xffffffff00005412n])).toBe(EPERM)
      expect(sys('ioctl', [1n, 0x100000000541cn])).toBe(EPERM)
    })
    test('other ioctls are allowed, the window-size ones included', () => {
      for (const request of [0x5401n /* TCGETS */, 0x5402n /* TCSETS */, 0x5413n /* TIOCGWINSZ */, 0x5414n /* TIOCSWINSZ */, 0x541bn /* FIONREAD */, 0x540en /* TIOCSCTTY */, 0x5411n /* TIOCOUTQ */]) {
        expect(sys('ioctl', [1n, request]), request.toString(16)).toBe(ALLOW)
      }
      expect(sys('ioctl', [0x5412n, 0x5401n])).toBe(ALLOW) // the fd is not the request
    })
    test('clone with a namespace flag fails with EPERM; fork and thread flags are allowed', () => {
      for (const flag of [0x00020000n, 0x02000000n, 0x04000000n, 0x08000000n, 0x10000000n, 0x20000000n, 0x40000000n]) {
        expect(sys('clone', [flag | 17n]), flag.toString(16)).toBe(EPERM)
      }
      expect(sys('clone', [0x10000000n | 0x01200011n])).toBe(EPERM)
      expect(sys('clone', [0x01200011n])).toBe(ALLOW) // glibc fork: CHILD_SETTID|CHILD_CLEARTID|SIGCHLD
      expect(sys('clone', [0x003d0f00n])).toBe(ALLOW) // pthread_create
      expect(sys('clone', [0x00004111n])).toBe(ALLOW) // vfork|VM|SIGCHLD (posix_spawn)
      expect(sys('clone', [0x80n])).toBe(ALLOW) // 0x80 in clone is the exit signal, not CLONE_NEWTIME
    })
    test("fcntl F_SETLEASE fails with EPERM (a lease holds the host git's open of the file); F_GETLEASE and locks are allowed", () => {
      expect(sys('fcntl', [3n, 1024n, 0n])).toBe(EPERM)
      expect(sys('fcntl', [3n, 1024n, 1n])).toBe(EPERM)
      expect(sys('fcntl', [3n, 1025n /* F_GETLEASE */])).toBe(ALLOW)
      expect(sys('fcntl', [3n, 6n /* F_SETLK */])).toBe(ALLOW)
    })
    test("watching for reads fails with EPERM (inotify's IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE; fanotify; dnotify): they told the session when the host's git began; watches for changes are allowed", () => {
      for (const mask of [0x1n, 0x20n, 0x10n, 0xfffn /* IN_ALL_EVENTS */, 0x100000020n]) expect(sys('inotify_add_watch', [3n, 0n, mask]), mask.toString(16)).toBe(EPERM)
      expect(sys('inotify_add_watch', [3n, 0n, 0xfc6n /* libuv's: attrib, modify, create, delete, moves, self */])).toBe(ALLOW)
      expect(sys('inotify_add_watch', [3n, 0n, 0x8n /* IN_CLOSE_WRITE */])).toBe(ALLOW)
      expect(sys('inotify_add_watch', [0x21n, 0x21n, 0x2n])).toBe(ALLOW) // the mask is the third argument
      expect(sys('fanotify_init', [0n, 0n])).toBe(EPERM)
      expect(sys('fcntl', [3n, 1026n /* F_NOTIFY */, 0x2n])).toBe(EPERM)
    })
    test('clone3 fails with ENOSYS, so that libc falls back to clone', () => {
      expect(sys('clone3')).toBe(ENOSYS)
    })
    test('unshare with a namespace flag (CLONE_NEWTIME included) fails; unshare of files or fs is allowed', () => {
      for (const flag of [0x80n, 0x00020000n, 0x10000000n, 0x40000000n]) expect(sys('unshare', [flag])).toBe(EPERM)
      expect(sys('unshare', [0x400n /* CLONE_FILES */])).toBe(ALLOW)
      expect(sys('unshare', [0x200n /* CLONE_FS */])).toBe(ALLOW)
    })
    test('setns, mount, umount2, chroot, pivot_root, the new mount API and the keyring fail with EPERM', () => {
      for (const name of ['setns', 'mount', 'umount2', 'chroot', 'pivot_root', 'open_tree', 'fsopen', 'mount_setattr', 'keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open'] as const) {
        expect(sys(name), name).toBe(EPERM)
      }
    })
    test('personality: Linux, Linux32, ADDR_NO_RANDOMIZE and the query are allowed; other personas and flags fail', () => {
      for (const p of [0n, 8n, 0x40000n, 0x40008n, 0xffffffffn]) expect(sys('personality', [p]), p.toString(16)).toBe(ALLOW)
      for (const p of [0x0400000n /* READ_IMPLIES_EXEC */, 0x0100000n /* MMAP_PAGE_ZERO */, 0x0020000n /* UNAME26 */, 0x6n /* PER_BSD */]) {
        expect(sys('personality', [p]), p.toString(16)).toBe(EPERM)
      }
    })
    test('fchmod, fchmodat and mknodat with the set-user-ID or set-group-ID bit fail with EPERM; other modes are allowed', () => {
      expect(sys('fchmod', [3n, 0o4755n])).toBe(EPERM)
      expect(sys('fchmod', [3n, 0o2775n])).toBe(EPERM)
      expect(sys('fchmod', [3n, 0o755n])).toBe(ALLOW)
      expect(sys('fchmod', [3n, 0o1777n])).toBe(ALLOW) // the sticky bit
      expect(sys('fchmodat', [-100n, 0n, 0o4755n])).toBe(EPERM)
      expect(sys('fchmodat', [0o4755n, 0o4755n, 0o644n])).toBe(ALLOW) // the mode is the third argument
      expect(sys('mknodat', [-100n, 0n, 0o104755n, 0n])).toBe(EPERM)
      expect(sys('mknodat', [-100n, 0n, 0o100644n, 0n])).toBe(ALLOW)
    })
    test('setting extended attributes (an ACL) fails with EOPNOTSUPP', () => {
      expect(sys('setxattr')).toBe(EOPNOTSUPP)
      expect(sys('fsetxattr')).toBe(EOPNOTSUPP)
    })
    test('sockets: unix, inet, inet6 and netlink are allowed; other families fail with EAFNOSUPPORT', () => {
      for (const family of [1n, 2n, 10n, 16n]) expect(sys('socket', [family, 1n, 0n])).toBe(ALLOW)
      for (const family of [17n /* PACKET */, 38n /* ALG */, 40n /* VSOCK */, 21n /* RDS */, 3n /* AX25 */]) {
        expect(sys('socket', [family, 1n, 0n])).toBe(EAFNOSUPPORT)
      }
    })
    test('ordinary syscalls, ptrace and process_vm_readv are allowed', () => {
      for (const name of ['read', 'ptrace', 'process_vm_readv'] as const) expect(sys(name), name).toBe(ALLOW)
    })
    test("io_uring fails with ENOSYS (its IORING_OP_SOCKET made an AF_VSOCK socket, which the network namespace does not confine: red team, round 93)", () => {
      for (const offset of [0, 1, 2]) expect(run(filter, { nr: NR[abi].io_uring_setup + offset, arch: ARCH[abi] }), String(offset)).toBe(ENOSYS)
    })
  })

  test('hard links fail with EXDEV, for every table (red team, round 134: a second name of a config let the host\'s git checkout . move its change time); with the --hard-links opt-in they are allowed, and every other rule stays', () => {
    const filter = seccompFilter(arch)
    const opted = seccompFilter(arch, { hardLinks: true })
    for (const abi of ABIS) {
      expect(run(filter, { nr: NR[abi].linkat, arch: ARCH[abi] }), abi).toBe(EXDEV)
      expect(run(opted, { nr: NR[abi].linkat, arch: ARCH[abi] }), abi).toBe(ALLOW)
      expect(run(opted, { nr: NR[abi].ioctl, arch: ARCH[abi], args: [1n, 0x5412n] })).toBe(EPERM)
    }
    // link itself, in the tables that have it (aarch64's has linkat only)
    for (const [abi, nr] of [['x86_64', 86], ['i386', 9], ['arm', 9]] as const) expect(run(filter, { nr, arch: ARCH[abi] }), abi).toBe(EXDEV)
  })

  test('with the --io-uring opt-in io_uring is allowed, for every table, and every other rule stays', () => {
    const opted = seccompFilter(arch, { ioUring: true })
    for (const abi of ABIS) for (const offset of [0, 1, 2]) expect(run(opted, { nr: NR[abi].io_uring_setup + offset, arch: ARCH[abi] }), `${abi} ${offset}`).toBe(ALLOW)
    for (const abi of ABIS) {
      expect(run(opted, { nr: NR[abi].socket, arch: ARCH[abi], args: [40n, 1n, 0n] })).toBe(EAFNOSUPPORT)
      expect(run(opted, { nr: NR[abi].ioctl, arch: ARCH[abi], args: [1n, 0x5412n] })).toBe(EPERM)
    }
    expect(run(opted, { nr: 102, arch: ARCH.i386, args: [1n, 0x1000n] })).toBe(EAFNOSUPPORT)
  })

  test("i386 socketcall: SOCKET and SOCKETPAIR fail with EAFNOSUPPORT whatever the family (it sits behind a pointer; round 93 made AF_VSOCK through it); its other calls are allowed", () => {
    const socketcall = (call: bigint): number => run(filter, { nr: 102, arch: ARCH.i386, args: [call, 0x1000n] })
    expect(socketcall(1n)).toBe(EAFNOSUPPORT)
    expect(socketcall(8n)).toBe(EAFNOSUPPORT)
    for (const call of [2n /* BIND */, 3n /* CONNECT */, 5n /* ACCEPT */, 9n /* SEND */, 16n /* SENDMSG */]) expect(socketcall(call), String(call)).toBe(ALLOW)
    expect(run(filter, { nr: 102, arch: ARCH.x86_64, args: [1n] })).toBe(ALLOW) // x86_64's 102 is getuid
  })

  test('x32 syscalls (bit 30 of the number) cannot bypass the rules: ENOSYS; the pseudo syscall -1 passes', () => {
    const x32 = (nr: number, args: bigint[] = []): number => run(filter, { nr: (0x40000000 | nr) >>> 0, arch: ARCH.x86_64, args })
    expect(x32(514, [1n, 0x5412n])).toBe(ENOSYS) // x32 ioctl
    expect(x32(16, [1n, 0x5412n])).toBe(ENOSYS)
    expect(x32(165)).toBe(ENOSYS) // mount
    expect(x32(0)).toBe(ENOSYS) // read
    expect(run(filter, { nr: 0xffffffff, arch: ARCH.x86_64 })).toBe(ALLOW)
  })

  test('an architecture none of the tables is for gets ENOSYS', () => {
    expect(run(filter, { nr: 0, arch: 0xc00000f3 /* riscv64 */ })).toBe(ENOSYS)
    expect(run(filter, { nr: 16, arch: 0 })).toBe(ENOSYS)
  })

  test('every rule, for every table, with the numbers of src/sandbox/seccomp.ts', () => {
    for (const abi of ABIS) {
      for (const rule of SECCOMP_RULES) {
        const failed = ERRNO_RESULT[rule.errno]
        for (const name of rule.syscalls) {
          const nr = SYSCALL_NUMBERS[name][abi]
          if (nr === undefined) continue
          /** The syscall with the rule's argument `argValue` and the others in `more` (by index), 0 elsewhere. */
          const sys = (argValue: bigint, more: Record<number, bigint> = {}): number => {
            const args = [0n, 0n, 0n, 0n, 0n, 0n]
            for (const [i, v] of Object.entries(more)) args[Number(i)] = v
            if (rule.when.kind !== 'always') args[rule.when.arg] = argValue
            return run(filter, { nr, arch: ARCH[abi], args })
          }
          const where = `${abi} ${name}`
          const when = rule.when
          if (when.kind === 'always') {
            expect(sys(0n), where).toBe(failed)
          } else if (when.kind === 'arg-in') {
            // With `unless`, another argument outside its values (9, SIGKILL) fails, one inside passes.
            const unless = when.unless
            const other: Record<number, bigint> = unless === undefined ? {} : { [unless.arg]: 9n }
            for (const v of when.values) {
              expect(sys(BigInt(v), other), where).toBe(failed)
              expect(sys(BigInt(v) | 0xdead00000000n, other), where).toBe(failed)
              for (const u of unless?.values ?? []) expect(sys(BigInt(v), { [unless?.arg ?? 0]: BigInt(u) }), `${where} unless ${u}`).toBe(ALLOW)
            }
            if (when.withBits !== undefined) {
              const { equals, arg, mask, value } = when.withBits
              const [hit, miss] = value === undefined ? [BigInt(mask) | 0x800n, 0x800n] : [BigInt(value), BigInt(value) + 1n]
              expect(sys(BigInt(equals), { [arg]: hit }), `${where} bits`).toBe(failed)
              expect(sys(BigInt(equals), { [arg]: miss }), `${where} no bits`).toBe(ALLOW)
            }
            for (const [from, upTo] of when.ranges ?? []) {
              for (const v of [from, upTo, from + 1]) expect(sys(BigInt(v) | 0xdead00000000n), `${where} ${v}`).toBe(failed)
              for (const v of [from - 1, upTo + 1]) expect(sys(BigInt(v)), `${where} ${v}`).toBe(ALLOW)
            }
            expect(sys(0x5401n), where).toBe(ALLOW)
          } else if (when.kind === 'arg-any-bit') {
            for (let bit = 0; bit < 32; bit++) {
              const v = 2 ** bit
              expect(sys(BigInt(v)), `${where} bit ${bit}`).toBe((when.mask & v) !== 0 ? failed : ALLOW)
            }
            if (when.alsoMasked !== undefined) {
              const { mask, equals } = when.alsoMasked
              expect(sys(BigInt(equals) | BigInt(~mask & 0x100)), `${where} masked`).toBe(failed)
              expect(sys(BigInt(equals - 1)), `${where} masked, another value`).toBe(ALLOW)
            }
          } else {
            for (const v of when.values) expect(sys(BigInt(v)), where).toBe(ALLOW)
            const outside = Math.max(...when.values.filter(v => v !== 0xffffffff)) + 1
            expect(sys(BigInt(outside)), where).toBe(failed)
          }
        }
      }
    }
  })
})

test('the aarch64 filter also filters x86_64 syscalls (x86_64 Node translated on an aarch64 kernel) and vice versa', () => {
  expect(run(seccompFilter('aarch64'), { nr: 16, arch: ARCH.x86_64, args: [1n, 0x5412n] })).toBe(EPERM)
  expect(run(seccompFilter('x86_64'), { nr: 29, arch: ARCH.aarch64, args: [1n, 0x5412n] })).toBe(EPERM)
  expect(SECCOMP_ABIS.x86_64[0]).toBe('x86_64')
  expect(SECCOMP_ABIS.aarch64[0]).toBe('aarch64')
})

test('the architecture values are the kernel AUDIT_ARCH_* constants', () => {
  expect(AUDIT_ARCH).toEqual(ARCH)
})

test('no syscall is in two rules (the first would silently win)', () => {
  const all = SECCOMP_RULES.flatMap(rule => rule.syscalls)
  expect(new Set(all).size).toBe(all.length)
  expect(all.length).toBe(Object.keys(SYSCALL_NUMBERS).length)
})

test('ptrace is not in any rule', () => {
  expect(SECCOMP_RULES.flatMap(rule => rule.syscalls)).not.toContain('ptrace')
})

// The numbers in src/sandbox/seccomp.ts against this machine's kernel headers, where present.
const HEADERS: [SeccompAbi, string][] = [
  ['x86_64', '/usr/include/x86_64-linux-gnu/asm/unistd_64.h'],
  ['i386', '/usr/include/x86_64-linux-gnu/asm/unistd_32.h'],
  ['aarch64', '/usr/include/asm-generic/unistd.h'],
]
describe.each(HEADERS)('%s numbers against %s', (abi, header) => {
  test.skipIf(!fs.existsSync(header))('match wherever the header defines the syscall', () => {
    const defined = new Map<string, number>()
    // asm-generic names some through __NR3264_ (fcntl: __NR_fcntl is __NR3264_fcntl on 64-bit).
    for (const m of fs.readFileSync(header, 'utf8').matchAll(/^#define __NR(?:3264)?_(\w+)\s+(\d+)\s*$/gm)) defined.set(m[1] ?? '', Number(m[2]))
    let compared = 0
    for (const [name, numbers] of Object.entries(SYSCALL_NUMBERS) as [SyscallName, Partial<Record<SeccompAbi, number>>][]) {
      const expected = defined.get(name)
      if (expected === undefined) {
        // Newer than the header (e.g. open_tree_attr, 6.15) or absent from the table.
        if (numbers[abi] !== undefined) expect(numbers[abi], name).toBeGreaterThanOrEqual(424)
        continue
      }
      expect(numbers[abi], name).toBe(expected)
      compared++
    }
    expect(compared).toBeGreaterThan(40)
  })
})

test('the rules are described for --check', () => {
  const lines = describeSeccompRules()
  expect(lines.length).toBe(SECCOMP_RULES.length + 1)
  expect(lines[0]).toMatch(/TIOCSTI.*: EPERM$/)
  expect(lines.join('\n')).toMatch(/clone3: ENOSYS/)
  expect(lines.join('\n')).toMatch(/x32 syscalls: ENOSYS/)
})

test('host architecture mapping', () => {
  expect(hostSeccompArch('x64')).toBe('x86_64')
  expect(hostSeccompArch('arm64')).toBe('aarch64')
  expect(hostSeccompArch('ia32')).toBeUndefined()
  expect(hostSeccompArch('riscv64')).toBeUndefined()
})
