#!/bin/sh
# shellcheck shell=dash
#
# Install what `make e2e` needs: the system packages claude's sandbox and the
# network namespace use (apt), and the agent CLIs pinned in e2e/versions.env
# (npm), into a cache directory keyed by a hash of that file.
#
# The CLIs weigh about 1 GB together and CI runs from a fresh clone on the
# same machine, so a complete install is reused: the marker file `.complete`
# is written last, and a directory without it is never trusted.
#
# Prints the install directory (its node_modules/.bin holds the CLIs) as the
# only line on stdout; everything else goes to stderr.
#
# Environment:
#   BATON_E2E_CACHE  cache root (default: ${XDG_CACHE_HOME:-~/.cache}/baton-e2e)
#   BATON_E2E_SKIP_APT=1  do not install system packages (report them only)
set -eu

say() { printf 'e2e-install: %s\n' "$*" >&2; }
err() {
	say "error: $*"
	exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd)
pins="$root/e2e/versions.env"
[ -f "$pins" ] || err "missing $pins"
# shellcheck source=/dev/null # plain KEY=VALUE pins, read at run time
. "$pins"

# --- system packages -------------------------------------------------------
# command:package pairs. bwrap and socat: claude's own sandbox (workspace
# access); ip: bringing loopback up inside `unshare -n`; tmux: the pseudo-terminal
# of the `baton attach` test.
missing=""
for pair in bwrap:bubblewrap socat:socat ip:iproute2 unshare:util-linux git:git tmux:tmux; do
	cmd=${pair%%:*}
	pkg=${pair#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -z "$missing" ]; then
	say "system packages present (bubblewrap, socat, iproute2, util-linux, git, tmux)"
elif [ "${BATON_E2E_SKIP_APT:-}" = 1 ]; then
	say "warning: missing system packages:$missing (BATON_E2E_SKIP_APT=1: not installing)"
else
	command -v apt-get >/dev/null 2>&1 ||
		err "missing system packages:$missing, and apt-get is not available; install them by hand"
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 ||
			err "missing system packages:$missing; run as root or install them by hand"
		sudo="sudo -n"
	fi
	say "installing system packages:$missing"
	# shellcheck disable=SC2086 # word splitting of the package list is wanted
	if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >&2; then
		say "apt-get install failed; updating the package lists and retrying"
		$sudo apt-get update -q >&2 || err "apt-get update failed: the Debian mirror is unreachable"
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing >&2 ||
			err "could not install:$missing"
	fi
fi

# --- agent CLIs ------------------------------------------------------------
command -v npm >/dev/null 2>&1 || err "npm is not installed (the suite needs node >= 20 and npm)"
hash=$(sha256sum "$pins" | cut -c1-16)
cache=${BATON_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton-e2e}
dir="$cache/$hash"

if [ -f "$dir/.complete" ]; then
	say "reusing $dir"
	printf '%s\n' "$dir"
	exit 0
fi

registry=$(npm config get registry 2>/dev/null || echo "the npm registry")
say "checking that $registry can be reached"
if ! timeout 60 npm ping >/dev/null 2>&1; then
	err "cannot reach $registry: the end-to-end suite installs the pinned agent CLIs from it \
(e2e/versions.env); fix the network or the npm registry setting, or populate $dir from a machine \
that can. Refusing to skip the suite."
fi

mkdir -p "$cache"
rm -rf "$dir"
partial="$dir.partial.$$"
trap 'rm -rf "$partial"' EXIT
mkdir -p "$partial"
printf '{"private": true, "description": "baton e2e: pinned agent CLIs"}\n' >"$partial/package.json"
say "installing $CODEX_NPM $CLAUDE_NPM $PI_NPM $GEMINI_CLI_NPM $OPENCODE_NPM $QWEN_NPM $COPILOT_NPM $KILO_NPM $CLINE_NPM $NANOCODER_NPM $MCP_INSPECTOR_NPM into $dir (about 2 GB)"
# Install scripts must run: claude-code's postinstall puts its native binary
# in place (with --ignore-scripts `claude` is a stub that exits 1).
npm install --prefix "$partial" --no-audit --no-fund --save-exact --loglevel=error \
	"$CODEX_NPM" "$CLAUDE_NPM" "$PI_NPM" "$GEMINI_CLI_NPM" "$OPENCODE_NPM" "$QWEN_NPM" "$COPILOT_NPM" "$KILO_NPM" "$CLINE_NPM" "$NANOCODER_NPM" "$MCP_INSPECTOR_NPM" >&2 ||
	err "npm install failed (see above)"
# Nanocoder's node, in a prefix of its own: its package links `.bin/node`,
# which would put every other CLI on it too.
node22="$partial/node22"
mkdir -p "$node22"
printf '{"private": true, "description": "baton e2e: the node nanocoder needs"}\n' >"$node22/package.json"
say "installing $NANOCODER_NODE_NPM into $dir/node22"
npm install --prefix "$node22" --no-audit --no-fund --save-exact --loglevel=error "$NANOCODER_NODE_NPM" >&2 ||
	err "npm install $NANOCODER_NODE_NPM failed (see above)"

# Check that each CLI runs and is the pinned version (npm can quietly pick
# another one, e.g. claude-code on an old node). Throwaway homes keep ~ clean;
# not under /tmp, where codex refuses to set up its helpers.
check_home="$partial/.version-check"
mkdir -p "$check_home"
bin="$partial/node_modules/.bin"
check() { # name, pinned spec, command...
	name=$1
	want=${2##*@}
	shift 2
	got=$(HOME="$check_home" CODEX_HOME="$check_home/codex" "$@" 2>&1 </dev/null | tr -d '\r') ||
		err "$name does not run: $got"
	case "$got" in
	*"$want"*) say "$name $want ok" ;;
	*) err "$name: expected version $want, got: $got" ;;
	esac
}
mkdir -p "$check_home/codex"
check codex "$CODEX_NPM" "$bin/codex" --version
check claude "$CLAUDE_NPM" "$bin/claude" --version
check pi "$PI_NPM" "$bin/pi" --version
check gemini "$GEMINI_CLI_NPM" "$bin/gemini" --version
# opencode's npm package brings its platform binary as an optional
# dependency; its OpenAI-compatible provider is built in (it ran offline in
# the namespace with an empty cache), so nothing more is fetched at run time.
check opencode "$OPENCODE_NPM" "$bin/opencode" --version
check qwen "$QWEN_NPM" "$bin/qwen" --version
# Copilot's npm package brings its platform binary as an optional dependency.
check copilot "$COPILOT_NPM" "$bin/copilot" --version
# Kilo's too (its postinstall links it: install scripts must run).
check kilo "$KILO_NPM" "$bin/kilo" --version
# Cline's too: its postinstall links the Bun-compiled binary into place.
check cline "$CLINE_NPM" "$bin/cline" --version
check node22 "$NANOCODER_NODE_NPM" "$node22/node_modules/.bin/node" --version
check nanocoder "$NANOCODER_NPM" env PATH="$node22/node_modules/.bin:$PATH" "$bin/nanocoder" --version
check mcp-inspector "$MCP_INSPECTOR_NPM" "$bin/mcp-inspector" -V
rm -rf "$check_home"

# Moving is safe: npm's .bin links are relative.
mv "$partial" "$dir" 2>/dev/null || {
	# Another install finished first; use it.
	[ -f "$dir/.complete" ] || err "could not move $partial to $dir"
}
trap - EXIT
cat "$pins" >"$dir/.complete"
say "installed into $dir"
printf '%s\n' "$dir"
