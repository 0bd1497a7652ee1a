#!/usr/bin/env bash
# Runs a command with the project's Node.js and dependencies in place.
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"
export PATH="$MAILSCOPE_ROOT/node_modules/.bin:$PATH"
exec "$@"
