#!/usr/bin/env bash
# `npm start`: opens the Mailscope desktop app. Where Electron's binary cannot
# be had (no download possible, or no display), says so in one line and serves
# the same UI in the browser instead.
#   npm start -- --browser     always serve in the browser
#   MAILSCOPE_PORT=5173        the browser port
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "$0")/env.sh"
cd "$MAILSCOPE_ROOT"
export PATH="$MAILSCOPE_ROOT/node_modules/.bin:$PATH"

force_browser=0
for arg in "$@"; do [ "$arg" = "--browser" ] && force_browser=1; done

node scripts/build.mjs

reason=""
if [ "$force_browser" = 1 ]; then
  reason="--browser given"
elif ! install_log="$(node node_modules/electron/install.js 2>&1)"; then
  reason="Electron's binary could not be downloaded ($(printf '%s' "$install_log" | tail -n 1))"
elif [ "$(uname -s)" = Linux ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  reason="no display to open a window on (DISPLAY is not set)"
fi

if [ -z "$reason" ]; then
  exec electron .
fi

port="${MAILSCOPE_PORT:-5173}"
mailscope_say "desktop app unavailable: $reason; serving the same UI in the browser at http://localhost:$port/"
exec vite preview --config vite.config.ts --host 127.0.0.1 --port "$port" --strictPort
