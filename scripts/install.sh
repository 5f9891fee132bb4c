#!/usr/bin/env bash
# Installs the npm dependencies exactly as locked, once per lockfile change. Source or run it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  echo "install: Sandcast needs Node.js 20 or newer (found $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

stamp=node_modules/.sandcast-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "install: npm ci (native modules node-pty and ssh2 build from source)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
