#!/bin/sh
# shellcheck disable=SC2030,SC2031 # each CLI runs in a subshell with its own HOME, on purpose
# Install this repository as a plugin with the real CLIs, each in a throwaway
# home, and check what they report. For the end-to-end suite (which installs
# the CLIs and owns the mock model server); this script needs no network.
#   CLAUDE=/path/to/claude CODEX=/path/to/codex PI=/path/to/pi scripts/plugin-cli-check.sh
# A CLI whose variable is unset is skipped (and said so). Checks:
#   claude: `plugin validate --strict` on the repository and on plugin/ (also
#           `--profile directory`), `plugin marketplace add` + `plugin install
#           baton@<marketplace>`, `plugin details` lists the skill `peer`;
#   codex:  `plugin marketplace add` + `plugin add baton@<marketplace>`, and
#           the installed copy's bin/baton --version runs (modes kept);
#   pi:     `pi install <repo>` and `pi list` shows it.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
MARKET=$(sed -n 's/^  "name": "\(.*\)",$/\1/p' "$ROOT/.claude-plugin/marketplace.json" | head -n 1)
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n 1)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/baton-plugin-check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT INT TERM
failures=0
say() { printf 'plugin-cli-check: %s\n' "$*" >&2; }
ok() { say "ok    $*"; }
bad() { say "FAIL  $*"; failures=$((failures + 1)); }

# run NAME CMD...: run with output kept in $scratch/NAME.log
run() {
    name=$1
    shift
    if "$@" >"$scratch/$name.log" 2>&1; then return 0; fi
    sed 's/^/    /' "$scratch/$name.log" >&2
    return 1
}

if [ -n "${CLAUDE-}" ]; then
    home=$scratch/claude-home
    mkdir -p "$home/.claude"
    (
        failures=0
        export HOME="$home" CLAUDE_CONFIG_DIR="$home/.claude"
        for target in "$ROOT" "$ROOT/plugin"; do
            if run validate "$CLAUDE" plugin validate --strict "$target"; then ok "claude plugin validate --strict $target"; else bad "claude plugin validate --strict $target"; fi
        done
        if run validate-dir "$CLAUDE" plugin validate --strict --profile directory "$ROOT/plugin"; then
            ok "claude plugin validate --strict --profile directory plugin/"
        else bad "claude plugin validate --strict --profile directory plugin/"; fi
        if run add "$CLAUDE" plugin marketplace add "$ROOT" && run install "$CLAUDE" plugin install "baton@$MARKET"; then
            ok "claude plugin marketplace add + install baton@$MARKET"
        else bad "claude plugin marketplace add + install"; fi
        if run details "$CLAUDE" plugin details "baton@$MARKET" && grep -q 'Skills (1) *peer' "$scratch/details.log" &&
            grep -q "^baton $VERSION" "$scratch/details.log"; then
            ok "claude plugin details: baton $VERSION with the skill peer"
        else bad "claude plugin details does not show baton $VERSION with the skill peer"; fi
        exit "$failures"
    ) || failures=$((failures + $?))
else
    say "skip  claude (set CLAUDE=/path/to/claude)"
fi

if [ -n "${CODEX-}" ]; then
    home=$scratch/codex-home
    mkdir -p "$home"
    (
        failures=0
        export CODEX_HOME="$home"
        if run cadd "$CODEX" plugin marketplace add "$ROOT" && run cplugin "$CODEX" plugin add "baton@$MARKET"; then
            ok "codex plugin marketplace add + plugin add baton@$MARKET"
        else bad "codex plugin marketplace add + plugin add"; fi
        shim=$home/plugins/cache/$MARKET/baton/$VERSION/bin/baton
        if out=$("$shim" --version 2>&1) && [ "${out#baton "$VERSION" }" != "$out" ]; then
            ok "codex's installed copy runs: $out"
        else bad "codex's installed copy $shim --version: ${out:-did not run}"; fi
        exit "$failures"
    ) || failures=$((failures + $?))
else
    say "skip  codex (set CODEX=/path/to/codex)"
fi

if [ -n "${PI-}" ]; then
    home=$scratch/pi-home
    mkdir -p "$home"
    (
        failures=0
        export HOME="$home" PI_OFFLINE=1
        if run pinstall "$PI" install "$ROOT" && run plist "$PI" list && grep -q "$ROOT" "$scratch/plist.log"; then
            ok "pi install + pi list shows $ROOT"
        else bad "pi install / pi list"; fi
        exit "$failures"
    ) || failures=$((failures + $?))
else
    say "skip  pi (set PI=/path/to/pi)"
fi

[ "$failures" = 0 ] || { say "$failures check(s) failed"; exit 1; }
say "all checks passed"
