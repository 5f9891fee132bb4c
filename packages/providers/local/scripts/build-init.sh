#!/bin/sh
# Builds the sandbox's pid 1 (native/sandcast-init.c) with provider-sdk's build-static.sh:
# native/build/sandcast-init-<source hash>. Prints the binary's path.
# ci-setup.sh and runtime-setup.sh run it; the provider runs it too when the binary is missing.
set -eu
dir=$(cd "$(dirname "$0")/.." && pwd)
exec sh "$dir/../../provider-sdk/scripts/build-static.sh" "$dir/native/sandcast-init.c" sandcast-init
