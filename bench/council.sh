#!/usr/bin/env bash
# The council's wall time against the sum of its slowest member per stage.
#
# Fake codex, claude and pi (tests/support/council_fake.py) answer every
# stage after a fixed delay; a parallel stage should take as long as its
# slowest member, so the ideal is the sum of the per-stage maxima. Prints
# both and the overhead in percent (target: within 5 %).
# Knobs: RUNS (default 3), BATON (default: target/release/baton, built if missing).
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
BATON=${BATON:-target/release/baton}
if [ ! -x "$BATON" ]; then
    cargo build --release --locked >/dev/null
fi
BATON=$(realpath "$BATON")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work" "$tmp/state" "$tmp/fake/council"
cp tests/support/council_fake.py "$tmp/fake/council/council_fake.py"
chmod +x "$tmp/fake/council/council_fake.py"
for a in codex claude pi; do ln -s "$tmp/fake/council/council_fake.py" "$tmp/bin/$a"; done
git -C "$tmp/work" init -q
printf 'one\ntwo\n' > "$tmp/work/a.txt"
git -C "$tmp/work" add . && git -C "$tmp/work" -c user.name=b -c user.email=b@b commit -qm base

# Delays in ms per stage and agent: proposal, critique, plan (chair: codex).
declare -A P=([codex]=1500 [claude]=2500 [pi]=2000)
declare -A C=([codex]=1200 [claude]=800 [pi]=1600)
PLAN=1000
ideal=$(( 2500 + 1600 + PLAN ))

python3 - "$tmp/fake/council/scenario.json" <<EOF
import json, sys
proposal = {"summary": "s", "approach": "a", "steps": ["x"], "claims": [{"id": "c1", "text": "t", "evidence": [{"file": "a.txt", "lines": [1, 1]}]}],
            "risks": [], "files_to_change": ["a.txt"], "test_cmd": None, "no_evidence_reason": None, "confidence": "low"}
critique = {"summary": "", "ranking": ["A", "B"], "findings": []}
plan = {"summary": "p", "steps": ["x"], "authorized_files": ["a.txt"], "test_cmd": None, "acceptance": [], "evidence": [],
        "assumptions": [], "disagreements": [], "dismissed_findings": [], "adopted_from": ["A"]}
d = {"codex": (${P[codex]}, ${C[codex]}), "claude": (${P[claude]}, ${C[claude]}), "pi": (${P[pi]}, ${C[pi]})}
agents = {a: {"proposal": [{"json": proposal, "delay_ms": p}], "critique": [{"json": critique, "delay_ms": c}],
              "plan": [{"json": plan, "delay_ms": $PLAN}]} for a, (p, c) in d.items()}
json.dump({"agents": agents}, open(sys.argv[1], "w"))
EOF

# The fake itself is a python3 process: its start-up is part of every call
# and not baton's doing. Measured here (a direct call, no delay), it is
# added once per stage to the ideal for the second figure.
fake_ms() {
    local s e
    s=$(date +%s%N)
    printf 'nothing' | env PATH="$tmp/bin:/usr/bin:/bin" COUNCIL_SCENARIO="$tmp/none.json" \
        COUNCIL_LOG="$tmp/fake.log" "$tmp/bin/codex" --version >/dev/null 2>&1 || true
    e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
}
f=$( (fake_ms; fake_ms; fake_ms) | sort -n | sed -n 2p)
adjusted=$(( ideal + 3 * f ))
echo "== council wall time vs the sum of the slowest member per stage ($RUNS runs)"
echo "   ideal (2500 + 1600 + $PLAN ms): $ideal ms; with the fake's own start-up ($f ms, median of 3) per stage: $adjusted ms"
for i in $(seq "$RUNS"); do
    start=$(date +%s%N)
    (cd "$tmp/work" && env PATH="$tmp/bin:/usr/local/bin:/usr/bin:/bin" FAKE_DIR="$tmp/fake" \
        BATON_STATE_DIR="$tmp/state" BATON_CONFIG="$tmp/none.toml" \
        "$BATON" council discuss --members codex,claude,pi --seed 1 "q?" >"$tmp/out.json"
        date +%s%N >"$tmp/end") &
    sub=$!
    # baton's own CPU (utime + stime of its process, not its children), as
    # last sampled before it exits: a lower bound by at most one sample.
    # The wall time ends when baton does (written by the subshell), not
    # when this loop notices.
    pid=""
    while [ -z "$pid" ] && kill -0 "$sub" 2>/dev/null; do pid=$(pgrep -P "$sub" || true); done
    cpu=0
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; do
        t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true)
        cpu=${t:-$cpu}
        sleep 0.2
    done
    wait "$sub"
    end=$(cat "$tmp/end")
    wall=$(( (end - start) / 1000000 ))
    status=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$tmp/out.json")
    over=$(python3 -c "print(f'{($wall - $ideal) * 100 / $ideal:.1f}')")
    adj=$(python3 -c "print(f'{($wall - $adjusted) * 100 / $adjusted:.1f}')")
    echo "   run $i: $wall ms ($status): $over % over the ideal, $adj % over it with the fake's start-up; baton's own CPU $((cpu * 10)) ms"
done
