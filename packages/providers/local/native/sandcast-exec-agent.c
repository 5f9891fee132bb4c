/*
 * sandcast-exec-agent: the long-lived exec agent of a local sandbox (ADR 0030).
 *
 *   sandcast-exec-agent        (stdin and stdout: the control stream, held by the host)
 *
 * Forked by the sandbox's init at start, over a socket only it and the host hold (ADR 0034), or
 * started through the ordinary exec path when that one went away; either way it runs in the
 * environment an exec gets: the sandbox's namespaces, a mount namespace over the rootfs, the kept
 * capabilities, no_new_privs, the seccomp filter, the sandbox's cgroups and oom_score_adj. It
 * then runs each command the host asks for (fork, setsid, exec) and relays its output and exit.
 *
 * Frames, both directions: u32 length (little endian, counting what follows), u8 type, u32 exec
 * id, payload. Host to agent: SPAWN (u32 argc, u32 envc, then NUL-terminated cwd, argv, env),
 * GO (the host has moved the child into its exec cgroup: it may exec), STDIN data, STDIN_EOF,
 * KILL (SIGKILL to the command's process group), PAUSE and RESUME (of its output). Agent to host:
 * READY, STARTED (u32 pid in the sandbox), STDOUT and STDERR data, STDIN_ACK (u32 bytes written),
 * EXIT (i32 code, sent once the command was reaped and both its pipes reached EOF), FAILED (text).
 *
 * - Not dumpable: sandbox code (root without CAP_SYS_PTRACE) can neither ptrace it nor open its
 *   /proc/<pid>/fd, where the host's pipes are.
 * - Every descriptor it opens is close-on-exec, and a command's child closes everything above 2
 *   before exec: no command inherits the control pipes.
 * - EOF on stdin (the host went away) kills every command it started and exits.
 *
 * Static, no dependency on the image: it runs in any rootfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
  F_SPAWN = 1, F_GO = 2, F_STDIN = 3, F_STDIN_EOF = 4, F_KILL = 5, F_PAUSE = 6, F_RESUME = 7,
  F_READY = 64, F_STARTED = 65, F_STDOUT = 66, F_STDERR = 67, F_STDIN_ACK = 68, F_EXIT = 69, F_FAILED = 70,
};

#define HEADER 9
#define MAX_EXECS 64
/* The host never sends a bigger frame (it runs larger requests the old way). */
#define MAX_IN_FRAME (1u << 20)
/* The host keeps at most this much stdin unacknowledged per command. */
#define MAX_STDIN_BUFFER (1u << 20)
#define CHUNK 65536

struct exec {
  int used;
  uint32_t id;
  pid_t pid;
  int out, err, in, go;
  int reaped, code, paused, stdin_eof;
  char *inbuf;
  size_t inlen;
};

static struct exec execs[MAX_EXECS];
static unsigned char inframe[HEADER + MAX_IN_FRAME];
static size_t inframe_len;
static unsigned char outframe[HEADER + CHUNK];

static void put32(unsigned char *p, uint32_t v) {
  p[0] = v & 0xff; p[1] = (v >> 8) & 0xff; p[2] = (v >> 16) & 0xff; p[3] = (v >> 24) & 0xff;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void write_all(int fd, const unsigned char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3); /* the host is gone */
    data += n;
    len -= (size_t)n;
  }
}

/* Payload already at outframe + HEADER (or copied there from `data`). */
static void send_frame(int type, uint32_t id, const void *data, size_t len) {
  put32(outframe, (uint32_t)(len + 5));
  outframe[4] = (unsigned char)type;
  put32(outframe + 5, id);
  if (data && len) memcpy(outframe + HEADER, data, len);
  write_all(1, outframe, HEADER + len);
}

static void send_u32(int type, uint32_t id, uint32_t value) {
  unsigned char p[4];
  put32(p, value);
  send_frame(type, id, p, 4);
}

static void send_failed(uint32_t id, const char *what) {
  char text[256];
  int n = snprintf(text, sizeof text, "%s: %s", what, strerror(errno));
  send_frame(F_FAILED, id, text, n < 0 ? 0 : (size_t)n);
}

static struct exec *find(uint32_t id) {
  for (int i = 0; i < MAX_EXECS; i++)
    if (execs[i].used && execs[i].id == id) return &execs[i];
  return NULL;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void finish_if_done(struct exec *e) {
  if (!e->used || !e->reaped || e->out >= 0 || e->err >= 0) return;
  send_u32(F_EXIT, e->id, (uint32_t)e->code);
  close_fd(&e->in);
  close_fd(&e->go);
  free(e->inbuf);
  memset(e, 0, sizeof *e);
}

static void kill_exec(struct exec *e) {
  if (e->pid <= 0 || e->reaped) return;
  /* The child calls setsid first; before it did, its group is still the agent's: kill it alone. */
  if (kill(-e->pid, SIGKILL) != 0) kill(e->pid, SIGKILL);
}

/* In the forked child: becomes the command, or exits 125 (never started) or 1 (bwrap's codes). */
static void run_child(int in, int out, int err, int go, const char *cwd, char **argv, char **envp) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  setsid();
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(125);
  char byte;
  ssize_t n;
  do n = read(go, &byte, 1); while (n < 0 && errno == EINTR);
  if (n != 1) _exit(125); /* the host never let it start */
  /* Nothing above stderr survives into the command. */
  if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
    for (int fd = 3; fd < 1024; fd++) close(fd);
  if (chdir(cwd) != 0) {
    dprintf(2, "sandcast: Can't chdir to %s: %s\n", cwd, strerror(errno));
    _exit(1);
  }
  /* execvp searches the command's PATH, as bwrap did after --clearenv/--setenv. */
  extern char **environ;
  environ = envp;
  execvp(argv[0], argv);
  dprintf(2, "sandcast: execvp %s: %s\n", argv[0], strerror(errno));
  _exit(1);
}

static void spawn(uint32_t id, const unsigned char *p, size_t len) {
  if (find(id) || len < 8) return send_frame(F_FAILED, id, "bad spawn request", 17);
  uint32_t argc = get32(p), envc = get32(p + 4);
  if (argc == 0 || argc > len || envc > len) return send_frame(F_FAILED, id, "bad spawn request", 17);
  /* Strings: cwd, argc args, envc entries, each NUL-terminated, filling the payload exactly. */
  size_t count = 1 + (size_t)argc + envc;
  char **strings = calloc(count + 2, sizeof(char *));
  if (!strings) return send_frame(F_FAILED, id, "out of memory", 13);
  size_t at = 8, seen = 0;
  while (at < len && seen < count) {
    const unsigned char *end = memchr(p + at, 0, len - at);
    if (!end) break;
    strings[seen++] = (char *)(p + at);
    at = (size_t)(end - p) + 1;
  }
  if (seen != count || at != len) {
    free(strings);
    return send_frame(F_FAILED, id, "bad spawn request", 17);
  }
  char *cwd = strings[0];
  char **argv = strings + 1;
  char **envp = calloc(envc + 1, sizeof(char *));
  struct exec *e = NULL;
  for (int i = 0; i < MAX_EXECS && !e; i++)
    if (!execs[i].used) e = &execs[i];
  if (!envp || !e) {
    free(strings);
    free(envp);
    return send_frame(F_FAILED, id, "busy", 4);
  }
  for (uint32_t i = 0; i < envc; i++) envp[i] = strings[1 + argc + i];
  /* argv ends where env began (env is copied out above); strings has room for the NULL. */
  strings[1 + argc] = NULL;
  char **args = argv;

  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, go[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(go, O_CLOEXEC)) {
    send_failed(id, "pipe");
    goto fail;
  }
  pid_t pid = fork();
  if (pid < 0) {
    send_failed(id, "fork");
    goto fail;
  }
  if (pid == 0) run_child(in[0], out[1], err[1], go[0], cwd, args, envp);
  close(in[0]); close(out[1]); close(err[1]); close(go[0]);
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  memset(e, 0, sizeof *e);
  e->used = 1;
  e->id = id;
  e->pid = pid;
  e->in = in[1];
  e->out = out[0];
  e->err = err[0];
  e->go = go[1];
  free(strings);
  free(envp);
  send_u32(F_STARTED, id, (uint32_t)pid);
  return;
fail:
  for (int i = 0; i < 2; i++) {
    if (in[i] >= 0) close(in[i]);
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
    if (go[i] >= 0) close(go[i]);
  }
  free(strings);
  free(envp);
}

static void flush_stdin(struct exec *e) {
  size_t written = 0;
  while (e->in >= 0 && written < e->inlen) {
    ssize_t n = write(e->in, e->inbuf + written, e->inlen - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) { /* the command closed its stdin: drop the rest, as a pipe would */
      close_fd(&e->in);
      written = e->inlen;
      break;
    }
    written += (size_t)n;
  }
  if (written > 0) {
    memmove(e->inbuf, e->inbuf + written, e->inlen - written);
    e->inlen -= written;
    send_u32(F_STDIN_ACK, e->id, (uint32_t)written);
  }
  if (e->inlen == 0 && e->stdin_eof) close_fd(&e->in);
}

static void handle(int type, uint32_t id, const unsigned char *p, size_t len) {
  if (type == F_SPAWN) return spawn(id, p, len);
  struct exec *e = find(id);
  if (!e) return; /* already finished: a late kill or stdin */
  switch (type) {
  case F_GO:
    if (e->go >= 0) {
      (void)!write(e->go, "g", 1);
      close_fd(&e->go);
    }
    break;
  case F_STDIN: {
    if (e->in < 0 || len == 0) break;
    if (e->inlen + len > MAX_STDIN_BUFFER) _exit(4); /* the host broke its window */
    char *grown = realloc(e->inbuf, e->inlen + len);
    if (!grown) _exit(4);
    e->inbuf = grown;
    memcpy(e->inbuf + e->inlen, p, len);
    e->inlen += len;
    flush_stdin(e);
    break;
  }
  case F_STDIN_EOF:
    e->stdin_eof = 1;
    if (e->inlen == 0) close_fd(&e->in);
    break;
  case F_KILL:
    kill_exec(e);
    break;
  case F_PAUSE:
    e->paused = 1;
    break;
  case F_RESUME:
    e->paused = 0;
    break;
  }
}

static void read_control(void) {
  ssize_t n;
  do n = read(0, inframe + inframe_len, sizeof inframe - inframe_len); while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return;
  if (n <= 0) {
    /* The host is gone: nobody reads what the commands print. */
    for (int i = 0; i < MAX_EXECS; i++)
      if (execs[i].used) kill_exec(&execs[i]);
    _exit(0);
  }
  inframe_len += (size_t)n;
  size_t at = 0;
  while (inframe_len - at >= 4) {
    uint32_t len = get32(inframe + at);
    if (len < 5 || len > MAX_IN_FRAME + 5) _exit(4);
    if (inframe_len - at < 4 + (size_t)len) break;
    handle(inframe[at + 4], get32(inframe + at + 5), inframe + at + HEADER, len - 5);
    at += 4 + len;
  }
  memmove(inframe, inframe + at, inframe_len - at);
  inframe_len -= at;
}

static void relay(struct exec *e, int *fd, int type) {
  ssize_t n;
  do n = read(*fd, outframe + HEADER, CHUNK); while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return;
  if (n <= 0) {
    close_fd(fd);
    return finish_if_done(e);
  }
  send_frame(type, e->id, NULL, (size_t)n);
}

static void reap(int sfd) {
  struct signalfd_siginfo info;
  while (read(sfd, &info, sizeof info) > 0) {
  }
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (int i = 0; i < MAX_EXECS; i++) {
      struct exec *e = &execs[i];
      if (!e->used || e->pid != pid) continue;
      e->reaped = 1;
      e->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      finish_if_done(e);
    }
  }
}

int main(void) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  prctl(PR_SET_NAME, "sandcast-agent", 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return 2;
  /* The control pipes must not reach a command even if a dup2 were skipped. */
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);
  fcntl(2, F_SETFD, FD_CLOEXEC);
  send_u32(F_READY, 0, (uint32_t)getpid());

  struct pollfd fds[2 + 3 * MAX_EXECS];
  struct { struct exec *e; int kind; } who[2 + 3 * MAX_EXECS];
  for (;;) {
    int n = 0;
    fds[n] = (struct pollfd){.fd = 0, .events = POLLIN};
    who[n++].e = NULL;
    fds[n] = (struct pollfd){.fd = sfd, .events = POLLIN};
    who[n++].e = NULL;
    for (int i = 0; i < MAX_EXECS; i++) {
      struct exec *e = &execs[i];
      if (!e->used) continue;
      if (!e->paused && e->out >= 0) { fds[n] = (struct pollfd){.fd = e->out, .events = POLLIN}; who[n].e = e; who[n++].kind = 1; }
      if (!e->paused && e->err >= 0) { fds[n] = (struct pollfd){.fd = e->err, .events = POLLIN}; who[n].e = e; who[n++].kind = 2; }
      if (e->in >= 0 && e->inlen > 0) { fds[n] = (struct pollfd){.fd = e->in, .events = POLLOUT}; who[n].e = e; who[n++].kind = 3; }
    }
    if (poll(fds, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      return 2;
    }
    if (fds[1].revents) reap(sfd);
    for (int i = 2; i < n; i++) {
      if (!fds[i].revents) continue;
      struct exec *e = who[i].e;
      if (!e->used) continue;
      if (who[i].kind == 1 && e->out == fds[i].fd) relay(e, &e->out, F_STDOUT);
      else if (who[i].kind == 2 && e->err == fds[i].fd) relay(e, &e->err, F_STDERR);
      else if (who[i].kind == 3 && e->in == fds[i].fd) flush_stdin(e);
    }
    if (fds[0].revents) read_control();
  }
}
