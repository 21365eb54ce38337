#!/usr/bin/env bash
# `make bench-tab`: the browser tab's memory over 30 minutes of streaming
# (issue 13): N_PEERS fake peers stream while headless Chromium shows the
# fleet and one job's live transcript; every SAMPLE_S a forced GC, then the JS
# heap, DOM nodes, listeners, transcript lines and renderer RSS; a summary and
# a verdict "flat" / "NOT flat" (bench/tab-memory.mjs does the work).
# Runs inside a loopback-only network namespace when it can (as `make e2e-browser`).
# Usage: bench/tab-memory.sh  (needs node >= 18, npm, python3, git; installs
# chromium and playwright-core with scripts/e2e-browser-install.sh)
# Knobs: BATON=path (skip the build), N_PEERS (50), DURATION_S (1800), SAMPLE_S (60), WARMUP_S (120).
# Exit status: 0 flat, 2 not flat, 1 the benchmark itself failed.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench/tab-memory.sh: needs $1" >&2; exit 1; }; }
need git
need python3
need node

if [ -z "${BATON:-}" ]; then
    cargo build --release --locked --quiet
    BATON="$PWD/target/release/baton"
fi
dir=$(scripts/e2e-browser-install.sh) || {
    echo "bench/tab-memory.sh: installing chromium/playwright-core failed (see above)" >&2
    exit 1
}
export BATON BATON_E2E_BROWSER_DIR="$dir"
echo "baton commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (+ local changes)')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
run="node bench/tab-memory.mjs"
if unshare -n true 2>/dev/null; then
    echo "bench-tab: inside a loopback-only network namespace (unshare -n)"
    exec unshare -n sh -c "ip link set lo up && exec $run"
elif unshare -rn true 2>/dev/null; then
    echo "bench-tab: inside a loopback-only user+network namespace (unshare -rn)"
    exec unshare -rn sh -c "ip link set lo up && exec $run"
else
    echo "bench-tab: WARNING: cannot create a network namespace here; running in the host namespace" >&2
    exec $run
fi
