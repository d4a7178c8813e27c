// The seccomp filter passed to `bwrap --seccomp FD`: a classic BPF program (struct sock_filter
// {u16 code; u8 jt; u8 jf; u32 k}, little-endian) generated here, so there is no native build step
// and no libseccomp. Pure: rules in, bytes out.
//
// Policy: flatpak's setup_seccomp (common/flatpak-run.c), trimmed to what an agent that runs
// compilers, git, node and python never needs. The default is ALLOW; the rules (SECCOMP_RULES,
// exported for --check and the docs) make selected calls fail with an errno, the way a kernel
// without them or without the privilege would, so well-behaved programs fall back, not crash.
//
// Deliberately allowed:
// - ptrace (flatpak blocks it outside --devel). The sandbox has its own pid namespace, so only the
//   sandbox's own processes are visible and traceable; gdb, strace and debuggers of the agent's
//   own test programs must keep working. process_vm_readv/writev and pidfd_getfd are the same
//   power over the same processes and stay allowed for the same reason.
// - personality(ADDR_NO_RANDOMIZE): gdb disables ASLR of the inferior with it.
//
// Refused since red team round 93: io_uring. Its IORING_OP_SOCKET makes a socket of any family
// without socket(), and AF_VSOCK is not confined by the network namespace: a session of
// --network=none listened on the machine's own vsock port space, and on a virtual machine (cloud
// VMs, WSL2, Firecracker) could reach the hypervisor's side. Everything that uses io_uring falls
// back when it is missing (libuv, glib, tokio), as Docker's and ChromeOS's default profiles expect.
// Its SETXATTR had likewise bypassed the extended-attribute rule. A project that builds io_uring
// code opts in with --io-uring ("ioUring": true), which gives back both ways.
//
// Refused since red team round 134: hard links (link, linkat), with EXDEV, what two paths on two
// file systems get. A second name for a file lets the session write it in place through one name
// while the host's git later removes the other, which moves the file's change time to the host's:
// the nested-repository rules could then not tell the session's config from the user's. A project
// whose tools need them opts in with --hard-links ("hardLinks": true).
//
// Architectures (ABIs). A process can enter the kernel through more than one syscall table:
// x86_64 also has i386 (`int 0x80`, 32-bit programs) and x32 (x86_64 numbers with bit 30 set);
// aarch64 also has arm32 (compat) on CPUs that implement it. Each table numbers the syscalls
// differently, so the program first dispatches on seccomp_data.arch and then applies the same
// rules with that table's numbers:
// - x86_64, i386, aarch64 and arm32 get the full rule set with their own numbers. 32-bit programs
//   keep working; they are filtered, not refused. i386's socketcall() multiplexer hides its
//   arguments behind a pointer, so its SOCKET and SOCKETPAIR calls are refused whatever the family
//   (EAFNOSUPPORT; round 93 made an AF_VSOCK socket through it): a 32-bit program whose C library
//   makes sockets that way (glibc built for kernels before 4.3) gets none inside; direct socket()
//   (359) is filtered like the 64-bit one.
// - x32 is refused as a whole (ENOSYS, what a kernel without x32 support answers): nothing an
//   agent runs uses it, and applying the rules to it would need yet another table. The pseudo
//   syscall -1 (a tracer skipping a syscall) is let through, as libseccomp does.
// - Every filter carries all four tables, whichever architecture it is generated for (the
//   argument only decides which table is tried first). So a Node for x86_64 running translated on
//   an aarch64 kernel (Rosetta, qemu-user), whose syscalls reach the kernel as aarch64 ones, is
//   still filtered instead of having every syscall fail.
// - Any other architecture value: ENOSYS.
//
// Arguments: seccomp_data.args are u64; every comparison here reads only the low 32 bits, which is
// exactly what the kernel uses for these arguments (ioctl's cmd, clone's and unshare's flags,
// personality, socket's family are all truncated to 32 bits). Comparing 64 bits was the
// CVE-2019-10063 bypass of TIOCSTI filters: a request with high bits set passed the filter and
// was still TIOCSTI to the kernel.
//
// bwrap 0.8.0 installs the program as the last step before execve (after its mounts, its
// --disable-userns setup and dropping capabilities), and also on its own pid 1 in the sandbox, so
// the filter never gets in bwrap's way and the sandbox cannot ptrace pid 1 to run unfiltered.

export type SeccompArch = 'x86_64' | 'aarch64'
/** The syscall tables a filter distinguishes, by seccomp_data.arch. */
export type SeccompAbi = 'x86_64' | 'i386' | 'aarch64' | 'arm'

/** AUDIT_ARCH_* values from linux/audit.h, as they appear in seccomp_data.arch. */
export const AUDIT_ARCH: Readonly<Record<SeccompAbi, number>> = {
  x86_64: 0xc000003e,
  i386: 0x40000003,
  aarch64: 0xc00000b7,
  arm: 0x40000028,
}

/** The order in which a filter generated for an architecture tries the tables: native first. */
export const SECCOMP_ABIS: Readonly<Record<SeccompArch, readonly SeccompAbi[]>> = {
  x86_64: ['x86_64', 'i386', 'aarch64', 'arm'],
  aarch64: ['aarch64', 'arm', 'x86_64', 'i386'],
}

/** x32 syscalls are x86_64-arch syscalls with this bit set in their number. */
export const X32_SYSCALL_BIT = 0x40000000

export type SyscallName =
  | 'ioctl' | 'clone' | 'clone3' | 'unshare' | 'setns'
  | 'mount' | 'umount' | 'umount2' | 'pivot_root' | 'chroot'
  | 'open_tree' | 'open_tree_attr' | 'move_mount' | 'fsopen' | 'fsconfig' | 'fsmount' | 'fspick' | 'mount_setattr'
  | 'add_key' | 'request_key' | 'keyctl'
  | 'syslog' | 'uselib' | 'acct' | 'quotactl' | 'quotactl_fd' | 'kexec_load' | 'kexec_file_load'
  | 'init_module' | 'finit_module' | 'delete_module' | 'bpf' | 'userfaultfd' | 'perf_event_open'
  | 'open_by_handle_at' | 'swapon' | 'swapoff' | 'reboot' | 'iopl' | 'ioperm' | 'modify_ldt' | 'lookup_dcookie'
  | 'move_pages' | 'migrate_pages' | 'mbind' | 'get_mempolicy' | 'set_mempolicy' | 'set_mempolicy_home_node'
  | 'personality' | 'socket' | 'socketpair' | 'socketcall' | 'io_uring_setup' | 'io_uring_enter' | 'io_uring_register'
  | 'chmod' | 'fchmod' | 'fchmodat' | 'fchmodat2' | 'creat' | 'mknod' | 'mknodat'
  | 'setxattr' | 'lsetxattr' | 'fsetxattr' | 'setxattrat'
  | 'kill' | 'fcntl' | 'fcntl64' | 'prctl' | 'inotify_add_watch' | 'fanotify_init'
  | 'link' | 'linkat'

/**
 * Syscall numbers per table. x86_64 and i386 from asm/unistd_64.h and unistd_32.h, aarch64 from
 * asm-generic/unistd.h, arm from arch/arm/tools/syscall.tbl (EABI, which is what aarch64's compat
 * layer implements). Absent: the table has no such syscall. Since 424 all tables share numbers.
 */
export const SYSCALL_NUMBERS: Readonly<Record<SyscallName, Readonly<Partial<Record<SeccompAbi, number>>>>> = {
  ioctl: { x86_64: 16, i386: 54, aarch64: 29, arm: 54 },
  clone: { x86_64: 56, i386: 120, aarch64: 220, arm: 120 },
  clone3: { x86_64: 435, i386: 435, aarch64: 435, arm: 435 },
  unshare: { x86_64: 272, i386: 310, aarch64: 97, arm: 337 },
  setns: { x86_64: 308, i386: 346, aarch64: 268, arm: 375 },
  mount: { x86_64: 165, i386: 21, aarch64: 40, arm: 21 },
  umount: { i386: 22 },
  umount2: { x86_64: 166, i386: 52, aarch64: 39, arm: 52 },
  pivot_root: { x86_64: 155, i386: 217, aarch64: 41, arm: 218 },
  chroot: { x86_64: 161, i386: 61, aarch64: 51, arm: 61 },
  open_tree: { x86_64: 428, i386: 428, aarch64: 428, arm: 428 },
  move_mount: { x86_64: 429, i386: 429, aarch64: 429, arm: 429 },
  fsopen: { x86_64: 430, i386: 430, aarch64: 430, arm: 430 },
  fsconfig: { x86_64: 431, i386: 431, aarch64: 431, arm: 431 },
  fsmount: { x86_64: 432, i386: 432, aarch64: 432, arm: 432 },
  fspick: { x86_64: 433, i386: 433, aarch64: 433, arm: 433 },
  mount_setattr: { x86_64: 442, i386: 442, aarch64: 442, arm: 442 },
  open_tree_attr: { x86_64: 467, i386: 467, aarch64: 467, arm: 467 },
  add_key: { x86_64: 248, i386: 286, aarch64: 217, arm: 309 },
  request_key: { x86_64: 249, i386: 287, aarch64: 218, arm: 310 },
  keyctl: { x86_64: 250, i386: 288, aarch64: 219, arm: 311 },
  syslog: { x86_64: 103, i386: 103, aarch64: 116, arm: 103 },
  uselib: { x86_64: 134, i386: 86, arm: 86 },
  acct: { x86_64: 163, i386: 51, aarch64: 89, arm: 51 },
  quotactl: { x86_64: 179, i386: 131, aarch64: 60, arm: 131 },
  quotactl_fd: { x86_64: 443, i386: 443, aarch64: 443, arm: 443 },
  kexec_load: { x86_64: 246, i386: 283, aarch64: 104, arm: 347 },
  kexec_file_load: { x86_64: 320, aarch64: 294, arm: 401 },
  init_module: { x86_64: 175, i386: 128, aarch64: 105, arm: 128 },
  finit_module: { x86_64: 313, i386: 350, aarch64: 273, arm: 379 },
  delete_module: { x86_64: 176, i386: 129, aarch64: 106, arm: 129 },
  bpf: { x86_64: 321, i386: 357, aarch64: 280, arm: 386 },
  userfaultfd: { x86_64: 323, i386: 374, aarch64: 282, arm: 388 },
  perf_event_open: { x86_64: 298, i386: 336, aarch64: 241, arm: 364 },
  open_by_handle_at: { x86_64: 304, i386: 342, aarch64: 265, arm: 371 },
  swapon: { x86_64: 167, i386: 87, aarch64: 224, arm: 87 },
  swapoff: { x86_64: 168, i386: 115, aarch64: 225, arm: 115 },
  reboot: { x86_64: 169, i386: 88, aarch64: 142, arm: 88 },
  iopl: { x86_64: 172, i386: 110 },
  ioperm: { x86_64: 173, i386: 101 },
  modify_ldt: { x86_64: 154, i386: 123 },
  lookup_dcookie: { x86_64: 212, i386: 253, aarch64: 18, arm: 249 },
  move_pages: { x86_64: 279, i386: 317, aarch64: 239, arm: 344 },
  migrate_pages: { x86_64: 256, i386: 294, aarch64: 238, arm: 400 },
  mbind: { x86_64: 237, i386: 274, aarch64: 235, arm: 319 },
  get_mempolicy: { x86_64: 239, i386: 275, aarch64: 236, arm: 320 },
  set_mempolicy: { x86_64: 238, i386: 276, aarch64: 237, arm: 321 },
  set_mempolicy_home_node: { x86_64: 450, i386: 450, aarch64: 450, arm: 450 },
  personality: { x86_64: 135, i386: 136, aarch64: 92, arm: 136 },
  kill: { x86_64: 62, i386: 37, aarch64: 129, arm: 37 },
  fcntl: { x86_64: 72, i386: 55, aarch64: 25, arm: 55 },
  fcntl64: { i386: 221, arm: 221 },
  prctl: { x86_64: 157, i386: 172, aarch64: 167, arm: 172 },
  inotify_add_watch: { x86_64: 254, i386: 292, aarch64: 27, arm: 317 },
  fanotify_init: { x86_64: 300, i386: 338, aarch64: 262, arm: 367 },
  socket: { x86_64: 41, i386: 359, aarch64: 198, arm: 281 },
  socketpair: { x86_64: 53, i386: 360, aarch64: 199, arm: 288 },
  /** Only i386 has it among these tables (arm's is OABI, which aarch64's compat layer does not run). */
  socketcall: { i386: 102 },
  io_uring_setup: { x86_64: 425, i386: 425, aarch64: 425, arm: 425 },
  io_uring_enter: { x86_64: 426, i386: 426, aarch64: 426, arm: 426 },
  io_uring_register: { x86_64: 427, i386: 427, aarch64: 427, arm: 427 },
  chmod: { x86_64: 90, i386: 15, arm: 15 },
  fchmod: { x86_64: 91, i386: 94, aarch64: 52, arm: 94 },
  fchmodat: { x86_64: 268, i386: 306, aarch64: 53, arm: 333 },
  fchmodat2: { x86_64: 452, i386: 452, aarch64: 452, arm: 452 },
  creat: { x86_64: 85, i386: 8, arm: 8 },
  mknod: { x86_64: 133, i386: 14, arm: 14 },
  mknodat: { x86_64: 259, i386: 297, aarch64: 33, arm: 324 },
  setxattr: { x86_64: 188, i386: 226, aarch64: 5, arm: 226 },
  lsetxattr: { x86_64: 189, i386: 227, aarch64: 6, arm: 227 },
  fsetxattr: { x86_64: 190, i386: 228, aarch64: 7, arm: 228 },
  setxattrat: { x86_64: 463, i386: 463, aarch64: 463, arm: 463 },
  link: { x86_64: 86, i386: 9, arm: 9 },
  linkat: { x86_64: 265, i386: 303, aarch64: 37, arm: 330 },
}

export const ERRNO = { EPERM: 1, EXDEV: 18, ENOSYS: 38, EOPNOTSUPP: 95, EAFNOSUPPORT: 97 } as const
export type SeccompErrno = keyof typeof ERRNO

/** When a rule's syscall fails. Arguments are compared on their low 32 bits. */
export type SeccompCondition =
  | { kind: 'always' }
  | {
      kind: 'arg-in'
      arg: number
      values: readonly number[]
      /** Values from..to (both in) fail too. */
      ranges?: readonly (readonly [from: number, to: number])[]
      /** A value in `values` passes after all when argument `arg` is one of these. */
      unless?: { arg: number; values: readonly number[] }
      /** The value `equals` fails too when argument `arg` has any bit of `mask` set, or (with `value`) is `value`. */
      withBits?: { equals: number; arg: number; mask: number; value?: number }
    }
  | { kind: 'arg-not-in'; arg: number; values: readonly number[] }
  | { kind: 'arg-any-bit'; arg: number; mask: number; /** Fails too when (argument & mask) equals `equals`. */ alsoMasked?: { mask: number; equals: number } }

export interface SeccompRule {
  syscalls: readonly SyscallName[]
  when: SeccompCondition
  errno: SeccompErrno
  /** One line for --check and the README. */
  summary: string
  why: string
}

const TIOCSTI = 0x5412
const TIOCLINUX = 0x541c
const TIOCSPGRP = 0x5410
const TCXONC = 0x540a
const TIOCSETD = 0x5423
const TIOCEXCL = 0x540c
const FIOASYNC = 0x5452
const F_SETFL = 4
const F_SETSIG = 10
const F_SETLEASE = 1024
const F_NOTIFY = 1026
/** inotify's events of reading: IN_ACCESS, IN_CLOSE_NOWRITE, IN_OPEN. */
const IN_READ_EVENTS = 0x01 | 0x10 | 0x20
/** The same bit on x86_64, i386, aarch64 and arm (FASYNC, 020000). */
const O_ASYNC = 0x2000
/** The same numbers on x86_64, i386, aarch64 and arm. */
const SIGCONT = 18
const SIGTSTP = 20
const PR_SET_PDEATHSIG = 1
/** clone()'s low byte: the signal its parent gets at the child's exit. */
const CSIGNAL = 0xff
/**
 * A Linux virtual console's own requests (KD*, PIO_*, GIO_*; VT_*): its owner may stop its text
 * (KDSETMODE), its keyboard (KDSKBMODE), its font and colours, or switch consoles (round 75). On a
 * pseudo-terminal they fail anyway.
 */
const CONSOLE_KD = [0x4b00, 0x4bff] as const
const CONSOLE_VT = [0x5600, 0x56ff] as const
const CLONE_NEWTIME = 0x00000080
const CLONE_NEWNS = 0x00020000
const CLONE_NEWCGROUP = 0x02000000
const CLONE_NEWUTS = 0x04000000
const CLONE_NEWIPC = 0x08000000
const CLONE_NEWUSER = 0x10000000
const CLONE_NEWPID = 0x20000000
const CLONE_NEWNET = 0x40000000
/** clone()'s low byte is the exit signal (CSIGNAL), so CLONE_NEWTIME only exists for unshare and clone3. */
const CLONE_NAMESPACES = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
const UNSHARE_NAMESPACES = CLONE_NAMESPACES | CLONE_NEWTIME
const PER_LINUX = 0x0000
const PER_LINUX32 = 0x0008
const ADDR_NO_RANDOMIZE = 0x0040000
const PERSONALITY_QUERY = 0xffffffff
const AF_UNSPEC = 0
const AF_UNIX = 1
const AF_INET = 2
const AF_INET6 = 10
const AF_NETLINK = 16
/** socketcall()'s calls that make a socket (linux/net.h). */
const SYS_SOCKET = 1
const SYS_SOCKETPAIR = 8
const S_ISUID = 0o4000
const S_ISGID = 0o2000
const SETID_WHY =
  "the bit stays on the host file, which the user owns (root owns it when claudebox runs as root): any other local user who runs it acts as the user; nosuid holds only inside the sandbox (red team, round 61). Opening with O_CREAT keeps its mode, but the kernel clears the bits at the file's first write"

/** Left out with the --io-uring opt-in (seccompFilter). */
const IO_URING_RULE: SeccompRule = {
  syscalls: ['io_uring_setup', 'io_uring_enter', 'io_uring_register'],
  when: { kind: 'always' },
  errno: 'ENOSYS',
  summary: 'io_uring (io_uring_setup, io_uring_enter, io_uring_register; --io-uring lets it through)',
  why: "its operations make sockets of any family and set extended attributes without the syscalls above: an AF_VSOCK socket through IORING_OP_SOCKET left the network namespace (red team, round 93); the answer is a kernel's without io_uring, on which libuv, glib and tokio fall back, as under Docker's default profile",
}

/** Left out with the --hard-links opt-in (seccompFilter). */
const HARD_LINK_RULE: SeccompRule = {
  syscalls: ['link', 'linkat'],
  when: { kind: 'always' },
  errno: 'EXDEV',
  summary: 'hard links (link, linkat; --hard-links lets them through)',
  why: "a second name for a file of yours lets the session change it in place, and your own git then moves the file's change time out of the session's: git checkout . of a tracked file the session had made a hard link of a nested repository's config deletes that name, and the config keeps what the session wrote, with your time on it (red team, round 134: the gitlink watch then took the repository for yours, and your git status at the top ran its fsmonitor). The answer is the one for two paths on different file systems, on which git (objects), cargo, ccache and pnpm copy or rename instead",
}

export const SECCOMP_RULES: readonly SeccompRule[] = [
  {
    syscalls: ['ioctl'],
    when: { kind: 'arg-in', arg: 1, values: [TIOCSTI, TIOCLINUX, TIOCSPGRP, TCXONC, TIOCSETD, TIOCEXCL, FIOASYNC], ranges: [CONSOLE_KD, CONSOLE_VT] },
    errno: 'EPERM',
    summary: 'ioctl TIOCSTI, TIOCLINUX, TIOCSPGRP (tcsetpgrp), TCXONC (tcflow), TIOCSETD (the line discipline), TIOCEXCL, FIOASYNC and a virtual console\'s (0x4B00-0x4BFF, 0x5600-0x56FF) (low 32 bits of the request)',
    why: "pushing keystrokes into the user's terminal (CVE-2017-5226; TIOCLINUX on a virtual console, CVE-2023-28100), taking its foreground from the launcher (with TOSTOP set, the launcher's warnings after the session then stopped it, or failed) or suspending its output (they hung): red team, round 73; or swapping its line discipline (N_NULL: every write after failed, the launcher aborted and the user's shell hung; round 74, where ldisc_autoload is on it also loads kernel modules); making it exclusive (the user's sudo and ssh prompts then failed with EBUSY after the session) or signal-driven (FIOASYNC, see fcntl below; round 76); an interactive shell inside has no job control. The terminal stays shared because --new-session would stop window-size changes (bubblewrap#573)",
  },
  {
    syscalls: ['kill'],
    when: { kind: 'arg-in', arg: 0, values: [0], unless: { arg: 1, values: [0, SIGTSTP, SIGCONT] } },
    errno: 'EPERM',
    summary: 'kill of its own process group (pid 0) with a signal other than SIGTSTP and SIGCONT',
    why: "the sandbox shares the launcher's process group (its own would need the terminal's foreground, and --new-session stops window-size changes), and a pid namespace does not stop kill(0): it killed the launcher before the checks at the session's end (red team, round 75), and SIGUSR1 opened Node's inspector in it (round 76). Claude Code suspends itself (Ctrl-Z) with kill(0, SIGTSTP), which the launcher handles (run.ts); kill -1 and a pid of the sandbox's own still work",
  },
  {
    syscalls: ['prctl'],
    when: { kind: 'arg-in', arg: 0, values: [], withBits: { equals: PR_SET_PDEATHSIG, arg: 1, mask: 0, value: SIGCONT } },
    errno: 'EPERM',
    summary: 'prctl PR_SET_PDEATHSIG with SIGCONT',
    why: "the death of a parent that sends its child SIGCONT resumed a sandbox claudebox had stopped, the parent killed by its own alarm (red team, round 79); other death signals stay",
  },
  {
    syscalls: ['fcntl', 'fcntl64'],
    when: { kind: 'arg-in', arg: 1, values: [F_SETSIG, F_SETLEASE, F_NOTIFY], withBits: { equals: F_SETFL, arg: 2, mask: O_ASYNC } },
    errno: 'EPERM',
    summary: 'fcntl F_SETSIG, F_SETLEASE, F_NOTIFY (dnotify), and F_SETFL with O_ASYNC',
    why: "signal-driven I/O on the shared terminal signals its foreground process group, the launcher's (the kernel makes it the owner): the terminal's answer to a query sent SIGIO, or with F_SETSIG any signal, SIGKILL, SIGSTOP or SIGUSR1 (Node's inspector, reachable with --network=open), without a key pressed (red team, round 76). A lease holds every open of its file for up to 45 s and tells its holder: one on .git/HEAD held the host's git status at the start of its search while the session planted .git/commondir, then let it go on to run what that named (round 82); file servers (Samba, NFS) take leases, nothing an agent runs does",
  },
  {
    syscalls: ['inotify_add_watch'],
    when: { kind: 'arg-any-bit', arg: 2, mask: IN_READ_EVENTS },
    errno: 'EPERM',
    summary: 'inotify watches for reads (IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE), fanotify_init, and dnotify (fcntl F_NOTIFY, above)',
    why: "a file's events reach every watcher of it, also those of reads by the host's programs: IN_OPEN on /usr/bin/git and on .git/HEAD told the session the moment the host's git status began, and a .git/commondir planted then was read by that git before the git watch could move it aside (red team, round 83: 11 of 25 as root); fanotify and dnotify (DN_ACCESS) tell the same. Watches for changes (what fs.watch, chokidar, watchman and editors use) stay allowed; a watcher that asks for opens too (Python's watchdog since 3.0, inotifywait without -e) fails with EPERM",
  },
  {
    syscalls: ['fanotify_init'],
    when: { kind: 'always' },
    errno: 'EPERM',
    summary: 'fanotify_init',
    why: 'as for inotify: its events of reading tell the session when the host reads a file (round 83); without CAP_SYS_ADMIN a kernel before 5.13 answers EPERM too',
  },
  {
    syscalls: ['clone'],
    when: { kind: 'arg-any-bit', arg: 0, mask: CLONE_NAMESPACES, alsoMasked: { mask: CSIGNAL, equals: SIGCONT } },
    errno: 'EPERM',
    summary: 'clone with a namespace flag (NEWNS, NEWUSER, NEWPID, NEWNET, NEWUTS, NEWIPC, NEWCGROUP), or SIGCONT as the exit signal',
    why: "new namespaces are how a sandbox is undone from inside; fork and threads stay allowed. A child's exit that sends its parent SIGCONT resumed a sandbox claudebox had stopped (red team, round 79: the kernel's SIGCONT undoes SIGSTOP whoever asked for it)",
  },
  {
    syscalls: ['unshare'],
    when: { kind: 'arg-any-bit', arg: 0, mask: UNSHARE_NAMESPACES },
    errno: 'EPERM',
    summary: 'unshare with a namespace flag (the clone ones and NEWTIME)',
    why: 'as for clone; unshare of files or fs state stays allowed',
  },
  {
    syscalls: ['clone3'],
    when: { kind: 'always' },
    errno: 'ENOSYS',
    summary: 'clone3',
    why: 'its flags sit in a struct a filter cannot read; ENOSYS makes glibc and others fall back to clone, which is checked (as flatpak does)',
  },
  {
    syscalls: ['setns', 'mount', 'umount', 'umount2', 'pivot_root', 'chroot', 'open_tree', 'open_tree_attr', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr'],
    when: { kind: 'always' },
    errno: 'EPERM',
    summary: 'setns, mount, umount, umount2, pivot_root, chroot and the new mount API',
    why: 'rearranging the filesystem view or joining other namespaces undoes the sandbox',
  },
  {
    syscalls: ['add_key', 'request_key', 'keyctl'],
    when: { kind: 'always' },
    errno: 'EPERM',
    summary: 'the kernel keyring (add_key, request_key, keyctl)',
    why: "keyrings are not namespaced: the user's session keyring holds host secrets",
  },
  {
    syscalls: [
      'syslog', 'uselib', 'acct', 'quotactl', 'quotactl_fd', 'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module',
      'bpf', 'userfaultfd', 'perf_event_open', 'open_by_handle_at', 'swapon', 'swapoff', 'reboot', 'iopl', 'ioperm', 'modify_ldt', 'lookup_dcookie',
    ],
    when: { kind: 'always' },
    errno: 'EPERM',
    summary: 'kernel-wide operations: syslog, modules, kexec, bpf, perf_event_open, userfaultfd, acct, quotas, swap, reboot, open_by_handle_at, iopl/ioperm, modify_ldt, uselib, lookup_dcookie',
    why: 'none is needed to build or run software; most are privileged anyway, and bpf, perf_event_open, userfaultfd and modify_ldt are large kernel attack surface (perf: profile from outside, as flatpak expects)',
  },
  {
    syscalls: ['move_pages', 'migrate_pages', 'mbind', 'get_mempolicy', 'set_mempolicy', 'set_mempolicy_home_node'],
    when: { kind: 'always' },
    errno: 'EPERM',
    summary: 'NUMA memory-policy calls (mbind, get/set_mempolicy, move_pages, migrate_pages)',
    why: 'flatpak blocks these "scary VM/NUMA ops"; NUMA-aware libraries treat the failure as a machine without NUMA',
  },
  {
    syscalls: ['personality'],
    when: { kind: 'arg-not-in', arg: 0, values: [PER_LINUX, PER_LINUX32, ADDR_NO_RANDOMIZE, PER_LINUX32 | ADDR_NO_RANDOMIZE, PERSONALITY_QUERY] },
    errno: 'EPERM',
    summary: 'personality other than Linux/Linux32, optionally with ADDR_NO_RANDOMIZE, or the query',
    why: 'other personas and flags such as READ_IMPLIES_EXEC or MMAP_PAGE_ZERO weaken memory protections; gdb still disables ASLR',
  },
  {
    syscalls: ['socket', 'socketpair'],
    when: { kind: 'arg-not-in', arg: 0, values: [AF_UNSPEC, AF_UNIX, AF_INET, AF_INET6, AF_NETLINK] },
    errno: 'EAFNOSUPPORT',
    summary: 'sockets other than unix, inet, inet6 and netlink',
    why: "rare protocol families (and the kernel modules they autoload) are attack surface nothing here needs, and AF_VSOCK is not confined by the network namespace (on a virtual machine it reaches the hypervisor's side; red team, round 93); the answer is the one a kernel without the family gives",
  },
  {
    syscalls: ['socketcall'],
    when: { kind: 'arg-in', arg: 0, values: [SYS_SOCKET, SYS_SOCKETPAIR] },
    errno: 'EAFNOSUPPORT',
    summary: "i386 socketcall's SOCKET and SOCKETPAIR, whatever the family",
    why: 'its family sits behind a pointer the filter cannot read: an AF_VSOCK socket made through it left the network namespace (red team, round 93)',
  },
  IO_URING_RULE,
  HARD_LINK_RULE,
  {
    syscalls: ['chmod', 'fchmod', 'creat', 'mknod'],
    when: { kind: 'arg-any-bit', arg: 1, mask: S_ISUID | S_ISGID },
    errno: 'EPERM',
    summary: 'chmod, fchmod, creat and mknod with the set-user-ID or set-group-ID bit',
    why: SETID_WHY,
  },
  {
    syscalls: ['fchmodat', 'fchmodat2', 'mknodat'],
    when: { kind: 'arg-any-bit', arg: 2, mask: S_ISUID | S_ISGID },
    errno: 'EPERM',
    summary: 'fchmodat, fchmodat2 and mknodat with the set-user-ID or set-group-ID bit',
    why: SETID_WHY,
  },
  {
    syscalls: ['setxattr', 'lsetxattr', 'fsetxattr', 'setxattrat'],
    when: { kind: 'always' },
    errno: 'EOPNOTSUPP',
    summary: 'setting extended attributes (setxattr, lsetxattr, fsetxattr, setxattrat)',
    why: "an ACL set there (setfacl) gives other local users access to the user's files, the git dir included, without changing a mode bit; the answer is a filesystem's without them, which cp -a, tar and Python's copystat take in their stride (io_uring's SETXATTR is refused with io_uring, above)",
  },
]

/** The rules as lines, e.g. "ioctl TIOCSTI or TIOCLINUX (...): EPERM". */
export function describeSeccompRules(): string[] {
  return [
    ...SECCOMP_RULES.map(rule => `${rule.summary}: ${rule.errno}`),
    'i386 and arm32 syscalls: the same rules with their own numbers; x32 syscalls: ENOSYS',
  ]
}

export function hostSeccompArch(nodeArch: string): SeccompArch | undefined {
  return nodeArch === 'x64' ? 'x86_64' : nodeArch === 'arm64' ? 'aarch64' : undefined
}

/**
 * `ioUring`: the opt-in that leaves io_uring allowed (and with it the sockets and attributes its
 * operations make, and its LINKAT); `hardLinks`, the one that leaves link and linkat allowed.
 */
export function seccompFilter(arch: SeccompArch, options: { ioUring?: boolean; hardLinks?: boolean } = {}): Buffer {
  const left = new Set([...(options.ioUring === true ? [IO_URING_RULE] : []), ...(options.hardLinks === true ? [HARD_LINK_RULE] : [])])
  const rules = SECCOMP_RULES.filter(rule => !left.has(rule))
  return assemble(program(SECCOMP_ABIS[arch], rules))
}

// ---------- the program ----------

// Classic BPF opcodes (linux/filter.h) and the layout of struct seccomp_data.
const BPF_LD_W_ABS = 0x20
const BPF_JMP_JA = 0x05
const BPF_JMP_JEQ_K = 0x15
const BPF_JMP_JGE_K = 0x35
const BPF_JMP_JSET_K = 0x45
const BPF_ALU_AND_K = 0x54
const BPF_RET_K = 0x06
const OFFSET_NR = 0
const OFFSET_ARCH = 4
/** The low 32 bits of argument i: args are little-endian u64 from offset 16. */
const argLow = (i: number): number => 16 + 8 * i

const SECCOMP_RET_ALLOW = 0x7fff0000
const SECCOMP_RET_ERRNO = 0x00050000

/** An instruction whose jump targets are labels; an absent target is the next instruction. */
interface Op {
  code: number
  k: number
  jt?: string
  jf?: string
  /** For JA: the label jumped to (any distance). */
  to?: string
}
type Item = Op | { label: string }

const load = (offset: number): Op => ({ code: BPF_LD_W_ABS, k: offset })
const ret = (k: number): Op => ({ code: BPF_RET_K, k })
const retLabel = (prefix: string, errno: SeccompErrno | 'ALLOW'): string => `${prefix}:ret:${errno}`

function program(abis: readonly SeccompAbi[], rules: readonly SeccompRule[]): Item[] {
  const items: Item[] = [load(OFFSET_ARCH)]
  // Dispatch: a conditional jump reaches at most 255 instructions ahead, so each table is entered
  // through an unconditional JA (32-bit offset).
  for (const abi of abis) {
    items.push({ code: BPF_JMP_JEQ_K, k: AUDIT_ARCH[abi], jf: `dispatch:after:${abi}` }, { code: BPF_JMP_JA, k: 0, to: `abi:${abi}` }, { label: `dispatch:after:${abi}` })
  }
  items.push(ret(SECCOMP_RET_ERRNO | ERRNO.ENOSYS)) // an architecture none of the tables is for
  for (const abi of abis) items.push({ label: `abi:${abi}` }, ...section(abi, rules))
  return items
}

/** The rules for one syscall table; entered with nothing loaded. */
function section(abi: SeccompAbi, rules: readonly SeccompRule[]): Item[] {
  const items: Item[] = [load(OFFSET_NR)]
  const checks: Item[] = []
  const returns = new Set<SeccompErrno | 'ALLOW'>()
  // Shared returns sit at the end of the section, so every jump to them is forward.
  const to = (result: SeccompErrno | 'ALLOW'): string => {
    returns.add(result)
    return retLabel(abi, result)
  }
  if (abi === 'x86_64') items.push({ code: BPF_JMP_JGE_K, k: X32_SYSCALL_BIT, jt: `${abi}:x32` })
  rules.forEach((rule, r) => {
    const check = `${abi}:check:${r}`
    let checked = false
    for (const name of rule.syscalls) {
      const nr = SYSCALL_NUMBERS[name][abi]
      if (nr === undefined) continue
      if (rule.when.kind === 'always') {
        items.push({ code: BPF_JMP_JEQ_K, k: nr, jt: to(rule.errno) })
        continue
      }
      items.push({ code: BPF_JMP_JEQ_K, k: nr, jt: check })
      if (checked) continue // one argument check per rule, shared by its syscalls
      checked = true
      const when = rule.when
      checks.push({ label: check }, load(argLow(when.arg)))
      if (when.kind === 'arg-in') {
        checks.push(...argInChecks(when, check, to(rule.errno)), ret(SECCOMP_RET_ALLOW))
        if (when.unless !== undefined) {
          checks.push({ label: `${check}:unless` }, load(argLow(when.unless.arg)))
          for (const value of when.unless.values) checks.push({ code: BPF_JMP_JEQ_K, k: value, jt: to('ALLOW') })
          checks.push(ret(SECCOMP_RET_ERRNO | ERRNO[rule.errno]))
        }
      } else if (when.kind === 'arg-not-in') {
        for (const value of when.values) checks.push({ code: BPF_JMP_JEQ_K, k: value, jt: to('ALLOW') })
        checks.push(ret(SECCOMP_RET_ERRNO | ERRNO[rule.errno]))
      } else {
        checks.push({ code: BPF_JMP_JSET_K, k: when.mask, jt: to(rule.errno) })
        if (when.alsoMasked !== undefined) checks.push({ code: BPF_ALU_AND_K, k: when.alsoMasked.mask }, { code: BPF_JMP_JEQ_K, k: when.alsoMasked.equals, jt: to(rule.errno) })
        checks.push(ret(SECCOMP_RET_ALLOW))
      }
    }
  })
  items.push(ret(SECCOMP_RET_ALLOW), ...checks) // no rule matched the number
  if (abi === 'x86_64') {
    // x32: refused, except the pseudo syscall -1 that a tracer uses to skip a syscall.
    items.push({ label: `${abi}:x32` }, { code: BPF_JMP_JEQ_K, k: 0xffffffff, jt: to('ALLOW') }, ret(SECCOMP_RET_ERRNO | ERRNO.ENOSYS))
  }
  for (const result of returns) {
    items.push({ label: retLabel(abi, result) }, ret(result === 'ALLOW' ? SECCOMP_RET_ALLOW : SECCOMP_RET_ERRNO | ERRNO[result]))
  }
  return items
}

/**
 * An `arg-in` check on the loaded argument: each value (to `unless`'s second look when there is
 * one), each range, then `withBits`, which loads another argument and so comes last; falls
 * through when none failed.
 */
function argInChecks(when: Extract<SeccompCondition, { kind: 'arg-in' }>, check: string, failed: string): Item[] {
  const items: Item[] = []
  const hit = when.unless === undefined ? failed : `${check}:unless`
  for (const value of when.values) items.push({ code: BPF_JMP_JEQ_K, k: value, jt: hit })
  for (const [i, [from, upTo]] of (when.ranges ?? []).entries()) {
    const past = `${check}:range:${i}`
    items.push({ code: BPF_JMP_JGE_K, k: from, jf: past }, { code: BPF_JMP_JGE_K, k: upTo + 1, jf: failed }, { label: past })
  }
  const bits = when.withBits
  if (bits !== undefined) {
    const past = `${check}:bits`
    const test: Item = bits.value === undefined ? { code: BPF_JMP_JSET_K, k: bits.mask, jt: failed } : { code: BPF_JMP_JEQ_K, k: bits.value, jt: failed }
    items.push({ code: BPF_JMP_JEQ_K, k: bits.equals, jf: past }, load(argLow(bits.arg)), test, { label: past })
  }
  return items
}

/** Resolves labels into relative offsets and encodes the instructions. */
function assemble(items: readonly Item[]): Buffer {
  const at = new Map<string, number>()
  const ops: Op[] = []
  for (const item of items) {
    if ('label' in item) {
      if (at.has(item.label)) throw new Error(`seccomp: duplicate label ${item.label}`)
      at.set(item.label, ops.length)
    } else {
      ops.push(item)
    }
  }
  const offset = (from: number, label: string | undefined, max: number): number => {
    if (label === undefined) return 0
    const target = at.get(label)
    if (target === undefined) throw new Error(`seccomp: unknown label ${label}`)
    const distance = target - from - 1
    if (distance < 0 || distance > max) throw new Error(`seccomp: jump to ${label} out of range (${distance})`)
    return distance
  }
  const last = ops[ops.length - 1]
  if (last === undefined || last.code !== BPF_RET_K) throw new Error('seccomp: a program must end with a return')
  // A DataView, not Buffer's write methods: those are JavaScript that a launch runs cold, in the
  // interpreter (~1 ms for a filter's few hundred instructions here); DataView's are built in.
  const buffer = Buffer.alloc(ops.length * 8)
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length)
  ops.forEach((op, i) => {
    const ja = op.code === BPF_JMP_JA
    view.setUint16(i * 8, op.code, true)
    view.setUint8(i * 8 + 2, ja ? 0 : offset(i, op.jt, 255))
    view.setUint8(i * 8 + 3, ja ? 0 : offset(i, op.jf, 255))
    view.setUint32(i * 8 + 4, (ja ? offset(i, op.to, 0xffffffff) : op.k) >>> 0, true)
  })
  return buffer
}
