#!/usr/bin/env bash
# Ensures the base image the Docker provider's tests boot from exists in the local engine.
# No registry is reachable in CI, so the image is built from Debian packages with debootstrap and
# imported; the engine keeps it between runs, so this is a no-op once the image exists.
# Idempotent. Usage: ci-setup.sh [image-tag]   (default sandcast-test/debian:bookworm)
set -euo pipefail

IMAGE="${1:-${SANDCAST_DOCKER_TEST_IMAGE:-sandcast-test/debian:bookworm}}"
SUITE="${SANDCAST_DOCKER_TEST_SUITE:-bookworm}"
MIRROR="${SANDCAST_DEBIAN_MIRROR:-}"
# Commands the conformance suite and the Docker tests run inside sandboxes.
REQUIRED_TOOLS="sh cat tr grep mkdir sleep stty wc find stat kill head dd"

log() { printf '[docker ci-setup] %s\n' "$*" >&2; }

if ! docker info >/dev/null 2>&1; then
  log "no Docker engine reachable (DOCKER_HOST=${DOCKER_HOST:-unix:///var/run/docker.sock}); start dockerd first"
  exit 1
fi

has_tools() {
  docker run --rm --network none --entrypoint /bin/sh "$IMAGE" -c \
    "for t in $REQUIRED_TOOLS; do command -v \"\$t\" >/dev/null || { echo \"missing \$t\" >&2; exit 1; }; done" >/dev/null
}

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  if has_tools; then
    log "$IMAGE present"
    exit 0
  fi
  log "$IMAGE lacks required tools; rebuilding"
fi

# One builder at a time: parallel test workers may all find the image missing.
exec 9>"/tmp/sandcast-docker-ci-setup.lock"
flock 9
if docker image inspect "$IMAGE" >/dev/null 2>&1 && has_tools; then
  log "$IMAGE present (built by a concurrent run)"
  exit 0
fi

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  log "installing $*"
  as_root apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "$@" >/dev/null
}
# A fresh Debian machine lacks debootstrap; it (and the archive keys it checks the mirror with) is
# needed only to build the image.
command -v debootstrap >/dev/null || apt_install debootstrap debian-archive-keyring
command -v debootstrap >/dev/null || { log "debootstrap could not be installed (apt-get install debootstrap)"; exit 1; }
ROOT="$(mktemp -d /tmp/sandcast-rootfs.XXXXXX)"
trap 'rm -rf "$ROOT"' EXIT
log "building $IMAGE with debootstrap --variant=minbase $SUITE (about a minute)"
# shellcheck disable=SC2086
debootstrap --variant=minbase "$SUITE" "$ROOT" $MIRROR >"$ROOT.log" 2>&1 || {
  tail -n 30 "$ROOT.log" >&2
  rm -f "$ROOT.log"
  exit 1
}
rm -f "$ROOT.log"
# Trim what a sandbox never needs: package caches and lists.
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/tmp/*
tar --numeric-owner -C "$ROOT" -c . | docker import \
  --change 'CMD ["/bin/bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$IMAGE" >/dev/null
has_tools
log "built $IMAGE"
