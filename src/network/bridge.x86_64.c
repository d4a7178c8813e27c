// claudebox's network bridge (x86_64 Linux), run inside a sandbox that has no network but loopback:
//   bridge KEY SOCKET PORT [SOCKET PORT]... -- PROGRAM [ARGS...]
// Listens on 127.0.0.1:PORT for each pair, then forks: the child relays every connection to its unix
// SOCKET byte for byte (the launcher's egress proxy and API gateway), one process per connection,
// after a first line of its own, KEY: the launcher's servers take only the connections that
// present their session's key (another sandbox that can reach these sockets cannot use them);
// the parent executes PROGRAM. So every port listens before the program's first instruction, and
// the program keeps the place the launcher sends signals to. (The sockets exist by then: bwrap
// runs the program only once the launcher's servers listen, see GO_FD in plan.ts.) The Node
// bridge (bridge.ts) does the same at the cost of a second Node start-up (~80-150 ms).
//
// No libc: a few syscalls, built by scripts/build-bridge.sh (gcc -Os -static -nostdlib) into the
// bytes of bridge-native.ts. Exit statuses: 125 bad arguments or a port that cannot listen, 127 a
// program that cannot be executed.

typedef unsigned long size_t;
typedef long ssize_t;

#define SYS_read 0
#define SYS_write 1
#define SYS_close 3
#define SYS_poll 7
#define SYS_rt_sigaction 13
#define SYS_socket 41
#define SYS_connect 42
#define SYS_shutdown 48
#define SYS_bind 49
#define SYS_listen 50
#define SYS_setsockopt 54
#define SYS_fork 57
#define SYS_execve 59
#define SYS_getpid 39
#define SYS_getppid 110
#define SYS_prctl 157
#define SYS_exit_group 231
#define SYS_accept4 288

#define AF_UNIX 1
#define AF_INET 2
#define SOCK_STREAM 1
#define SOCK_CLOEXEC 02000000
#define SHUT_WR 1
#define IPPROTO_TCP 6
#define TCP_NODELAY 1
#define POLLIN 1
#define EINTR 4
#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGKILL 9
#define SIGPIPE 13
#define SIGCHLD 17
#define PR_SET_PDEATHSIG 1
#define MAX_PAIRS 8

struct pollfd { int fd; short events; short revents; };
struct sockaddr_in { unsigned short family; unsigned short port; unsigned int addr; unsigned char zero[8]; };
struct sockaddr_un { unsigned short family; char path[108]; };
struct sigaction { unsigned long handler; unsigned long flags; unsigned long restorer; unsigned long mask; };

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    return ret;
}
#define sys3(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

static __attribute__((noreturn)) void quit(int status) {
    for (;;) sys3(SYS_exit_group, status, 0, 0);
}

static size_t length(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static void say(const char *a, const char *b) {
    sys3(SYS_write, 2, "claudebox-bridge: ", 18);
    sys3(SYS_write, 2, a, length(a));
    sys3(SYS_write, 2, b, length(b));
    sys3(SYS_write, 2, "\n", 1);
}

static int same(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

/** A port 1..65535 in decimal, else 0. */
static unsigned port_of(const char *s) {
    unsigned n = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || n > 65535) return 0;
        n = n * 10 + (unsigned)(*s - '0');
    }
    return n <= 65535 ? n : 0;
}

static void ignore(int signal) {
    struct sigaction action = { 1 /* SIG_IGN */, 0, 0, 0 };
    sys6(SYS_rt_sigaction, signal, (long)&action, 0, 8, 0, 0);
}

static int listen_on(unsigned port) {
    struct sockaddr_in address = { AF_INET, (unsigned short)((port >> 8) | ((port & 0xff) << 8)), 0x0100007f, { 0 } };
    int fd = (int)sys3(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || sys3(SYS_bind, fd, &address, sizeof address) < 0 || sys3(SYS_listen, fd, 128, 0) < 0) return -1;
    return fd;
}

static int write_all(int fd, const char *data, ssize_t n) {
    while (n > 0) {
        ssize_t done = sys3(SYS_write, fd, data, n);
        if (done == -EINTR) continue;
        if (done <= 0) return -1;
        data += done;
        n -= done;
    }
    return 0;
}

static char buffer[65536];

static int connect_unix(const char *socket_path) {
    struct sockaddr_un address = { AF_UNIX, { 0 } };
    size_t n = length(socket_path);
    if (n >= sizeof address.path) return -1;
    for (size_t i = 0; i < n; i++) address.path[i] = socket_path[i];
    int fd = (int)sys3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || sys3(SYS_connect, fd, &address, sizeof address) < 0) return -1;
    return fd;
}

/** One connection: the key, then the client and its unix socket, each direction until its EOF (then half-closed). */
static __attribute__((noreturn)) void relay(int client, const char *socket_path, const char *key) {
    int upstream = connect_unix(socket_path);
    if (upstream < 0 || write_all(upstream, key, (ssize_t)length(key)) < 0 || write_all(upstream, "\n", 1) < 0) quit(1);
    // Each chunk goes on as it comes (a streamed answer is many small ones): without this, Nagle's
    // algorithm held a small write until the client's delayed ACK (~23 ms a request measured).
    int one = 1;
    sys6(SYS_setsockopt, client, IPPROTO_TCP, TCP_NODELAY, (long)&one, sizeof one, 0);
    struct pollfd fds[2] = { { client, POLLIN, 0 }, { upstream, POLLIN, 0 } };
    int open = 2;
    while (open > 0) {
        if (sys3(SYS_poll, fds, 2, -1) < 0) continue;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            int to = i == 0 ? upstream : client;
            ssize_t got = sys3(SYS_read, fds[i].fd, buffer, sizeof buffer);
            if (got == -EINTR) continue;
            if (got < 0) quit(0);
            if (got == 0) {
                sys3(SYS_shutdown, to, SHUT_WR, 0);
                fds[i].fd = -1;
                open--;
            } else if (write_all(to, buffer, got) < 0) {
                quit(0);
            }
        }
    }
    quit(0);
}

/** The accept loop, in the child; it ends when the sandbox does (its parent is the program). */
static __attribute__((noreturn)) void serve(struct pollfd *listeners, const char **paths, int count, long program, const char *key) {
    sys6(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0, 0);
    if (sys3(SYS_getppid, 0, 0, 0) != program) quit(0);
    // Ctrl-C and a closed terminal are for the program in front; children are reaped by the kernel.
    ignore(SIGINT), ignore(SIGQUIT), ignore(SIGHUP), ignore(SIGPIPE), ignore(SIGCHLD);
    for (int fd = 0; fd < 3; fd++) sys3(SYS_close, fd, 0, 0);
    for (;;) {
        if (sys3(SYS_poll, listeners, count, -1) < 0) continue;
        for (int i = 0; i < count; i++) {
            if (listeners[i].revents == 0) continue;
            int client = (int)sys6(SYS_accept4, listeners[i].fd, 0, 0, SOCK_CLOEXEC, 0, 0);
            if (client < 0) continue;
            if (sys3(SYS_fork, 0, 0, 0) == 0) {
                for (int j = 0; j < count; j++) sys3(SYS_close, listeners[j].fd, 0, 0);
                relay(client, paths[i], key);
            }
            sys3(SYS_close, client, 0, 0);
        }
    }
}

/** execvp: a name without a slash is looked up in PATH. */
static void execute(char **argv, char **envp) {
    const char *name = argv[0];
    for (const char *p = name; *p; p++) {
        if (*p == '/') {
            sys3(SYS_execve, name, argv, envp);
            return;
        }
    }
    const char *path = "/usr/bin:/bin";
    for (char **e = envp; *e; e++) {
        const char *v = *e;
        if (v[0] == 'P' && v[1] == 'A' && v[2] == 'T' && v[3] == 'H' && v[4] == '=') path = v + 5;
    }
    static char full[4096];
    size_t n = length(name);
    while (*path) {
        size_t dir = 0;
        while (path[dir] && path[dir] != ':') dir++;
        if (dir + 1 + n < sizeof full) {
            size_t at = 0;
            for (size_t i = 0; i < dir; i++) full[at++] = path[i];
            if (at == 0) full[at++] = '.';
            full[at++] = '/';
            for (size_t i = 0; i <= n; i++) full[at++] = name[i];
            sys3(SYS_execve, full, argv, envp);
        }
        path += dir;
        if (*path == ':') path++;
    }
}

int bridge(long argc, char **argv, char **envp) {
    struct pollfd listeners[MAX_PAIRS];
    const char *paths[MAX_PAIRS];
    int count = 0;
    if (argc < 2) {
        say("usage: bridge KEY SOCKET PORT... -- PROGRAM [ARGS...]", "");
        return 125;
    }
    const char *key = argv[1];
    long i = 2;
    for (; i + 1 < argc && !same(argv[i], "--"); i += 2) {
        unsigned port = port_of(argv[i + 1]);
        if (count == MAX_PAIRS || port == 0) {
            say("bad SOCKET PORT pair: ", argv[i]);
            return 125;
        }
        paths[count] = argv[i];
        listeners[count].fd = listen_on(port);
        listeners[count].events = POLLIN;
        if (listeners[count].fd < 0) {
            say("cannot listen on 127.0.0.1:", argv[i + 1]);
            return 125;
        }
        count++;
    }
    if (i >= argc || !same(argv[i], "--") || i + 1 >= argc) {
        say("usage: bridge KEY SOCKET PORT... -- PROGRAM [ARGS...]", "");
        return 125;
    }
    long program = sys3(SYS_getpid, 0, 0, 0);
    long child = sys3(SYS_fork, 0, 0, 0);
    if (child < 0) {
        say("cannot fork", "");
        return 125;
    }
    if (child == 0) serve(listeners, paths, count, program, key);
    execute(argv + i + 1, envp);
    say("cannot execute ", argv[i + 1]);
    return 127;
}

__asm__(
    ".globl _start\n"
    "_start:\n"
    "    mov (%rsp), %rdi\n"          // argc
    "    lea 8(%rsp), %rsi\n"         // argv
    "    lea 16(%rsp,%rdi,8), %rdx\n" // envp: after argv's NULL
    "    and $-16, %rsp\n"
    "    call bridge\n"
    "    mov %eax, %edi\n"
    "    mov $231, %eax\n"
    "    syscall\n");
