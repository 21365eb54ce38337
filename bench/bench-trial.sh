#!/usr/bin/env bash
# What `baton bench run` adds to a trial beyond the peer and the tests
# (issue 32's target: <= 200 ms per trial).
#
# Builds a repository of FILES files (default 1000; try 10000) with one
# task (a buggy lib.sh, a fix that adds a test), mines it, then runs the
# task TRIALS times (default 5) with a fake codex that answers at once
# (one recorded transcript, no edit) and times the whole `bench run`.
# The same test command run by hand, and `baton run` with the same fake
# peer, are timed beside it: per trial, baton's share is
#   (bench run wall) / TRIALS - (one test run) - (one `baton run`)
# which leaves the trial's own work: the history-less repository (the base
# tree packed once per run, copied and checked out per trial), writing the
# hidden tests back, reading outcomes, the record.
# Knobs: FILES, TRIALS, ROUNDS (default 3), BATON (default: build
# target/release/baton first; give a debug build on a busy machine).
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=${FILES:-1000}
TRIALS=${TRIALS:-5}
ROUNDS=${ROUNDS:-3}
if [ -z "${BATON-}" ]; then
	cargo build --release --locked --quiet
	BATON=${CARGO_TARGET_DIR:-$PWD/target}/release/baton
fi
fixture=$PWD/tests/fixtures/codex/codex-exec-basic.jsonl

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-bench-trial.XXXXXX")
trap 'rm -rf "$work"' EXIT
export BATON_STATE_DIR="$work/state" HOME="$work/home"
mkdir -p "$HOME" "$work/bin"
cat > "$work/bin/codex" <<FAKE
#!/bin/sh
cat > /dev/null
cat "$fixture"
FAKE
chmod +x "$work/bin/codex"
export PATH="$work/bin:$PATH"

repo=$work/repo
git init -q -b main "$repo"
cd "$repo"
git config user.email bench@example.com
git config user.name bench
mkdir -p src tests
i=0
while [ "$i" -lt "$FILES" ]; do
	d=src/d$((i / 500))
	mkdir -p "$d"
	printf 'file %d\n' "$i" > "$d/f$i.txt"
	i=$((i + 1))
done
cat > run-tests.sh <<'RUN'
. ./lib.sh
for t in tests/*.sh; do . "./$t"; done
for name in t_sub t_add; do
  if command -v "$name" >/dev/null 2>&1; then
    if "$name"; then echo "test $name ... ok"; else echo "test $name ... FAILED"; fi
  fi
done
RUN
printf 'add() { echo $(($1 - $2)); }\nsub() { echo $(($1 - $2)); }\n' > lib.sh
printf 't_sub() { [ "$(sub 3 1)" = 2 ]; }\n' > tests/basic.sh
git add -A && git commit -q -m base
base=$(git rev-parse HEAD)
printf 'add() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n' > lib.sh
printf 't_add() { [ "$(add 2 2)" = 4 ]; }\n' > tests/add.sh
git add -A && git commit -q -m "add: add instead of subtracting"

"$BATON" bench mine --since "$base" --test-cmd 'sh run-tests.sh' --runner cargo --set b > "$work/mine.json"
grep -q '"tasks":\["' "$work/mine.json" || { cat "$work/mine.json"; exit 1; }

ms() { date +%s%N | cut -c1-13; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "== bench run: $FILES files, $TRIALS trials per round, $ROUNDS rounds ($BATON)"
: > "$work/bench"; : > "$work/test"; : > "$work/run"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	t0=$(ms)
	"$BATON" bench run b --agents codex --repeat "$TRIALS" > "$work/run.json"
	t1=$(ms)
	echo $((t1 - t0)) >> "$work/bench"
	t0=$(ms)
	sh run-tests.sh > /dev/null
	t1=$(ms)
	echo $((t1 - t0)) >> "$work/test"
	t0=$(ms)
	"$BATON" run --agent codex --read-only "x" > /dev/null
	t1=$(ms)
	echo $((t1 - t0)) >> "$work/run"
	r=$((r + 1))
done
b=$(median < "$work/bench"); t=$(median < "$work/test"); p=$(median < "$work/run")
per=$((b / TRIALS))
echo "bench run, whole:        $b ms (median of $ROUNDS): $per ms per trial"
echo "the test command alone:  $t ms; one baton run of the fake peer: $p ms"
echo "baton's share per trial: $((per - t - p)) ms (target 200 ms)"
