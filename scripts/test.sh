#!/usr/bin/env bash
# `npm test`: every check of the project, in one run — typecheck, lint, format,
# generated files up to date, unit
# tests (Node and Chromium), end-to-end tests (Chromium, and Electron where its
# binary exists). Ends with one plain line `N passed, N failed, N skipped`
# summing every suite; exits non-zero when anything failed.
#   npm test -- --quick     skip the end-to-end tests
set -uo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh" || exit 1
cd "$MAILSCOPE_ROOT"
export PATH="$MAILSCOPE_ROOT/node_modules/.bin:$PATH"

quick=0
for arg in "$@"; do [ "$arg" = "--quick" ] && quick=1; done

reports="$MAILSCOPE_ROOT/.reports"
rm -rf "$reports" && mkdir -p "$reports"

# Debian's Chromium runs the browser tests; install it when missing (root only).
if [ -z "${MAILSCOPE_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    mailscope_say "installing Debian's Chromium for the browser tests (apt-get install chromium)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$reports/apt.log" 2>&1 ||
      mailscope_say "could not install chromium: see .reports/apt.log"
  else
    mailscope_say "no /usr/bin/chromium: install Debian's chromium package, or set MAILSCOPE_CHROMIUM to a Chromium binary"
  fi
fi

# The one list of steps: each runs below, and the summarizer is handed the same list, so a step
# that did not leave a status (or a status of a step not listed) counts as a failure.
steps=(typecheck lint format generated build unit)
[ "$quick" = 0 ] && steps+=(e2e)

run_step() { # name
  case "$1" in
    typecheck) node scripts/typecheck.mjs ;;
    # ESLint, then Electron's security checks (electronegativity; exceptions explained in electronegativity.json).
    lint) eslint --max-warnings 0 . && node scripts/electronegativity.mjs ;;
    format) prettier --check --log-level warn . ;;
    # Generated files (JSON Schemas, docs/rules.md) must match their sources.
    generated) bash -c 'status=0; for f in scripts/gen-*.ts; do node "$f" --check || status=1; done; exit $status' ;;
    build) node scripts/build.mjs ;;
    unit) vitest run --reporter=default --reporter=json --outputFile.json="$reports/vitest.json" ;;
    e2e) PLAYWRIGHT_JSON_OUTPUT_NAME="$reports/playwright.json" playwright test --reporter=list,json ;;
    *)
      echo "no command for the step $1" >&2
      return 1
      ;;
  esac
}

for name in "${steps[@]}"; do
  printf '\n== %s ==\n' "$name"
  if run_step "$name"; then echo "pass" >"$reports/$name.status"; else echo "fail" >"$reports/$name.status"; fi
done

summary_args=(--steps "$(IFS=,; echo "${steps[*]}")")
[ "$quick" = 1 ] && summary_args+=(--quick)
node scripts/test-summary.mjs "$reports" "${summary_args[@]}"
