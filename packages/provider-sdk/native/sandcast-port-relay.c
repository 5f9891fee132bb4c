/*
 * sandcast-port-relay <netns path> <port>
 *
 * Joins the network namespace at <netns path> (a sandbox's /proc/<pid>/ns/net), connects to
 * 127.0.0.1:<port> there, writes one byte '+' on stdout once connected, then relays
 * stdin -> socket and socket -> stdout until both directions end. Only the network namespace is
 * entered: the relay keeps the host's filesystem and gives the sandbox nothing. On failure it
 * prints "<ERRNO NAME>: <text>" on stderr and exits 1. (docs/decisions/0015-sandbox-ports.md)
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
#include <sys/socket.h>
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

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: sandcast-port-relay <netns path> <port 1-65535>\n");
    return 2;
  }
  char *end = NULL;
  long port = strtol(argv[2], &end, 10);
  if (*argv[2] == '\0' || *end != '\0' || port < 1 || port > 65535) {
    fprintf(stderr, "usage: sandcast-port-relay <netns path> <port 1-65535>\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  int ns = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (ns < 0) return fail("open the network namespace");
  if (setns(ns, CLONE_NEWNET) != 0) return fail("enter the network namespace");
  close(ns);
  int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return fail("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) return fail("connect");
  int one = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (write_all(1, "+", 1) != 0) return 0;

  static char buf[65536];
  int in_open = 1, out_open = 1;
  while (in_open || out_open) {
    struct pollfd fds[2] = {{.fd = in_open ? 0 : -1, .events = POLLIN}, {.fd = out_open ? sock : -1, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return fail("poll");
    }
    if (in_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = read(0, buf, sizeof buf);
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
      } else if (write_all(1, buf, n) != 0) {
        return 0;
      }
    }
  }
  return 0;
}
