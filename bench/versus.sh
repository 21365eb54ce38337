#!/usr/bin/env bash
# Per-run overhead of two baton binaries side by side (issue 30 §5): a
# foreground `baton --agent codex --raw x` against a fake codex that prints
# the smallest successful transcript. Not a timed test: it prints figures.
#
#   files     what each run leaves in its state directory (per run)
#   syscalls  `strace -f -c` of one run, baton and its child together, and
#             the same for baton's own process only (threads included)
#   time      added over the fake run directly, interleaved (A, B, fake in
#             rotating order), median of ROUNDS, in a state directory that
#             has seen many runs ("warm") and in a new one per run ("fresh")
#
# Usage: bench/versus.sh OLD_BATON NEW_BATON   (e.g. the 0.2.0 plugin binary:
#   git show 29b0351:plugin/bin/linux-amd64/baton > /tmp/baton-0.2.0)
# Knobs: ROUNDS (default 40), WARM (runs made before, default 200).
# Needs bash >= 5 (EPOCHREALTIME); strace for the syscall counts.
set -euo pipefail
A=$(realpath "${1:?usage: bench/versus.sh OLD_BATON NEW_BATON}")
B=$(realpath "${2:?usage: bench/versus.sh OLD_BATON NEW_BATON}")
ROUNDS=${ROUNDS:-40}
WARM=${WARM:-200}

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-versus.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/plain"
cat > "$work/transcript.jsonl" <<'JSONL'
{"type":"thread.started","thread_id":"01a22af9-9e2e-70e3-ad11-07b983a9c1d0"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":120,"cached_input_tokens":0,"output_tokens":12,"reasoning_output_tokens":0}}
JSONL
printf '#!/bin/sh\nexec cat "%s"\n' "$work/transcript.jsonl" > "$work/bin/codex"
chmod +x "$work/bin/codex"
export PATH="$work/bin:$PATH"
cd "$work/plain"

run() { BATON_STATE_DIR=$2 "$1" --agent codex --raw x > /dev/null; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f\n", (b-a)*1000}'; }

echo "baton versus: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for x in A B; do
	bin=${!x}
	echo "  $x: $("$bin" --version)"
	for ((i = 0; i < WARM; i++)); do run "$bin" "$work/warm-$x"; done
done

echo
echo "== files a run leaves (one run in a new state directory)"
for x in A B; do
	run "${!x}" "$work/files-$x"
	printf '  %s: %s\n' "$x" "$(cd "$work/files-$x" && find . -type f | sed -E 's,/[^/]*-[0-9a-f]{16}/,/<project>/,; s,[0-9a-z]{13},<id>,g' | sort | tr '\n' ' ')"
done

if command -v strace > /dev/null; then
	echo
	echo "== system calls per run (warm state directory; median of 5)"
	for x in A B; do
		: > "$work/all" ; : > "$work/own"
		for i in 1 2 3 4 5; do
			rm -rf "$work/st"; mkdir "$work/st"
			BATON_STATE_DIR="$work/warm-$x" strace -ff -o "$work/st/t" "${!x}" --agent codex --raw x > /dev/null
			all=0 own=0
			for f in "$work"/st/t.*; do
				n=$(grep -cv '^+++\|^---' "$f" || true)
				all=$((all + n))
				grep -q 'execve("'"$work"'/bin/codex\|execve("[^"]*/cat"' "$f" || own=$((own + n))
			done
			echo "$all" >> "$work/all"; echo "$own" >> "$work/own"
		done
		printf '  %s: %s with its child, %s in baton'"'"'s own process\n' "$x" "$(median < "$work/all")" "$(median < "$work/own")"
	done
fi

echo
echo "== added over the fake run directly ($ROUNDS interleaved rounds, median ms)"
for state in warm fresh; do
	: > "$work/A.ms"; : > "$work/B.ms"
	for ((i = 0; i < ROUNDS; i++)); do
		case $((i % 3)) in 0) order="A B F" ;; 1) order="B F A" ;; *) order="F A B" ;; esac
		for x in $order; do
			sd=$work/$state-$x
			[ "$state" = fresh ] && sd=$work/fresh/$i-$x
			t0=$EPOCHREALTIME
			if [ "$x" = F ]; then "$work/bin/codex" < /dev/null > /dev/null; else run "${!x}" "$sd"; fi
			t1=$EPOCHREALTIME
			eval "t_$x=$(ms "$t0" "$t1")"
		done
		awk -v a="$t_A" -v f="$t_F" 'BEGIN {printf "%.3f\n", a-f}' >> "$work/A.ms"
		awk -v b="$t_B" -v f="$t_F" 'BEGIN {printf "%.3f\n", b-f}' >> "$work/B.ms"
	done
	printf '  %-5s state dir:  A %6.2f   B %6.2f ms\n' "$state" "$(median < "$work/A.ms")" "$(median < "$work/B.ms")"
done
