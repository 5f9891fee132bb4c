#!/bin/sh
# Builds the sandbox's pid 1 (native/sandcast-init.c) as a static binary, once per source change:
# native/build/sandcast-init-<first 16 hex of the source's sha256>. Prints the binary's path.
# ci-setup.sh and runtime-setup.sh run it; the provider runs it too when the binary is missing.
set -eu
dir=$(cd "$(dirname "$0")/.." && pwd)
src="$dir/native/sandcast-init.c"
hash=$(sha256sum "$src" | cut -c1-16)
out="$dir/native/build/sandcast-init-$hash"
if [ -x "$out" ]; then echo "$out"; exit 0; fi
if ! command -v gcc >/dev/null 2>&1; then
  echo "build-init: gcc is missing; install it (apt-get install gcc libc6-dev) or run packages/providers/local/scripts/ci-setup.sh" >&2
  exit 1
fi
mkdir -p "$dir/native/build"
tmp="$out.$$.tmp"
if ! gcc -static -O2 -Wall -o "$tmp" "$src" >&2; then
  rm -f "$tmp"
  echo "build-init: compiling $src failed; a static build needs libc6-dev (apt-get install libc6-dev)" >&2
  exit 1
fi
mv "$tmp" "$out"
echo "$out"
