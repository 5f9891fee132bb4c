#!/bin/sh
# Builds a provider's small C helper as a static binary (it must run inside any image), once per
# source change: <source dir>/build/<name>-<first 16 hex of the source's sha256>. Prints its path.
# Usage: build-static.sh <source.c> <name>. Used for the local provider's sandbox init and the port
# relay; their callers build on first use when the binary is missing.
set -eu
src=$1
name=$2
hash=$(sha256sum "$src" | cut -c1-16)
out="$(dirname "$src")/build/$name-$hash"
if [ -x "$out" ]; then echo "$out"; exit 0; fi
if ! command -v gcc >/dev/null 2>&1; then
  echo "build-static: gcc is missing; install it (apt-get install gcc libc6-dev) to build $name" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
tmp="$out.$$.tmp"
if ! gcc -static -O2 -Wall -o "$tmp" "$src" >&2; then
  rm -f "$tmp"
  echo "build-static: compiling $src failed; a static build needs libc6-dev (apt-get install libc6-dev)" >&2
  exit 1
fi
mv "$tmp" "$out"
echo "$out"
