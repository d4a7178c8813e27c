// A Landlock scope for the sandboxed program: LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (Landlock ABI 6,
// Linux 6.12) stops it connecting to abstract unix sockets created outside the sandbox, such as
// X11's @/tmp/.X11-unix/X0, which the default shared network would otherwise expose. bwrap cannot
// set it and Node cannot make the syscalls, so a 124-byte static program does it and then
// executes the real program: src/sandbox/landlock-scope.x86_64.s is its source, assembled with GNU as
// (`as --64 && ld -static -nostdlib && objcopy -O binary -j .text`); the bytes below are that
// output. On a kernel without the scope it executes the program unrestricted; run without a
// program it exits 0 when the kernel supports the scope (--check).

const X86_64_CODE = Uint8Array.from([
  0x49, 0x89, 0xe4, 0x31, 0xc0, 0x6a, 0x01, 0x50, 0x50, 0xb8, 0x9d, 0x00, 0x00, 0x00, 0xbf, 0x26,
  0x00, 0x00, 0x00, 0xbe, 0x01, 0x00, 0x00, 0x00, 0x31, 0xd2, 0x45, 0x31, 0xd2, 0x45, 0x31, 0xc0,
  0x0f, 0x05, 0xb8, 0xbc, 0x01, 0x00, 0x00, 0x48, 0x89, 0xe7, 0xbe, 0x18, 0x00, 0x00, 0x00, 0x31,
  0xd2, 0x0f, 0x05, 0x49, 0x83, 0x3c, 0x24, 0x02, 0x73, 0x0d, 0x48, 0xc1, 0xe8, 0x3f, 0x89, 0xc7,
  0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0, 0x78, 0x0c, 0x48, 0x89, 0xc7, 0xb8,
  0xbe, 0x01, 0x00, 0x00, 0x31, 0xf6, 0x0f, 0x05, 0x49, 0x8b, 0x0c, 0x24, 0x49, 0x8d, 0x74, 0x24,
  0x10, 0x48, 0x8b, 0x3e, 0x49, 0x8d, 0x54, 0xcc, 0x10, 0xb8, 0x3b, 0x00, 0x00, 0x00, 0x0f, 0x05,
  0xb8, 0xe7, 0x00, 0x00, 0x00, 0xbf, 0x7f, 0x00, 0x00, 0x00, 0x0f, 0x05,
])

const LOAD_ADDRESS = 0x400000
const HEADERS = 64 + 56

/** The helper as a static ELF executable for this architecture, or undefined when there is none. */
export function scopeHelper(arch: string): Uint8Array | undefined {
  return arch === 'x64' ? elf(0x3e, X86_64_CODE) : undefined
}

/** One ELF64 little-endian header, one read+execute PT_LOAD segment, then the code. */
function elf(machine: number, code: Uint8Array): Uint8Array {
  const size = HEADERS + code.length
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]) // magic, 64-bit, little-endian, version 1, System V
  view.setUint16(16, 2, true) // ET_EXEC
  view.setUint16(18, machine, true)
  view.setUint32(20, 1, true) // EV_CURRENT
  view.setBigUint64(24, BigInt(LOAD_ADDRESS + HEADERS), true) // entry: right after the headers
  view.setBigUint64(32, 64n, true) // program headers follow the ELF header
  view.setUint16(52, 64, true) // e_ehsize
  view.setUint16(54, 56, true) // e_phentsize
  view.setUint16(56, 1, true) // e_phnum
  view.setUint32(64, 1, true) // PT_LOAD
  view.setUint32(68, 5, true) // PF_R | PF_X
  view.setBigUint64(72, 0n, true) // from the start of the file
  view.setBigUint64(80, BigInt(LOAD_ADDRESS), true)
  view.setBigUint64(88, BigInt(LOAD_ADDRESS), true)
  view.setBigUint64(96, BigInt(size), true)
  view.setBigUint64(104, BigInt(size), true)
  view.setBigUint64(112, 0x1000n, true)
  out.set(code, HEADERS)
  return out
}
