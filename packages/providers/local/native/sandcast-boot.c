/*
 * sandcast-boot: the host side of a local sandbox's start, in one process (ADR 0034).
 *
 *   sandcast-boot STEP... -- COMMAND [ARG...]
 *
 * Runs the steps in order, then execs COMMAND (the init's bwrap). It replaces the host commands
 * a start used to fork one by one (a shell for the cgroup prologue, mkfifo, mount -o loop, mount
 * -t overlay for each layer stack), each of which cost a process start. Steps:
 *
 *   umask MODE                        umask MODE (octal)
 *   cgroup FILE                       writes this process into a cgroup.procs FILE: it and all it
 *                                     starts are limited from here on
 *   open FD FILE                      opens FILE read-only on descriptor FD (the seccomp filter)
 *   fifo PATH                         mkfifo PATH 0600; an existing FIFO is kept (a restart)
 *   dir PATH MODE                     mkdir PATH; an existing directory is kept; then chmod MODE (octal)
 *   disk FILE DIR                     attaches FILE to a free loop device (autoclear) and mounts its
 *                                     ext4 at DIR: nosuid, nodev, noinit_itable, nobarrier
 *   cd DIR                            chdir DIR (relative overlay lower dirs resolve from it)
 *   overlay LOWER UPPER WORK TARGET   mounts an overlay (index, redirect_dir, metacopy off;
 *                                     volatile where the kernel has it)
 *   stdin PATH                        opens PATH read-write as stdin (the init's hold FIFO)
 *   agent FD                          moves FD (the exec agent's control socket) into a message on
 *                                     a new socket pair whose receiving end takes FD's number:
 *                                     the init takes it out and hands it to the agent it forks, so
 *                                     no other process (bwrap's monitor outside the sandbox
 *                                     included) holds the agent's end and its exit reads as EOF
 *
 * Only the server runs it, with arguments it built itself; still, every argument is checked:
 * an unknown step, a missing argument, a path that is empty or too long, a mode that is not
 * octal, or a mount option string longer than the kernel takes is a usage error (exit 2) before
 * anything is done. A step that fails prints `sandcast-boot: STEP ARG: reason` and exits 1; what
 * earlier steps mounted is left for the caller's teardown, as with the commands it replaces.
 *
 * Static: it needs nothing but the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel takes mount options in one page. */
#define MAX_OPTIONS 4096

static const char *step_name = "";
static const char *step_arg = "";

static void usage(const char *why) {
  fprintf(stderr, "sandcast-boot: %s\nusage: sandcast-boot STEP... -- COMMAND [ARG...]\n", why);
  exit(2);
}

static void fail(const char *reason) {
  fprintf(stderr, "sandcast-boot: %s %s: %s\n", step_name, step_arg, reason);
  exit(1);
}

static void fail_errno(void) { fail(strerror(errno)); }

static int arity(const char *step) {
  if (!strcmp(step, "fifo") || !strcmp(step, "cd") || !strcmp(step, "stdin") || !strcmp(step, "agent") || !strcmp(step, "umask") ||
      !strcmp(step, "cgroup"))
    return 1;
  if (!strcmp(step, "dir") || !strcmp(step, "disk") || !strcmp(step, "open")) return 2;
  if (!strcmp(step, "overlay")) return 4;
  return -1;
}

static int valid_path(const char *path) {
  size_t len = strlen(path);
  return len > 0 && len < PATH_MAX;
}

static int parse_mode(const char *text, mode_t *mode) {
  if (!*text || strlen(text) > 4) return 0;
  unsigned value = 0;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '7') return 0;
    value = value * 8 + (unsigned)(*p - '0');
  }
  *mode = (mode_t)value;
  return 1;
}

static int parse_fd(const char *text, int *fd) {
  if (!*text || strlen(text) > 4) return 0;
  int value = 0;
  for (const char *p = text; *p; p++) {
    if (*p < '0' || *p > '9') return 0;
    value = value * 10 + (*p - '0');
  }
  if (value < 3) return 0;
  *fd = value;
  return 1;
}

static int overlay_options(char *out, size_t size, char **a, int with_volatile) {
  int n = snprintf(out, size, "lowerdir=%s,upperdir=%s,workdir=%s,index=off,redirect_dir=off,metacopy=off%s", a[0], a[1], a[2],
                   with_volatile ? ",volatile" : "");
  return n > 0 && (size_t)n < size;
}

/* Checks every step before any runs: a bad request does nothing. */
static int validate(int argc, char **argv) {
  int i = 1;
  while (i < argc && strcmp(argv[i], "--") != 0) {
    int n = arity(argv[i]);
    if (n < 0) usage("unknown step");
    if (i + n >= argc) usage("a step is missing an argument");
    for (int k = 1; k <= n; k++)
      if (!strcmp(argv[i + k], "--")) usage("a step is missing an argument");
    const char *step = argv[i];
    if (!strcmp(step, "dir")) {
      mode_t mode;
      if (!valid_path(argv[i + 1]) || !parse_mode(argv[i + 2], &mode)) usage("dir takes a path and an octal mode");
    } else if (!strcmp(step, "umask")) {
      mode_t mode;
      if (!parse_mode(argv[i + 1], &mode) || mode > 0777) usage("umask takes an octal mode");
    } else if (!strcmp(step, "agent") || !strcmp(step, "open")) {
      int fd;
      if (!parse_fd(argv[i + 1], &fd)) usage("agent and open take a descriptor number above 2");
      if (!strcmp(step, "open") && !valid_path(argv[i + 2])) usage("a path is empty or too long");
    } else if (!strcmp(step, "overlay")) {
      char options[MAX_OPTIONS];
      /* The lower dirs are a colon-separated list: bounded by the option string below. */
      if (!*argv[i + 1]) usage("overlay takes lower dirs and three paths");
      for (int k = 2; k <= 4; k++)
        if (!valid_path(argv[i + k])) usage("overlay takes lower dirs and three paths");
      if (!overlay_options(options, sizeof options, &argv[i + 1], 1)) usage("overlay options too long for the kernel; squash the image");
      if (strchr(argv[i + 2], ',') || strchr(argv[i + 3], ',')) usage("overlay dirs may not contain a comma");
    } else {
      for (int k = 1; k <= n; k++)
        if (!valid_path(argv[i + k])) usage("a path is empty or too long");
    }
    i += n + 1;
  }
  if (i >= argc) usage("no -- before the command");
  if (i + 1 >= argc) usage("no command after --");
  return i;
}

static void make_fifo(const char *path) {
  if (mkfifo(path, 0600) == 0) return;
  struct stat st;
  if (errno == EEXIST && lstat(path, &st) == 0 && S_ISFIFO(st.st_mode)) return;
  fail_errno();
}

static void make_dir(const char *path, const char *mode_text) {
  mode_t mode = 0;
  parse_mode(mode_text, &mode);
  if (mkdir(path, 0700) != 0) {
    struct stat st;
    if (!(errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))) fail_errno();
  }
  if (chmod(path, mode) != 0) fail_errno();
}

/* A free loop device configured over `file` with autoclear: it goes with the last close after the unmount. */
static int attach_loop(const char *file, char *device, size_t device_size) {
  int backing = open(file, O_RDWR | O_CLOEXEC);
  if (backing < 0) fail_errno();
  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) fail("cannot open /dev/loop-control");
  for (int attempt = 0; attempt < 32; attempt++) {
    int n = ioctl(control, LOOP_CTL_GET_FREE);
    if (n < 0) fail("no free loop device");
    snprintf(device, device_size, "/dev/loop%d", n);
    int loop = open(device, O_RDWR | O_CLOEXEC);
    if (loop < 0) {
      if (errno == ENOENT || errno == ENXIO) continue; /* not created yet, or taken and removed meanwhile */
      fail_errno();
    }
    struct loop_config config;
    memset(&config, 0, sizeof config);
    config.fd = (unsigned)backing;
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    strncpy((char *)config.info.lo_file_name, file, LO_NAME_SIZE - 1);
    if (ioctl(loop, LOOP_CONFIGURE, &config) == 0) {
      close(control);
      close(backing);
      return loop;
    }
    int err = errno;
    if (err == EINVAL || err == ENOTTY) {
      /* Before Linux 5.8: the two-call way. */
      if (ioctl(loop, LOOP_SET_FD, backing) == 0) {
        if (ioctl(loop, LOOP_SET_STATUS64, &config.info) == 0) {
          close(control);
          close(backing);
          return loop;
        }
        ioctl(loop, LOOP_CLR_FD, 0);
      }
      err = errno;
    }
    close(loop);
    if (err != EBUSY) {
      errno = err;
      fail_errno();
    }
    /* Another process took this device between GET_FREE and the configure: try the next. */
  }
  fail("no free loop device after 32 attempts");
  return -1;
}

static void mount_disk(const char *file, const char *dir) {
  char device[32];
  int loop = attach_loop(file, device, sizeof device);
  step_arg = dir;
  if (mount(device, dir, "ext4", MS_NOSUID | MS_NODEV, "noinit_itable,nobarrier") != 0) fail_errno();
  /* The mount holds the device now; autoclear releases it at the unmount. */
  close(loop);
}

static void mount_overlay(char **a) {
  static int no_volatile = 0;
  char options[MAX_OPTIONS];
  step_arg = a[3];
  if (!no_volatile) {
    overlay_options(options, sizeof options, a, 1);
    if (mount("overlay", a[3], "overlay", 0, options) == 0) return;
    if (errno != EINVAL) fail_errno();
    /* Linux before 5.10 has no `volatile`. */
    no_volatile = 1;
  }
  overlay_options(options, sizeof options, a, 0);
  if (mount("overlay", a[3], "overlay", 0, options) != 0) fail_errno();
}

static void join_cgroup(const char *file) {
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail_errno();
  /* 0: the writing process. */
  if (write(fd, "0", 1) != 1) fail_errno();
  close(fd);
}

static void open_at(int target, const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) fail_errno();
  if (fd != target) {
    if (dup2(fd, target) < 0) fail_errno();
    close(fd);
  }
}

static void open_stdin(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) fail_errno();
  if (dup2(fd, 0) < 0) fail_errno();
  close(fd);
}

static void pass_agent(int fd) {
  if (fcntl(fd, F_GETFD) < 0) fail("not an open descriptor");
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) fail_errno();
  char byte = 'a';
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr header;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  if (sendmsg(pair[1], &msg, MSG_NOSIGNAL) != 1) fail_errno();
  close(pair[1]);
  /* The receiving end takes the descriptor's number (inherited: no close-on-exec). */
  if (dup2(pair[0], fd) < 0) fail_errno();
  close(pair[0]);
}

int main(int argc, char **argv) {
  int command = validate(argc, argv) + 1;
  for (int i = 1; i < command - 1;) {
    step_name = argv[i];
    step_arg = argv[i + 1];
    char **a = &argv[i + 1];
    if (!strcmp(step_name, "fifo")) make_fifo(a[0]);
    else if (!strcmp(step_name, "dir")) make_dir(a[0], a[1]);
    else if (!strcmp(step_name, "disk")) mount_disk(a[0], a[1]);
    else if (!strcmp(step_name, "cd")) {
      if (chdir(a[0]) != 0) fail_errno();
    } else if (!strcmp(step_name, "overlay")) mount_overlay(a);
    else if (!strcmp(step_name, "stdin")) open_stdin(a[0]);
    else if (!strcmp(step_name, "umask")) {
      mode_t mode = 0;
      parse_mode(a[0], &mode);
      umask(mode);
    } else if (!strcmp(step_name, "cgroup")) join_cgroup(a[0]);
    else if (!strcmp(step_name, "open")) {
      int fd = 0;
      parse_fd(a[0], &fd);
      step_arg = a[1];
      open_at(fd, a[1]);
    }
    else if (!strcmp(step_name, "agent")) {
      int fd = 0;
      parse_fd(a[0], &fd);
      pass_agent(fd);
    }
    i += arity(step_name) + 1;
  }
  execvp(argv[command], &argv[command]);
  step_name = "exec";
  step_arg = argv[command];
  fail_errno();
  return 1;
}
