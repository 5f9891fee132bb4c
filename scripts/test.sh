#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs, starts Postgres and Docker,
# then lint (format, dependency rules, cycles), type-check (tests included) and every test.
# Each step says its name; a step that fails says so by name, and the run stops there — except a
# provider's set-up, which is reported and the run goes on (that provider's tests then skip, or
# fail under CI=true, with the reason).
set -euo pipefail
cd "$(dirname "$0")/.."

STEP="starting"
trap 'status=$?; [ "$status" -ne 0 ] && echo "test: step \"$STEP\" failed (exit $status); see the lines above" >&2' EXIT

STEP="install npm dependencies (scripts/install.sh)"
echo "== $STEP"
bash scripts/install.sh

STEP="start Postgres, Docker and OpenSSH (scripts/services.sh)"
echo "== $STEP"
# shellcheck source=scripts/services.sh
source scripts/services.sh

failed_setups=()
for setup in packages/providers/*/scripts/ci-setup.sh; do
  [ -f "$setup" ] || continue
  STEP="provider set-up $setup"
  echo "== $STEP"
  if ! bash "$setup"; then
    echo "test: $setup failed; continuing (its provider's tests will say why they cannot run)" >&2
    failed_setups+=("$setup")
  fi
done

STEP="lint (npm run lint)"
echo "== $STEP"
npm run --silent lint
STEP="typecheck (npm run typecheck)"
echo "== $STEP"
npm run --silent typecheck
STEP="tests (npx vitest run)"
echo "== $STEP"
npx vitest run "$@"

if [ ${#failed_setups[@]} -gt 0 ]; then
  STEP="provider set-up (${failed_setups[*]})"
  exit 1
fi
STEP="done"
