#!/usr/bin/env bash
# Starts Sandcast on its embedded defaults: PGlite in ~/.sandcast, http://127.0.0.1:7420.
# Installs the npm dependencies on first run, and the local provider's runtime where it can;
# builds the web UI when it is missing or stale.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
for setup in packages/providers/*/scripts/runtime-setup.sh; do
  [ -f "$setup" ] && { bash "$setup" || echo "start: $setup failed; that provider will report itself unavailable"; }
done
# The web UI: build it when dist is missing or older than its sources.
if [ ! -f apps/web/dist/index.html ] || [ -n "$(find apps/web/src apps/web/index.html apps/web/vite.config.ts apps/web/package.json -newer apps/web/dist/index.html -print -quit)" ]; then
  echo "start: building the web UI (apps/web)"
  npm run --silent build -w apps/web >/dev/null
fi
exec npx sandcast start
