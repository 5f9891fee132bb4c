#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs, starts Postgres and Docker,
# then lint (format, dependency rules, cycles), type-check (tests included) and every test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh
# shellcheck source=scripts/services.sh
source scripts/services.sh
for setup in packages/providers/*/scripts/ci-setup.sh; do
  [ -f "$setup" ] && bash "$setup"
done

echo "== lint"
npm run --silent lint
echo "== typecheck"
npm run --silent typecheck
echo "== tests"
npx vitest run "$@"
