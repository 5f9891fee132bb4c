#!/bin/sh
# Builds the port relay (native/sandcast-port-relay.c) as a static binary, once per source change:
# native/build/sandcast-port-relay-<first 16 hex of the source's sha256>. Prints the binary's path.
# The server runs it on the first forwarded connection when the binary is missing.
set -eu
dir=$(cd "$(dirname "$0")/.." && pwd)
src="$dir/native/sandcast-port-relay.c"
hash=$(sha256sum "$src" | cut -c1-16)
out="$dir/native/build/sandcast-port-relay-$hash"
if [ -x "$out" ]; then echo "$out"; exit 0; fi
if ! command -v gcc >/dev/null 2>&1; then
  echo "build-port-relay: gcc is missing; install it (apt-get install gcc libc6-dev)" >&2
  exit 1
fi
mkdir -p "$dir/native/build"
tmp="$out.$$.tmp"
if ! gcc -static -O2 -Wall -o "$tmp" "$src" >&2; then
  rm -f "$tmp"
  echo "build-port-relay: compiling $src failed; a static build needs libc6-dev (apt-get install libc6-dev)" >&2
  exit 1
fi
mv "$tmp" "$out"
echo "$out"
