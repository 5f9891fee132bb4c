#!/bin/sh
# Installs what the local provider needs (its tests and `scripts/start.sh` alike) on a Debian/Ubuntu
# machine, and builds the sandbox init. Idempotent.
# The tests run as root (overlay mounts, namespaces, cgroups): run vitest with sudo -E or as root.
set -eu
missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v nsenter >/dev/null 2>&1 || missing="$missing util-linux"
command -v mkfifo >/dev/null 2>&1 || missing="$missing coreutils"
command -v script >/dev/null 2>&1 || missing="$missing bsdutils"
command -v mkfs.ext4 >/dev/null 2>&1 || missing="$missing e2fsprogs"
# The disk pool (ADR 0031): sandbox disks on XFS with reflinks, so a fork clones its source's disk.
# Without it the provider still runs, formatting every disk and copying on fork (it warns).
command -v mkfs.xfs >/dev/null 2>&1 || missing="$missing xfsprogs"
command -v losetup >/dev/null 2>&1 || missing="$missing mount"
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
# The sandbox init is linked statically (it runs in any image): it needs libc.a.
[ -f /usr/include/stdio.h ] && ls /usr/lib/*/libc.a /usr/lib/libc.a >/dev/null 2>&1 || missing="$missing libc6-dev"
# Image imports decompress bzip2, xz and zstd archives with these tools.
command -v bzip2 >/dev/null 2>&1 || missing="$missing bzip2"
command -v xz >/dev/null 2>&1 || missing="$missing xz-utils"
command -v zstd >/dev/null 2>&1 || missing="$missing zstd"
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
# Ubuntu 24.04 restricts unprivileged user namespaces through AppArmor; the provider runs bwrap
# as root without a user namespace, so nothing needs relaxing. Check overlayfs is there.
grep -q overlay /proc/filesystems || ${SUDO:-} modprobe overlay || true
bwrap --version
# The sandbox's pid 1 (native/sandcast-init.c), built once per source change.
sh "$(dirname "$0")/build-init.sh" >/dev/null
# The exec agent (native/sandcast-exec-agent.c, ADR 0030) and the boot helper (native/sandcast-boot.c,
# ADR 0034); the provider also builds them on first use.
sh "$(dirname "$0")/../../../provider-sdk/scripts/build-static.sh" "$(dirname "$0")/../native/sandcast-boot.c" sandcast-boot >/dev/null
sh "$(dirname "$0")/../../../provider-sdk/scripts/build-static.sh" "$(dirname "$0")/../native/sandcast-exec-agent.c" sandcast-exec-agent >/dev/null
