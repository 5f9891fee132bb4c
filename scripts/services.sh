#!/usr/bin/env bash
# Installs and starts the system services the full test suite needs:
# a Postgres 15 cluster on a loopback port, a Docker engine without a default bridge, and OpenSSH.
# Idempotent: anything already running is reused. Source it to get the exported variables.
set -euo pipefail

SANDCAST_PG_PORT="${SANDCAST_PG_PORT:-55432}"
SANDCAST_PG_DIR="${SANDCAST_PG_DIR:-/tmp/sandcast-test-pg}"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "services: installing ${missing[*]}"
  as_root apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q "${missing[@]}" >/dev/null
}

start_postgres() {
  local bindir
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$bindir" ]; then apt_install postgresql; bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1); fi
  if ! pg_isready -q -h 127.0.0.1 -p "$SANDCAST_PG_PORT" 2>/dev/null; then
    if [ ! -f "$SANDCAST_PG_DIR/PG_VERSION" ]; then
      as_root mkdir -p "$SANDCAST_PG_DIR"
      as_root chown postgres:postgres "$SANDCAST_PG_DIR"
      su postgres -s /bin/sh -c "$bindir/initdb -D '$SANDCAST_PG_DIR' -A trust -U postgres >/dev/null"
    fi
    su postgres -s /bin/sh -c "$bindir/pg_ctl -D '$SANDCAST_PG_DIR' -l '$SANDCAST_PG_DIR/server.log' -o \"-h 127.0.0.1 -p $SANDCAST_PG_PORT -k /tmp -c max_connections=200 -c fsync=off\" -w start >/dev/null"
  fi
  export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:${SANDCAST_PG_PORT}/postgres"
  echo "services: postgres $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$SANDCAST_PG_PORT"
}

start_docker() {
  if docker info >/dev/null 2>&1; then echo "services: docker engine already running"; return 0; fi
  command -v dockerd >/dev/null || apt_install docker.io
  # No default bridge and no iptables: containers get loopback only unless given host networking.
  nohup dockerd --bridge=none --iptables=false >/tmp/sandcast-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { echo "services: dockerd did not start, see /tmp/sandcast-dockerd.log"; return 1; }
  echo "services: docker engine started"
}

start_postgres
start_docker
# The end-to-end suite drives Debian's Chromium (tests/e2e).
apt_install chromium
# The terminal and SSH gateway tests drive the real OpenSSH client and server.
apt_install openssh-client openssh-server
# The egress tests build a network namespace with a veth pair (ip), sign a throwaway TLS
# certificate (openssl), reach through the proxy from a host-image sandbox (curl), and build the
# static relay (gcc, libc6-dev).
apt_install iproute2 openssl curl gcc libc6-dev
# The local provider's disk pool (ADR 0031): forks clone sandbox disks on XFS with reflinks.
apt_install xfsprogs
