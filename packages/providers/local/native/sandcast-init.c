/*
 * sandcast-init: pid 1 of a local sandbox (ADR 0007).
 *
 *   sandcast-init OOM_SCORE_ADJ READY_FD [AGENT CHANNEL_FD]
 *
 * - Reaps every child: processes orphaned inside the sandbox are reparented to pid 1, and a pid 1
 *   that never waits leaves them as zombies until the pids limit is used up.
 * - Forwards SIGTERM, SIGINT and SIGHUP to every other process of the sandbox, then exits once
 *   they are gone (the kernel kills whatever is left when pid 1 exits).
 * - Blocks on stdin, the instance's hold FIFO, which only the host can write: a line (or EOF)
 *   ends the sandbox, like the shell init before it.
 * - Sets its own oom_score_adj to OOM_SCORE_ADJ, reads it back and reports the value it holds on
 *   READY_FD (`ready oom_score_adj=<value> errno=<n>`), then closes READY_FD. The host waits for
 *   that line, so a sandbox is never used before its namespaces are set up, and it knows whether
 *   the write took (it needs CAP_SYS_RESOURCE, which the sandbox does not have; the host retries).
 *
 * - With AGENT: takes the exec agent's control socket out of the one message waiting on
 *   CHANNEL_FD (sandcast-boot put it there, ADR 0034), closes the channel and forks the agent
 *   (ADR 0030) with the socket as its stdin and stdout, before anything else: the agent starts in
 *   the init's namespaces, mount namespace, capabilities, seccomp filter and cgroup, with the
 *   oom_score_adj the init had before it asked for its own, and nothing but the agent holds the
 *   socket (its exit is EOF for the host). The ready line then ends ` agent=<pid inside>`, 0
 *   when no agent could be started (the host starts one the old way).
 *
 * Static, no allocation after start, no dependency on the image: it runs in any rootfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void log_line(const char *text) {
  /* stderr is the instance's init.log on the host. */
  (void)!write(2, text, strlen(text));
}

static void reap_all(void) {
  for (;;) {
    pid_t pid = waitpid(-1, NULL, WNOHANG);
    if (pid <= 0) return;
  }
}

static int others_alive(void) {
  /* kill(-1, 0) from pid 1 addresses every other process of the pid namespace. */
  return kill(-1, 0) == 0 || errno != ESRCH;
}

static int set_oom_score_adj(const char *wanted, int *saved_errno) {
  *saved_errno = 0;
  int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, wanted, strlen(wanted)) < 0) *saved_errno = errno;
  if (fd >= 0) close(fd);
  char buf[16] = {0};
  fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (!*saved_errno) *saved_errno = errno;
    return 0;
  }
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  return n > 0 ? atoi(buf) : 0;
}

/* The one descriptor in the message on `channel`, or -1. The channel is closed either way. */
static int receive_fd(int channel) {
  char byte;
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  union {
    struct cmsghdr header;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  ssize_t n = recvmsg(channel, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  close(channel);
  struct cmsghdr *cmsg = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
  if (!cmsg || (msg.msg_flags & MSG_CTRUNC) || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS ||
      cmsg->cmsg_len != CMSG_LEN(sizeof(int))) {
    log_line("sandcast-init: no exec agent socket on the channel\n");
    return -1;
  }
  int fd;
  memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
  return fd;
}

static pid_t start_agent(const char *path, int channel) {
  int fd = receive_fd(channel);
  if (fd < 0) return 0;
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0) _exit(127);
    /* Nothing of the init's (hold FIFO, ready pipe, seccomp file) reaches the agent. */
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
      for (int other = 3; other < 1024; other++) close(other);
    char *args[] = {(char *)path, NULL};
    execv(path, args);
    log_line("sandcast-init: could not exec the exec agent\n");
    _exit(127);
  }
  close(fd);
  if (pid < 0) {
    log_line("sandcast-init: could not fork the exec agent\n");
    return 0;
  }
  return pid;
}

int main(int argc, char **argv) {
  if ((argc != 3 && argc != 5) || getpid() != 1) {
    log_line("sandcast-init: usage: sandcast-init OOM_SCORE_ADJ READY_FD [AGENT CHANNEL_FD] (as pid 1)\n");
    return 2;
  }
  int ready_fd = atoi(argv[2]);
  prctl(PR_SET_NAME, "sandcast-init", 0, 0, 0);
  /* First, with the signal mask and oom_score_adj bwrap left: the agent inherits neither of the init's. */
  pid_t agent = argc == 5 ? start_agent(argv[3], atoi(argv[4])) : 0;

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
    log_line("sandcast-init: sigprocmask failed\n");
    return 1;
  }
  int sfd = signalfd(-1, &set, SFD_CLOEXEC);
  if (sfd < 0) {
    log_line("sandcast-init: signalfd failed\n");
    return 1;
  }
  fcntl(0, F_SETFD, FD_CLOEXEC);

  int oom_errno = 0;
  int held = set_oom_score_adj(argv[1], &oom_errno);
  char report[96];
  int len = argc == 5 ? snprintf(report, sizeof report, "ready oom_score_adj=%d errno=%d agent=%d\n", held, oom_errno, (int)agent)
                      : snprintf(report, sizeof report, "ready oom_score_adj=%d errno=%d\n", held, oom_errno);
  if (held != atoi(argv[1])) {
    char line[160];
    snprintf(line, sizeof line, "sandcast-init: oom_score_adj %s refused (%s); holding %d\n", argv[1], strerror(oom_errno), held);
    log_line(line);
  }
  if (write(ready_fd, report, (size_t)len) != len) log_line("sandcast-init: could not report readiness\n");
  close(ready_fd);

  int stopping = 0;
  struct pollfd fds[2] = {{.fd = sfd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
  for (;;) {
    int n = poll(fds, stopping ? 1 : 2, stopping ? 100 : -1);
    if (n < 0 && errno != EINTR) return 1;
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo info;
      if (read(sfd, &info, sizeof info) == sizeof info && info.ssi_signo != SIGCHLD && !stopping) {
        /* Forwarded once; a process that ignores it dies with the namespace when we exit. */
        kill(-1, (int)info.ssi_signo);
        stopping = (int)info.ssi_signo;
      }
    }
    reap_all();
    if (!stopping && fds[1].revents) return 0; /* the host wrote the hold FIFO: stop */
    if (stopping && !others_alive()) return 128 + stopping;
  }
}
