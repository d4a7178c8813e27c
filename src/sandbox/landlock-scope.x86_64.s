# claudebox's Landlock scope helper (x86_64): scope <program> [args...]
# Restricts itself with LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (Landlock ABI 6, Linux 6.12), then
# executes the program. On a kernel without it, executes the program unrestricted.
# Without a program: exits 0 when the kernel supports the scope, 1 when not (for --check).
.globl _start
_start:
    mov %rsp, %r12              # r12 -> argc, argv[], NULL, envp[]
    xor %eax, %eax
    push $1                     # attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
    push %rax                   # attr.handled_access_net = 0
    push %rax                   # attr.handled_access_fs = 0
    mov $157, %eax              # prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    mov $38, %edi
    mov $1, %esi
    xor %edx, %edx
    xor %r10d, %r10d
    xor %r8d, %r8d
    syscall
    mov $444, %eax              # landlock_create_ruleset(&attr, 24, 0)
    mov %rsp, %rdi
    mov $24, %esi
    xor %edx, %edx
    syscall
    cmpq $2, (%r12)             # no program: probe mode, exit 0 when the scope is supported
    jae 2f
    shr $63, %rax
    mov %eax, %edi
    mov $231, %eax
    syscall
2:
    test %rax, %rax
    js 1f
    mov %rax, %rdi              # landlock_restrict_self(fd, 0)
    mov $446, %eax
    xor %esi, %esi
    syscall
1:
    mov (%r12), %rcx            # execve(argv[1], &argv[1], envp)
    lea 16(%r12), %rsi
    mov (%rsi), %rdi
    lea 16(%r12,%rcx,8), %rdx
    mov $59, %eax
    syscall
    mov $231, %eax              # exit_group(127)
    mov $127, %edi
    syscall
