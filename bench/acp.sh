#!/usr/bin/env bash
# The ACP transport's overhead (`make bench-acp`): what baton adds to one run
# beyond the agent's own start and its answers, side by side with the
# headless adapter of the same agent (qwen has both).
#
#   acp       `baton --agent qwen --transport acp` against a fake ACP agent
#             (POSIX sh: it answers initialize, session/new, set_mode and the
#             prompt), vs the same fake fed those four requests at once
#             directly: the agent's start and answers without baton.
#   headless  `baton --agent qwen` against a fake that prints a recorded
#             stream-json transcript, vs that fake run directly.
#
# Both outside a git repository (no snapshot), interleaved, ROUNDS rounds
# (default 40), median and spread in ms. Target: acp adds <= 5 ms.
# Knobs: ROUNDS, BATON (default: build target/release/baton first).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-40}
if [ -z "${BATON-}" ]; then
	cargo build --release --locked --quiet
	BATON=$PWD/target/release/baton
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-bench-acp.XXXXXX")
trap 'rm -rf "$work"' EXIT
export BATON_STATE_DIR="$work/state"
mkdir -p "$work/bin" "$work/plain"
cp tests/fixtures/qwen/qwen-stream-plain.jsonl "$work/transcript.jsonl"

cat > "$work/bin/qwen" <<EOF
#!/bin/sh
if [ "\${1-}" != "--acp" ]; then
	cat > /dev/null
	exec cat "$work/transcript.jsonl"
fi
while IFS= read -r line; do
	case "\$line" in
	*'"method":"initialize"'*) echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}' ;;
	*'"method":"session/new"'*) echo '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"auto","availableModes":[{"id":"default","name":"Default"},{"id":"yolo","name":"YOLO"}]}}}' ;;
	*'"method":"session/set_mode"'*) echo '{"jsonrpc":"2.0","id":3,"result":{}}' ;;
	*'"method":"session/prompt"'*)
		echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}'
		echo '{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn","usage":{"inputTokens":120,"outputTokens":12}}}'
		;;
	esac
done
EOF
chmod +x "$work/bin/qwen"
# What baton sends, for the direct run (the same four lines).
requests='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}
{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{}}
{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{}}'

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
spread() { sort -n | awk '{a[NR]=$1} END {printf "%.2f %.2f %.2f\n", a[1], a[int((NR+3)/4)], a[int((3*NR+3)/4)]}'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f\n", (b-a)*1000}'; }

direct_acp() { printf '%s\n' "$requests" | "$work/bin/qwen" --acp > /dev/null; }
direct_headless() { "$work/bin/qwen" < /dev/null > /dev/null; }
via_baton() { PATH="$work/bin:$PATH" "$BATON" --agent qwen "$@" --raw x > /dev/null; }

# Prints "direct baton added min p25 p75" (ms, medians) for a transport.
measure() {
	local t=$1 i t0 t1 t2 t3 d b
	: > "$work/d"; : > "$work/b"; : > "$work/a"
	cd "$work/plain"
	for i in 1 2 3; do
		"direct_$t"
		via_baton --transport "$t"
	done
	for ((i = 0; i < ROUNDS; i++)); do
		if ((i % 2)); then
			t0=$EPOCHREALTIME; "direct_$t"; t1=$EPOCHREALTIME
			t2=$EPOCHREALTIME; via_baton --transport "$t"; t3=$EPOCHREALTIME
		else
			t2=$EPOCHREALTIME; via_baton --transport "$t"; t3=$EPOCHREALTIME
			t0=$EPOCHREALTIME; "direct_$t"; t1=$EPOCHREALTIME
		fi
		d=$(ms "$t0" "$t1"); b=$(ms "$t2" "$t3")
		echo "$d" >> "$work/d"; echo "$b" >> "$work/b"
		awk -v a="$d" -v b="$b" 'BEGIN {printf "%.3f\n", b-a}' >> "$work/a"
	done
	cd - > /dev/null
	echo "$(median < "$work/d") $(median < "$work/b") $(median < "$work/a") $(spread < "$work/a")"
}

# The result must be a success, or the figures mean nothing.
first=$(cd "$work/plain" && PATH="$work/bin:$PATH" "$BATON" --agent qwen --transport acp --raw x)
case "$first" in
*'"status":"success"'*) ;;
*) echo "bench-acp: the ACP run did not succeed: $first" >&2; exit 1 ;;
esac

echo "baton bench-acp: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $("$BATON" --version)"
echo "== overhead per run, outside git ($ROUNDS interleaved rounds, median ms)"
read -r d b a lo q1 q3 < <(measure headless)
printf '  headless: direct %6.2f   baton %6.2f   added %5.2f ms (min %.2f, p25 %.2f, p75 %.2f)\n' "$d" "$b" "$a" "$lo" "$q1" "$q3"
read -r d b a lo q1 q3 < <(measure acp)
printf '  acp:      direct %6.2f   baton %6.2f   added %5.2f ms (min %.2f, p25 %.2f, p75 %.2f)  target <= 5 ms\n' "$d" "$b" "$a" "$lo" "$q1" "$q3"
