#!/usr/bin/env bash
# `baton watch --once` benchmark (release build, fake peer, throwaway git repo):
# 10,000 ended jobs (copies of one real ended job directory with fresh ids,
# as bench/jobs.sh makes them) plus a few running jobs mid-command, then
# `watch --once --json`, `watch --once --text` and `jobs --all` for comparison.
# Usage: bench/watch.sh   (needs bash, git and python3)
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench/watch.sh: needs $1" >&2; exit 1; }; }
need git
need python3

# BATON=path/to/baton skips the build (to time a binary already built).
if [ -z "${BATON:-}" ]; then
    cargo build --release --locked --quiet
    BATON="$PWD/target/release/baton"
fi
N_JOBS=${N_JOBS:-10000}
N_RUNNING=${N_RUNNING:-3}

work=$(mktemp -d)
cleanup() {
    touch "$work/release-all"
    for id in $(cat "$work/ids" 2>/dev/null); do
        (cd "$work/repo" && "$BATON" wait "$id" --timeout 30s >/dev/null 2>&1) || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/repo"
# The fake codex: starts a command, then waits for release-all (or ends at once
# with BENCH_NOW set), and finishes with a short transcript.
cat >"$work/bin/codex" <<EOF2
#!/bin/sh
cat >/dev/null
printf '%s\n' '{"type":"thread.started","thread_id":"bench-session"}' \
  '{"type":"item.started","item":{"type":"command_execution","command":"cargo test"}}'
if [ -z "\${BENCH_NOW:-}" ]; then
    while [ ! -e "$work/release-all" ]; do sleep 0.05; done
fi
printf '%s\n' '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}' \
  '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}'
EOF2
chmod +x "$work/bin/codex"
export PATH="$work/bin:$PATH"
# baton's records (the job store) go with the rest of this benchmark.
export BATON_STATE_DIR="$work/state"
unset BATON_DEPTH BATON_MAX_DEPTH
cd "$work/repo"
git init -q
git -c user.name=b -c user.email=b@example.com commit -q --allow-empty -m init
job_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", (b - a) * 1000 }'; }
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "median %.2f ms, min %.2f ms, max %.2f ms (n=%d)\n", v[int((NR + 1) / 2)], v[1], v[NR], NR }'; }

echo "baton: $("$BATON" --version)"
echo "machine: $(nproc) CPUs, $(uname -sr); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

template_id=$(BENCH_NOW=1 "$BATON" run --async --agent codex "template" | job_id)
"$BATON" wait "$template_id" >/dev/null
template=$(find "$BATON_STATE_DIR" -type d -name "$template_id" | head -n 1)
python3 - "$template" "$N_JOBS" <<'PY'
import json, os, random, shutil, sys, time
template, n = sys.argv[1], int(sys.argv[2])
alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
store = os.path.dirname(template)
state = json.load(open(os.path.join(template, "state.json")))
result = json.load(open(os.path.join(template, "result.json")))
now = int(time.time() * 1000)
files = [f for f in os.listdir(template) if not f.startswith(".")]
for k in range(n):
    created = now - (k + 2) * 60_000
    jid = "".join(alphabet[(created >> (5 * i)) & 31] for i in range(8, -1, -1))
    jid += "".join(random.choice(alphabet) for _ in range(4))
    d = os.path.join(store, jid)
    os.mkdir(d, 0o700)
    for f in files:
        if f not in ("state.json", "result.json"):
            shutil.copyfile(os.path.join(template, f), os.path.join(d, f))
    state.update(id=jid, created_ms=created, ended_ms=created + 5_000, runner_pid=None, peer_pgid=None)
    result.update(job_id=jid)
    with open(os.path.join(d, "state.json"), "w") as f:
        json.dump(state, f)
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump(result, f)
PY
for _ in $(seq "$N_RUNNING"); do
    "$BATON" run --async --agent codex "still running" | job_id >>"$work/ids"
done
sleep 1 # let the running peers print their command
echo "store: $(find "$(dirname "$template")" -mindepth 1 -maxdepth 1 -type d | wc -l) job directories ($N_RUNNING running)"
bench_cmd() {
    local label=$1
    shift
    "$@" >/dev/null # warm the page cache
    printf '%-28s' "$label"
    for _ in $(seq 10); do
        t0=$EPOCHREALTIME
        "$@" >/dev/null
        t1=$EPOCHREALTIME
        ms "$t0" "$t1"
    done | stats
}
bench_cmd "baton watch --once --json" "$BATON" watch --once --json
bench_cmd "baton watch --once --text" "$BATON" watch --once --text
bench_cmd "baton jobs --all" "$BATON" jobs --all
echo "running jobs as watch sees them:"
"$BATON" watch --once --text | head -n $((N_RUNNING + 1))
