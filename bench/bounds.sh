#!/usr/bin/env bash
# Bounds (issue 29 §4): baton's own peak memory while a peer pushes what
# 0.3.2 held whole. Not a timed test: it prints figures quoted in
# docs/benchmarks.md.
#
#   acp    `baton --agent qwen --transport acp` against a fake ACP agent
#          (POSIX sh) that answers the prompt with CHUNKS answer chunks of
#          100 bytes each (default 1,000,000: a 100 MB answer, 0.3.2 kept it
#          all: 200 MB of RSS). baton keeps the answer's last MiB.
#   judge  a fan-out of two candidates (`--agent codex --attempts 2`) whose
#          fake codex commits a file making a DIFF_MB MB diff each (default
#          107; 0.3.2 read the judges' diff whole: 315 MB of RSS), judged by
#          a third call (`--judge codex`, the fake answering the review).
#          baton reads each diff streamed and keeps 120,000 bytes of it.
#
# Peak RSS is VmHWM of baton's own process (its peers and git are not
# counted), read from /proc every 10 ms until it exits; target < 64 MB.
# Knobs: BATON (a baton binary; default: build target/release/baton
# first), CHUNKS, DIFF_MB, RUNS (default 3, the median and max are shown).
set -euo pipefail
cd "$(dirname "$0")/.."

CHUNKS=${CHUNKS:-1000000}
DIFF_MB=${DIFF_MB:-107}
RUNS=${RUNS:-3}
if [ -z "${BATON-}" ]; then
	cargo build --release --locked --quiet
	BATON=$PWD/target/release/baton
fi
BATON=$(realpath "$BATON")

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-bench-bounds.XXXXXX")
trap 'rm -rf "$work"' EXIT
export BATON_STATE_DIR="$work/state" BATON_CONFIG="$work/none.toml"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b

# peak OUT CMD...: runs CMD (baton) with stdout to OUT; prints "kB ms".
peak() {
	local out=$1 pid hwm=0 v t0 t1
	shift
	t0=$EPOCHREALTIME
	"$@" > "$out" &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2> /dev/null || true)
		if [ -n "$v" ] && [ "$v" -gt "$hwm" ]; then hwm=$v; fi
		sleep 0.01
	done
	wait "$pid" || true
	t1=$EPOCHREALTIME
	echo "$hwm $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%d", (b-a)*1000}')"
}

summary() { # summary LABEL FILE-of-"kB ms"-lines
	sort -n "$2" | awk -v l="$1" '{k[NR]=$1; m[NR]=$2} END {
		printf "  %-6s peak RSS median %.1f MB, max %.1f MB (target < 64 MB); wall median %.1f s\n",
			l, k[int((NR+1)/2)]/1024, k[NR]/1024, m[int((NR+1)/2)]/1000}'
}

echo "baton bench-bounds: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $("$BATON" --version)"

# ------------------------------------------------------------------ acp ---
mkdir -p "$work/acp/bin" "$work/acp/plain"
text=$(printf 'x%.0s' $(seq 99))
chunk="{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"${text}\\n\"}}}}"
cat > "$work/acp/bin/qwen" << EOF
#!/bin/sh
while IFS= read -r line; do
	case "\$line" in
	*'"method":"initialize"'*) echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}' ;;
	*'"method":"session/new"'*) echo '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","modes":{"currentModeId":"auto","availableModes":[{"id":"default","name":"Default"},{"id":"yolo","name":"YOLO"}]}}}' ;;
	*'"method":"session/set_mode"'*) echo '{"jsonrpc":"2.0","id":3,"result":{}}' ;;
	*'"method":"session/prompt"'*)
		yes '$chunk' | head -n $CHUNKS
		echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"THE END"}}}}'
		echo '{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn","usage":{"inputTokens":120,"outputTokens":12}}}'
		;;
	esac
done
EOF
chmod +x "$work/acp/bin/qwen"
echo "== acp: $CHUNKS answer chunks of 100 bytes ($((CHUNKS / 10000)) MB of answer) ($RUNS runs)"
: > "$work/acp.t"
for i in $(seq "$RUNS"); do
	(cd "$work/acp/plain" && PATH="$work/acp/bin:$PATH" peak "$work/acp.json" \
		"$BATON" --agent qwen --transport acp --timeout 10m --raw x) >> "$work/acp.t"
	python3 - "$work/acp.json" "$(tail -1 "$work/acp.t")" "$i" << 'EOF'
import json, sys
r = json.load(open(sys.argv[1])); kb, ms = map(int, sys.argv[2].split()); i = sys.argv[3]
m = r.get("message") or ""
w = [x for x in r.get("warnings", []) if "answer was" in x]
print(f"   run {i}: {r['status']}, message {len(m)} bytes ending {m[-7:]!r}, peak RSS {kb / 1024:.1f} MB, "
      f"{ms / 1000:.1f} s; {w[0] if w else 'no cut warning'}")
EOF
done
summary acp "$work/acp.t"

# ---------------------------------------------------------------- judge ---
mkdir -p "$work/judge/bin" "$work/judge/repo"
repo=$work/judge/repo
git -C "$repo" init -q
printf 'small\n' > "$repo/README"
git -C "$repo" add -A && git -C "$repo" commit -qm base
# 64-byte lines: the diff adds a `+` to each, so DIFF_MB MB of diff.
lines=$((DIFF_MB * 1000000 / 65))
python3 - "$work/judge/review.jsonl" << 'EOF'
import json, sys
review = {"candidates": [{"label": l, "verdict": "accept", "summary": "fine", "findings": []}
                         for l in ("A", "B")], "ranking": ["A", "B"]}
events = [{"type": "thread.started", "thread_id": "judge"}, {"type": "turn.started"},
          {"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": json.dumps(review)}},
          {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 10}}]
open(sys.argv[1], "w").write("".join(json.dumps(e) + "\n" for e in events))
EOF
cat > "$work/judge/bin/codex" << EOF
#!/bin/sh
cat > /dev/null
case " \$* " in
*" read-only "*) exec cat '$work/judge/review.jsonl' ;;
esac
yes 'a line of the generated file, the same in every row, 64 bytes..' | head -n $lines > big.txt
exec cat '$PWD/tests/fixtures/codex/codex-exec-basic.jsonl'
EOF
chmod +x "$work/judge/bin/codex"
echo
echo "== judge: two candidates with a $DIFF_MB MB diff each, one judge ($RUNS runs)"
: > "$work/judge.t"
for i in $(seq "$RUNS"); do
	(cd "$repo" && PATH="$work/judge/bin:$PATH" peak "$work/judge.json" \
		"$BATON" run --agent codex --attempts 2 --judge codex --test-cmd true --timeout 10m x) >> "$work/judge.t"
	python3 - "$work/judge.json" "$(tail -1 "$work/judge.t")" "$i" << 'EOF'
import json, sys
r = json.load(open(sys.argv[1])); kb, ms = map(int, sys.argv[2].split()); i = sys.argv[3]
oks = sum(1 for x in (r.get("judge") or {}).get("reviews", []) if x["outcome"] == "ok")
cut = [x for x in r.get("warnings", []) if "its diff is" in x]
print(f"   run {i}: {r['status']}, winner {(r.get('winner') or {}).get('id')}, {oks} judge(s) ok, "
      f"peak RSS {kb / 1024:.1f} MB, {ms / 1000:.1f} s; {cut[0] if cut else 'no cut warning'}")
EOF
	git -C "$repo" worktree list --porcelain | awk '/^worktree .*\.baton/{print $2}' |
		while read -r p; do git -C "$repo" worktree remove --force "$p"; done
	git -C "$repo" for-each-ref --format='%(refname:short)' refs/heads/baton/ |
		while read -r b; do git -C "$repo" branch -qD "$b"; done
done
summary judge "$work/judge.t"
