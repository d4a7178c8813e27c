/* Escape probe, run inside the sandbox by test/escape/escape.test.ts. Each subcommand tries one
 * thing the sandbox must forbid and prints "BLOCKED <errno name>" when the attempt failed or
 * "ESCAPED" when it worked. Built by the test with `cc`, no other dependencies. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

static int report(long rc) {
  if (rc < 0) {
    printf("BLOCKED %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
    return 0;
  }
  printf("ESCAPED\n");
  return 1;
}

static int open_pty(void) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) { perror("pty"); exit(2); }
  int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  if (slave < 0) { perror("slave"); exit(2); }
  return slave;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *what = argv[1];
  const char *arg = argc > 2 ? argv[2] : "";
  char c = 'x';
  if (!strcmp(what, "tiocsti")) return report(ioctl(open_pty(), TIOCSTI, &c));
  if (!strcmp(what, "tiocsti-high")) return report(syscall(SYS_ioctl, open_pty(), 0xffffffff00000000UL | TIOCSTI, &c));
  if (!strcmp(what, "tioclinux")) { char sub = 2; return report(ioctl(open_pty(), TIOCLINUX, &sub)); }
  if (!strcmp(what, "winsize")) { /* must keep working: resize reaches Claude */
    struct winsize ws = {.ws_row = 40, .ws_col = 100};
    int fd = open_pty();
    if (ioctl(fd, TIOCSWINSZ, &ws) < 0 || ioctl(fd, TIOCGWINSZ, &ws) < 0 || ws.ws_col != 100) { printf("BROKEN\n"); return 1; }
    printf("WORKS\n");
    return 0;
  }
  if (!strcmp(what, "ptrace")) return report(ptrace(PTRACE_ATTACH, atoi(arg), 0, 0));
  if (!strcmp(what, "kill")) return report(kill(atoi(arg), 0));
  if (!strcmp(what, "clone3")) { char buf[88] = {0}; return report(syscall(SYS_clone3, buf, sizeof buf)); }
  if (!strcmp(what, "unshare-user")) return report(unshare(CLONE_NEWUSER));
  if (!strcmp(what, "unshare-mount")) return report(unshare(CLONE_NEWNS));
  if (!strcmp(what, "mount-tmpfs")) return report(mount("none", arg, "tmpfs", 0, 0));
  if (!strcmp(what, "remount-rw")) return report(mount(arg, arg, 0, MS_REMOUNT | MS_BIND, 0));
  if (!strcmp(what, "bind-root")) return report(mount("/", arg, 0, MS_BIND | MS_REC, 0));
  if (!strcmp(what, "open-tree")) return report(syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
  if (!strcmp(what, "fsopen")) return report(syscall(SYS_fsopen, "tmpfs", 0));
  if (!strcmp(what, "chroot")) return report(chroot("/tmp"));
  if (!strcmp(what, "pivot-root")) return report(syscall(SYS_pivot_root, "/tmp", "/tmp"));
  if (!strcmp(what, "add-key")) return report(syscall(SYS_add_key, "user", "claudebox", "x", 1, -2 /* session keyring */));
  if (!strcmp(what, "keyctl")) return report(syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3, 0));
  if (!strcmp(what, "mknod")) return report(mknod(arg, S_IFCHR | 0600, makedev(1, 1)));
  if (!strcmp(what, "abstract-connect")) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = strlen(arg);
    memcpy(addr.sun_path + 1, arg, len); /* sun_path[0] = 0: the abstract namespace */
    /* The whole sun_path, zero-padded: Node (the test's listener) binds abstract names that way. */
    return report(connect(fd, (struct sockaddr *)&addr, sizeof addr));
  }
  if (!strcmp(what, "path-connect")) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, arg, sizeof addr.sun_path - 1);
    return report(connect(fd, (struct sockaddr *)&addr, sizeof addr));
  }
  fprintf(stderr, "unknown probe %s\n", what);
  return 2;
}
