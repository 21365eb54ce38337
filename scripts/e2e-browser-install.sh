#!/bin/sh
# shellcheck shell=dash
#
# Install what `make e2e-browser` needs: Debian's `chromium` (apt) and a
# pinned `playwright-core` (npm; it drives the browser over the DevTools
# protocol and downloads no browser of its own), into a cache directory keyed
# by the pin, reused once complete (`.complete` is written last).
#
# Prints the install directory (its node_modules holds playwright-core) as
# the only line on stdout; everything else goes to stderr.
#
# Environment:
#   BATON_E2E_CACHE  cache root (default: ${XDG_CACHE_HOME:-~/.cache}/baton-e2e)
set -eu

# The pin: bump it on purpose, never float.
PLAYWRIGHT_CORE_VERSION=1.56.1

say() { printf 'e2e-browser-install: %s\n' "$*" >&2; }
err() {
	say "error: $*"
	exit 1
}

# --- chromium ---------------------------------------------------------------
if [ -x /usr/bin/chromium ]; then
	say "chromium present ($(/usr/bin/chromium --version 2>/dev/null || echo '?'))"
else
	command -v apt-get >/dev/null 2>&1 ||
		err "chromium is missing and apt-get is not available; install Debian's chromium by hand"
	sudo=""
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || err "chromium is missing; run as root or install it by hand"
		sudo="sudo -n"
	fi
	say "installing chromium (apt)"
	if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends chromium >&2; then
		say "apt-get install failed; updating the package lists and retrying"
		$sudo apt-get update -q >&2 || err "apt-get update failed: the Debian mirror is unreachable"
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends chromium >&2 ||
			err "could not install chromium"
	fi
fi

# --- playwright-core ----------------------------------------------------------
command -v npm >/dev/null 2>&1 || err "npm is not installed (the browser test needs node >= 18 and npm)"
cache=${BATON_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton-e2e}
dir="$cache/browser-playwright-core-$PLAYWRIGHT_CORE_VERSION"
if [ -f "$dir/.complete" ]; then
	say "reusing $dir"
	printf '%s\n' "$dir"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
say "installing playwright-core@$PLAYWRIGHT_CORE_VERSION into $dir"
# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: the Debian browser is used, nothing else is fetched.
(cd "$dir" && printf '{"private":true}\n' >package.json &&
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --ignore-scripts --save-exact \
		"playwright-core@$PLAYWRIGHT_CORE_VERSION" >&2) ||
	err "npm could not install playwright-core@$PLAYWRIGHT_CORE_VERSION"
: >"$dir/.complete"
printf '%s\n' "$dir"
