#!/usr/bin/env bash
# Starts Sandcast on its embedded defaults: PGlite in ~/.sandcast, http://127.0.0.1:7420.
# Installs the npm dependencies on first run, and the local provider's runtime where it can.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
for setup in packages/providers/*/scripts/runtime-setup.sh; do
  [ -f "$setup" ] && { bash "$setup" || echo "start: $setup failed; that provider will report itself unavailable"; }
done
exec npx sandcast start
