#!/usr/bin/env bash
# The bound on a test command's log (`make bench-test-log`): a `--test-cmd`
# that prints SIZE_MB megabytes (default 300, the size seen in issue 29)
# after a fake codex's worktree run. Prints how much of it `test.log` keeps
# (its end: 16 MiB at most) and baton's peak resident memory (VmHWM, polled
# every 20 ms; target: under 64 MB), with the wall time.
# Knobs: SIZE_MB, BATON (default: build target/release/baton first).
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE_MB=${SIZE_MB:-300}
if [ -z "${BATON-}" ]; then
	cargo build --release --locked --quiet
	BATON=$PWD/target/release/baton
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-bench-test-log.XXXXXX")
trap 'rm -rf "$work"' EXIT
export BATON_STATE_DIR="$work/state" GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p "$work/bin" "$work/repo"
printf '#!/bin/sh\ncat > /dev/null\necho x >> file.txt\nexec cat "%s"\n' \
	"$PWD/tests/fixtures/codex/codex-exec-basic.jsonl" > "$work/bin/codex"
chmod +x "$work/bin/codex"
(
	cd "$work/repo"
	git init -q -b main
	echo a > file.txt
	git add file.txt
	git -c user.name=b -c user.email=b@b commit -qm init
)

cmd="head -c $((SIZE_MB << 20)) /dev/zero | tr '\\0' x; echo; echo the end"
t0=$EPOCHREALTIME
(cd "$work/repo" && PATH="$work/bin:$PATH" exec "$BATON" run --agent codex --worktree \
	--test-cmd "$cmd" go > "$work/out.json") &
pid=$!
peak=0
while [ -r "/proc/$pid/status" ] && ! grep -q '^State:.*Z' "/proc/$pid/status"; do
	hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
	if [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ]; then peak=$hwm; fi
	sleep 0.02
done
code=0
wait "$pid" || code=$?
t1=$EPOCHREALTIME
log=$(find "$work/state" -name test.log | head -n 1)
size=$(stat -c %s "$log")
awk -v mb="$SIZE_MB" -v size="$size" -v peak="$peak" -v code="$code" -v t0="$t0" -v t1="$t1" 'BEGIN {
	printf "test command output  %d MB\n", mb
	printf "test.log kept        %.1f MiB (its end)\n", size / 1048576
	printf "baton peak RSS       %.1f MB (VmHWM; target: under 64 MB)\n", peak / 1024
	printf "wall                 %.1f s (exit %d)\n", t1 - t0, code
}'
if ! tail -n 1 "$log" | grep -qx 'the end'; then
	echo "test.log lost its end" >&2
	exit 1
fi
