// The seccomp filter passed to `bwrap --seccomp FD`: a classic BPF program generated here (no
// native build step), for x86_64 and aarch64. Pure: returns bytes.
//
// What it stops, and why (policy after flatpak's setup_seccomp, trimmed to what an agent that
// runs compilers, git, node and python never needs):
// - ioctl(TIOCSTI) and ioctl(TIOCLINUX): pushing keystrokes into the user's terminal
//   (CVE-2017-5226). Only the low 32 bits of the request are compared, because the kernel
//   truncates it to 32 bits (CVE-2019-10063: a request with high bits set slipped past filters
//   that compared all 64). bwrap's --new-session would also stop TIOCSTI but breaks window-size
//   delivery to Claude's UI (bubblewrap#573), so the terminal stays shared and this filter guards it.
// - Undoing the sandbox: mount and the new mount API, pivot_root, chroot, unshare, setns, clone
//   with a namespace flag, and clone3 (its flags sit in a struct a filter cannot read, so it fails
//   with ENOSYS and glibc falls back to clone, as flatpak does).
// - The kernel keyring (add_key, keyctl, request_key): not namespaced, shared with the host user.
// - Kernel-wide operations: modules, kexec, bpf, perf_event_open, userfaultfd, syslog, acct,
//   quotactl, swap, reboot, open_by_handle_at (the "shocker" container escape), iopl/ioperm.
// ptrace stays allowed: the sandbox has its own pid namespace, so only its own processes can be
// traced, and gdb/strace must keep working.
// Other ABIs (i386 and x32 on x86_64, arm32 on aarch64) are refused as a whole with ENOSYS: their
// syscall numbers differ, and a filter that only knew the native ones would let them through.

export type SeccompArch = 'x86_64' | 'aarch64'

const AUDIT_ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7 } as const
/** x32 syscalls are x86_64 syscalls with this bit set in their number. */
const X32_SYSCALL_BIT = 0x40000000

const EPERM = 1
const ENOSYS = 38
const RET_ALLOW = 0x7fff0000
const retErrno = (errno: number): number => 0x00050000 | errno

const TIOCSTI = 0x5412
const TIOCLINUX = 0x541c
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (clone's low byte is the exit signal). */
const CLONE_NAMESPACE_FLAGS = 0x7e020000

/** Syscall numbers: x86_64 from asm/unistd_64.h, aarch64 from asm-generic/unistd.h. */
const SYSCALLS: Readonly<Record<string, Readonly<Record<SeccompArch, number | undefined>>>> = {
  ioctl: { x86_64: 16, aarch64: 29 },
  clone: { x86_64: 56, aarch64: 220 },
  clone3: { x86_64: 435, aarch64: 435 },
  unshare: { x86_64: 272, aarch64: 97 },
  setns: { x86_64: 308, aarch64: 268 },
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  chroot: { x86_64: 161, aarch64: 51 },
  open_tree: { x86_64: 428, aarch64: 428 },
  move_mount: { x86_64: 429, aarch64: 429 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  keyctl: { x86_64: 250, aarch64: 219 },
  syslog: { x86_64: 103, aarch64: 116 },
  uselib: { x86_64: 134, aarch64: undefined },
  acct: { x86_64: 163, aarch64: 89 },
  quotactl: { x86_64: 179, aarch64: 60 },
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  bpf: { x86_64: 321, aarch64: 280 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  open_by_handle_at: { x86_64: 304, aarch64: 265 },
  swapon: { x86_64: 167, aarch64: 224 },
  swapoff: { x86_64: 168, aarch64: 225 },
  reboot: { x86_64: 169, aarch64: 142 },
  iopl: { x86_64: 172, aarch64: undefined },
  ioperm: { x86_64: 173, aarch64: undefined },
  lookup_dcookie: { x86_64: 212, aarch64: 18 },
}

/** Refused outright with EPERM. */
const DENIED = [
  'unshare', 'setns', 'mount', 'umount2', 'pivot_root', 'chroot',
  'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr',
  'add_key', 'request_key', 'keyctl',
  'syslog', 'uselib', 'acct', 'quotactl', 'kexec_load', 'kexec_file_load',
  'init_module', 'finit_module', 'delete_module', 'bpf', 'userfaultfd', 'perf_event_open',
  'open_by_handle_at', 'swapon', 'swapoff', 'reboot', 'iopl', 'ioperm', 'lookup_dcookie',
] as const

/** Human-readable rules, for --check and the README. */
export const SECCOMP_RULES: readonly string[] = [
  'ioctl TIOCSTI/TIOCLINUX (low 32 bits of the request): EPERM',
  'clone with a namespace flag: EPERM; clone3: ENOSYS',
  `${DENIED.join(', ')}: EPERM`,
  'other ABIs (i386, x32, arm32): ENOSYS',
]

export function hostSeccompArch(nodeArch: string): SeccompArch | undefined {
  return nodeArch === 'x64' ? 'x86_64' : nodeArch === 'arm64' ? 'aarch64' : undefined
}

// Classic BPF opcodes and the layout of struct seccomp_data (little-endian).
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGE_K = 0x35
const JSET_K = 0x45
const RET_K = 0x06
const JA = 0x05
const OFFSET_NR = 0
const OFFSET_ARCH = 4
/** Low 32 bits of syscall argument i (little-endian u64 at 16 + 8i). */
const argLow = (i: number): number => 16 + 8 * i

interface Insn {
  code: number
  jt: number
  jf: number
  k: number
}

const ld = (offset: number): Insn => ({ code: LD_W_ABS, jt: 0, jf: 0, k: offset })
const ret = (k: number): Insn => ({ code: RET_K, jt: 0, jf: 0, k })
const jump = (code: number, k: number, jt: number, jf: number): Insn => ({ code, jt, jf, k })

export function seccompFilter(arch: SeccompArch): Buffer {
  const nr = (name: string): number | undefined => SYSCALLS[name]?.[arch]
  const program: Insn[] = [
    ld(OFFSET_ARCH),
    jump(JEQ_K, AUDIT_ARCH[arch], 1, 0),
    ret(retErrno(ENOSYS)), // another ABI
    ld(OFFSET_NR),
  ]
  if (arch === 'x86_64') program.push(jump(JGE_K, X32_SYSCALL_BIT, 0, 1), ret(retErrno(ENOSYS)))

  // ioctl: the request's low 32 bits against TIOCSTI and TIOCLINUX, then back to the number.
  program.push(
    jump(JEQ_K, nr('ioctl') as number, 0, 5),
    ld(argLow(1)),
    jump(JEQ_K, TIOCSTI, 2, 0),
    jump(JEQ_K, TIOCLINUX, 1, 0),
    { code: JA, jt: 0, jf: 0, k: 1 }, // neither: skip the return
    ret(retErrno(EPERM)),
    ld(OFFSET_NR),
  )
  // clone: the flags (argument 0) must not ask for a new namespace.
  program.push(jump(JEQ_K, nr('clone') as number, 0, 4), ld(argLow(0)), jump(JSET_K, CLONE_NAMESPACE_FLAGS, 0, 1), ret(retErrno(EPERM)), ld(OFFSET_NR))
  program.push(jump(JEQ_K, nr('clone3') as number, 0, 1), ret(retErrno(ENOSYS)))
  for (const name of DENIED) {
    const number = nr(name)
    if (number !== undefined) program.push(jump(JEQ_K, number, 0, 1), ret(retErrno(EPERM)))
  }
  program.push(ret(RET_ALLOW))
  return encode(program)
}

function encode(program: readonly Insn[]): Buffer {
  const buffer = Buffer.alloc(program.length * 8)
  program.forEach((insn, i) => {
    buffer.writeUInt16LE(insn.code, i * 8)
    buffer.writeUInt8(insn.jt, i * 8 + 2)
    buffer.writeUInt8(insn.jf, i * 8 + 3)
    buffer.writeUInt32LE(insn.k >>> 0, i * 8 + 4)
  })
  return buffer
}
