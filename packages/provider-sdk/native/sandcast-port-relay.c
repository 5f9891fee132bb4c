/*
 * sandcast-port-relay <netns path> <port>
 *
 * Joins the network namespace at <netns path> (a sandbox's /proc/<pid>/ns/net), connects to
 * 127.0.0.1:<port> there, writes one byte '+' on stdout once connected, then relays
 * stdin -> socket and socket -> stdout until both directions end. Only the network namespace is
 * entered: the relay keeps the host's filesystem and gives the sandbox nothing. On failure it
 * prints "<ERRNO NAME>: <text>" on stderr and exits 1. (docs/decisions/0015-sandbox-ports.md)
 *
 * sandcast-port-relay --listen <netns path> <port> <unix socket path>
 *
 * The other direction (the egress proxy, docs/decisions/0027-egress-proxy.md): joins the network
 * namespace, listens on 127.0.0.1:<port> there, writes '+' on stdout once listening, and relays
 * each accepted connection to the unix socket at <unix socket path> — a path in the host's
 * filesystem, which the relay still sees because it entered no mount namespace. One child per
 * connection; the listener dies with its parent (the Sandcast server) or on SIGTERM.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what) {
  const char *name = errno == ECONNREFUSED ? "ECONNREFUSED" : "ERROR";
  fprintf(stderr, "%s: %s: %s\n", name, what, strerror(errno));
  return 1;
}

static int write_all(int fd, const char *buf, ssize_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, (size_t)len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += n;
    len -= n;
  }
  return 0;
}

/* Relays in_fd -> sock and sock -> out_fd until the socket's side ends (in_fd may equal out_fd). */
static int relay(int in_fd, int out_fd, int sock) {
  static char buf[65536];
  int in_open = 1, out_open = 1;
  while (in_open || out_open) {
    struct pollfd fds[2] = {{.fd = in_open ? in_fd : -1, .events = POLLIN}, {.fd = out_open ? sock : -1, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return fail("poll");
    }
    if (in_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = read(in_fd, buf, sizeof buf);
      if (n <= 0) {
        in_open = 0;
        shutdown(sock, SHUT_WR);
      } else if (write_all(sock, buf, n) != 0) {
        return 0;
      }
    }
    if (out_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = read(sock, buf, sizeof buf);
      if (n <= 0) {
        /* The server closed: nothing more can reach it either. */
        return 0;
      } else if (write_all(out_fd, buf, n) != 0) {
        return 0;
      }
    }
  }
  return 0;
}

static long parse_port(const char *text) {
  char *end = NULL;
  long port = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || port < 1 || port > 65535) return -1;
  return port;
}

static int enter_netns(const char *path) {
  int ns = open(path, O_RDONLY | O_CLOEXEC);
  if (ns < 0) return fail("open the network namespace");
  if (setns(ns, CLONE_NEWNET) != 0) return fail("enter the network namespace");
  close(ns);
  return 0;
}

/*
 * Connections relayed at once: each is a process on the host, outside the sandbox's limits, so a
 * sandbox opening thousands is refused past this many (they are accepted and closed at once).
 */
#define MAX_CONNECTIONS 256
static volatile sig_atomic_t active = 0;

static void reap(int sig) {
  (void)sig;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) active--;
  errno = saved;
}

/* --listen: accept on the sandbox's loopback, relay each connection to the host's unix socket. */
static int listen_mode(const char *netns, long port, const char *unix_path) {
  struct sockaddr_un target = {.sun_family = AF_UNIX};
  if (strlen(unix_path) >= sizeof target.sun_path) {
    fprintf(stderr, "ERROR: the unix socket path is longer than %zu bytes\n", sizeof target.sun_path - 1);
    return 2;
  }
  strcpy(target.sun_path, unix_path);
  /* The Sandcast server going away takes the listener with it; the next server attaches anew. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return fail("prctl");
  if (getppid() == 1) return 1;
  if (enter_netns(netns) != 0) return 1;
  int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return fail("socket");
  int one = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(server, (struct sockaddr *)&addr, sizeof addr) != 0) return fail("bind");
  if (listen(server, 128) != 0) return fail("listen");
  struct sigaction on_child = {.sa_handler = reap, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
  sigemptyset(&on_child.sa_mask);
  sigaction(SIGCHLD, &on_child, NULL);
  if (write_all(1, "+", 1) != 0) return 1;
  for (;;) {
    int client = accept4(server, NULL, NULL, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
      return fail("accept");
    }
    if (active >= MAX_CONNECTIONS) {
      close(client);
      continue;
    }
    /* The count goes up before the child's exit can bring it down. */
    sigset_t block, previous;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &previous);
    pid_t child = fork();
    if (child == 0) {
      sigprocmask(SIG_SETMASK, &previous, NULL);
      /* A closed listener (the sandbox's egress detached) cuts its connections too. */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      close(server);
      int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (upstream < 0 || connect(upstream, (struct sockaddr *)&target, sizeof target) != 0) _exit(1);
      setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      /* Client bytes go up, proxy bytes come back; the relay ends when the proxy closes. */
      relay(client, client, upstream);
      _exit(0);
    }
    if (child > 0) active++;
    sigprocmask(SIG_SETMASK, &previous, NULL);
    close(client);
  }
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc == 5 && strcmp(argv[1], "--listen") == 0) {
    long port = parse_port(argv[3]);
    if (port > 0) return listen_mode(argv[2], port, argv[4]);
  }
  if (argc != 3 || parse_port(argv[2]) < 0) {
    fprintf(stderr, "usage: sandcast-port-relay <netns path> <port 1-65535>\n"
                    "       sandcast-port-relay --listen <netns path> <port 1-65535> <unix socket path>\n");
    return 2;
  }
  long port = parse_port(argv[2]);
  if (enter_netns(argv[1]) != 0) return 1;
  int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return fail("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) return fail("connect");
  int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (write_all(1, "+", 1) != 0) return 0;
  return relay(0, 1, sock);
}
