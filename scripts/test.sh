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

# Lint and type-check read the same files and neither writes any: they run side by side (each
# mostly on one core), each into its own log, printed whole under its step's name once both end.
checks_dir="$(mktemp -d)"
STEP="lint (npm run lint) and typecheck (npm run typecheck)"
echo "== $STEP, side by side"
npm run --silent lint >"$checks_dir/lint.log" 2>&1 &
lint_pid=$!
npm run --silent typecheck >"$checks_dir/typecheck.log" 2>&1 &
typecheck_pid=$!
lint_status=0
typecheck_status=0
wait "$lint_pid" || lint_status=$?
wait "$typecheck_pid" || typecheck_status=$?
echo "== lint (npm run lint)"
cat "$checks_dir/lint.log"
echo "== typecheck (npm run typecheck)"
cat "$checks_dir/typecheck.log"
rm -rf "$checks_dir"
if [ "$lint_status" -ne 0 ]; then
  STEP="lint (npm run lint)"
  exit "$lint_status"
fi
if [ "$typecheck_status" -ne 0 ]; then
  STEP="typecheck (npm run typecheck)"
  exit "$typecheck_status"
fi
STEP="tests (npx vitest run)"
echo "== $STEP"
npx vitest run "$@"

if [ ${#failed_setups[@]} -gt 0 ]; then
  STEP="provider set-up (${failed_setups[*]})"
  exit 1
fi
STEP="done"
