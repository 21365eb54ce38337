#!/usr/bin/env bash
# baton benchmarks (`make bench`). Not a timed test: it prints figures and
# ratios quoted in docs/benchmarks.md.
#
#   overhead    `baton run` against a fake codex that prints a minimal
#               transcript and exits, vs the same fake run directly; the two
#               are interleaved (alternating order) in one process, N rounds;
#               measured outside a git repository and inside a small one
#               (where baton also takes two `git status` snapshots).
#   snapshot    the same inside a 500-file repository, with a fake codex
#               that takes 100 ms to start before it reads its prompt: the
#               snapshot before the run is taken while the CLI starts, so
#               baton should add its own overhead and one `git status` (the
#               snapshot after the run), not two. `git status` alone is timed
#               in the same repository for comparison.
#   throughput  MB of codex-style JSONL (about 1 KiB per line) through baton:
#               MB/s and peak RSS, median of several runs; and, as the floor
#               set by this machine, the same bytes through `cat | cat > file`.
#
# Knobs: ROUNDS (default 40), MB (default 200), RUNS (default 5), BATON (a
# baton binary to measure; default: build target/release/baton first).
# Needs bash >= 5 (EPOCHREALTIME) and GNU time (/usr/bin/time) for peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-40}
MB=${MB:-200}
RUNS=${RUNS:-5}

if [ -z "${BATON-}" ]; then
	cargo build --release --locked --quiet
	BATON=$PWD/target/release/baton
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# baton's records go with the rest of the benchmark.
export BATON_STATE_DIR="$work/state"
mkdir -p "$work/bin" "$work/plain" "$work/repo"

# The smallest transcript codex prints for a successful turn.
cat > "$work/transcript.jsonl" <<'EOF'
{"type":"thread.started","thread_id":"01a22af9-9e2e-70e3-ad11-07b983a9c1d0"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":120,"cached_input_tokens":0,"output_tokens":12,"reasoning_output_tokens":0}}
EOF
printf '#!/bin/sh\nexec cat "%s"\n' "$work/transcript.jsonl" > "$work/bin/codex"
chmod +x "$work/bin/codex"
FAKE=$work/bin/codex

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
# "min p25 p75" of numbers on stdin.
spread() { sort -n | awk '{a[NR]=$1} END {printf "%.2f %.2f %.2f\n", a[1], a[int((NR+3)/4)], a[int((3*NR+3)/4)]}'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f\n", (b-a)*1000}'; }

# Prints "median_direct median_baton median_added" (ms) for runs in $1, with
# the fake of directory $2 (default: $work/bin) for agent $3 (default: codex).
overhead() {
	local dir=$1 bin=${2:-$work/bin} agent=${3:-codex} i t0 t1 t2 t3 d b
	local FAKE=$bin/codex
	: > "$work/direct.ms"
	: > "$work/baton.ms"
	: > "$work/added.ms"
	cd "$dir"
	# Warm-up: page cache, the state directory, the dynamic loader.
	for i in 1 2 3; do
		"$FAKE" < /dev/null > /dev/null
		PATH="$bin:$PATH" "$BATON" --agent "$agent" --raw x > /dev/null
	done
	for ((i = 0; i < ROUNDS; i++)); do
		if ((i % 2)); then
			t0=$EPOCHREALTIME; "$FAKE" < /dev/null > /dev/null; t1=$EPOCHREALTIME
			t2=$EPOCHREALTIME; PATH="$bin:$PATH" "$BATON" --agent "$agent" --raw x > /dev/null; t3=$EPOCHREALTIME
		else
			t2=$EPOCHREALTIME; PATH="$bin:$PATH" "$BATON" --agent "$agent" --raw x > /dev/null; t3=$EPOCHREALTIME
			t0=$EPOCHREALTIME; "$FAKE" < /dev/null > /dev/null; t1=$EPOCHREALTIME
		fi
		d=$(ms "$t0" "$t1")
		b=$(ms "$t2" "$t3")
		echo "$d" >> "$work/direct.ms"
		echo "$b" >> "$work/baton.ms"
		awk -v a="$d" -v b="$b" 'BEGIN {printf "%.3f\n", b-a}' >> "$work/added.ms"
	done
	cd - > /dev/null
	echo "$(median < "$work/direct.ms") $(median < "$work/baton.ms") $(median < "$work/added.ms") $(spread < "$work/added.ms")"
}

git -C "$work/repo" init -q
for f in a b c d e; do echo "$f" > "$work/repo/$f.txt"; done
mkdir -p "$work/repo/src"
for f in 1 2 3 4 5 6 7 8 9; do echo "fn f$f() {}" > "$work/repo/src/m$f.rs"; done
git -C "$work/repo" add .
git -C "$work/repo" -c user.name=b -c user.email=b@b commit -qm init
echo dirty >> "$work/repo/a.txt"

echo "baton bench: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $("$BATON" --version)"
echo
echo "== overhead: baton run vs the fake agent run directly ($ROUNDS interleaved rounds, median ms)"
read -r d b a lo q1 q3 < <(overhead "$work/plain")
printf '  outside git:  direct %6.2f   baton %6.2f   added %5.2f ms (min %.2f, p25 %.2f, p75 %.2f)  target <= 5 ms\n' "$d" "$b" "$a" "$lo" "$q1" "$q3"
read -r d b a lo q1 q3 < <(overhead "$work/repo")
printf '  git repo:     direct %6.2f   baton %6.2f   added %5.2f ms (min %.2f, p25 %.2f, p75 %.2f)  incl. 2 git status\n' "$d" "$b" "$a" "$lo" "$q1" "$q3"

echo
echo "== snapshot: a CLI that takes 100 ms to start, in a 500-file repository ($ROUNDS interleaved rounds, median ms)"
mkdir -p "$work/big/src" "$work/slowbin"
for i in $(seq 1 500); do echo "line $i" > "$work/big/src/f$i.txt"; done
git -C "$work/big" init -q
git -C "$work/big" add .
git -C "$work/big" -c user.name=b -c user.email=b@b commit -qm init
for i in 1 2 3 4 5; do echo dirty >> "$work/big/src/f$i.txt"; done
printf '#!/bin/sh\nsleep 0.1\ncat > /dev/null\nexec cat "%s"\n' "$work/transcript.jsonl" > "$work/slowbin/codex"
# agy gets its prompt in argv, so baton snapshots before it starts (as every
# agent did before): the same binary, the old order, for comparison.
cp tests/fixtures/agy/agy-json-success.json "$work/agy.json"
printf '#!/bin/sh\nsleep 0.1\ncat > /dev/null\nexec cat "%s"\n' "$work/agy.json" > "$work/slowbin/agy"
chmod +x "$work/slowbin/codex" "$work/slowbin/agy"
git_status_ms() {
	local i t0 t1
	: > "$work/gs.ms"
	for ((i = 0; i < ROUNDS; i++)); do
		t0=$EPOCHREALTIME
		git -C "$work/big" status --porcelain=v2 --branch -z --untracked-files=all --no-renames --ignore-submodules=dirty > /dev/null
		t1=$EPOCHREALTIME
		ms "$t0" "$t1" >> "$work/gs.ms"
	done
	median < "$work/gs.ms"
}
gs=$(git_status_ms)
read -r d b a lo q1 q3 < <(overhead "$work/big" "$work/slowbin")
printf '  git status alone: %.2f ms\n' "$gs"
printf '  codex (snapshot while it starts): direct %6.2f   baton %6.2f   added %5.2f ms (min %.2f, p25 %.2f, p75 %.2f)  target <= 5 ms + one git status (%.2f ms)\n' "$d" "$b" "$a" "$lo" "$q1" "$q3" "$gs"
read -r d b a lo q1 q3 < <(overhead "$work/big" "$work/slowbin" gemini)
printf '  agy (snapshot before it starts):  direct %6.2f   baton %6.2f   added %5.2f ms (min %.2f, p25 %.2f, p75 %.2f)  two git status on the critical path\n' "$d" "$b" "$a" "$lo" "$q1" "$q3"

echo
echo "== throughput: $MB MB of codex-style JSONL through baton ($RUNS runs, median)"
pad=$(head -c 1000 /dev/zero | tr '\0' x)
line="{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"reasoning\",\"text\":\"$pad\"}}"
lines=$((MB * 1024 * 1024 / (${#line} + 1)))
{ yes "$line" || true; } | head -n "$lines" > "$work/big.jsonl"
cat "$work/transcript.jsonl" >> "$work/big.jsonl"
bytes=$(wc -c < "$work/big.jsonl")
mkdir -p "$work/bigbin"
printf '#!/bin/sh\nexec cat "%s"\n' "$work/big.jsonl" > "$work/bigbin/codex"
chmod +x "$work/bigbin/codex"

: > "$work/tp.s"
: > "$work/tp.kb"
: > "$work/floor.s"
cd "$work/plain"
for ((i = 0; i < RUNS; i++)); do
	rm -rf "$work/state" "$work/floor.out"
	t0=$EPOCHREALTIME
	cat "$work/big.jsonl" | cat > "$work/floor.out"
	t1=$EPOCHREALTIME
	echo "$(ms "$t0" "$t1")" >> "$work/floor.s"
	rm -f "$work/floor.out"
	t0=$EPOCHREALTIME
	if [ -x /usr/bin/time ]; then
		PATH="$work/bigbin:$PATH" /usr/bin/time -f '%M' -o "$work/rss" "$BATON" --raw x > "$work/out.json"
		cat "$work/rss" >> "$work/tp.kb"
	else
		PATH="$work/bigbin:$PATH" "$BATON" --raw x > "$work/out.json"
	fi
	t1=$EPOCHREALTIME
	echo "$(ms "$t0" "$t1")" >> "$work/tp.s"
	grep -q '"status":"success"' "$work/out.json" || { echo "run $i did not succeed:"; cat "$work/out.json"; exit 1; }
done
rm -rf "$work/state"
cd - > /dev/null
tp_ms=$(median < "$work/tp.s")
floor_ms=$(median < "$work/floor.s")
awk -v b="$bytes" -v t="$tp_ms" -v f="$floor_ms" 'BEGIN {
	mb = b / 1048576
	printf "  baton:             %7.0f ms  %6.0f MB/s  (target >= 300 MB/s)\n", t, mb / (t / 1000)
	printf "  cat | cat > file:  %7.0f ms  %6.0f MB/s  (the same bytes through a pipe into a file: this machine'"'"'s floor)\n", f, mb / (f / 1000)
	printf "  ratio baton / floor: %.2f\n", t / f
}'
if [ -s "$work/tp.kb" ]; then
	rss=$(median < "$work/tp.kb")
	max=$(sort -n "$work/tp.kb" | tail -1)
	awk -v m="$rss" -v x="$max" 'BEGIN {printf "  peak RSS:          median %.1f MB, max %.1f MB  (target < 30 MB)\n", m / 1024, x / 1024}'
fi
