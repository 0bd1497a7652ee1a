#!/usr/bin/env bash
# `npm run screenshots`: the README's pictures (docs/screenshots/*.png), made again from the browser build by
# e2e/readme.screenshots.ts — the one place they come from (`npm test` writes no tracked file). Builds first.
#   npm run screenshots -- -g timeline.png     only the pictures whose test names match
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"
cd "$MAILSCOPE_ROOT"
export PATH="$MAILSCOPE_ROOT/node_modules/.bin:$PATH"
node scripts/build.mjs
MAILSCOPE_README_SCREENSHOTS=1 playwright test --project readme "$@"
