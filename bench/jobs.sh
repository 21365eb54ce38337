#!/usr/bin/env bash
# Background jobs benchmark (release build, fake peer, throwaway git repo):
#   1. launch latency of `baton run --async` (median/max over 20);
#   2. wake latency of `baton wait` after a job ends (median over 20 jobs),
#      measured from the peer's exit and from the runner's recorded end;
#   3. CPU time (and voluntary context switches) of a `wait` over a 10 s job;
#   4. `jobs`, `jobs --all` and `status` with 10,000 ended jobs in the store
#      (made by copying one real ended job directory with fresh ids).
# Usage: bench/jobs.sh   (needs bash, git, python3 and GNU time at /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench/jobs.sh: needs $1" >&2; exit 1; }; }
need git
need python3
[ -x /usr/bin/time ] || { echo "bench/jobs.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }

cargo build --release --locked --quiet
BATON="$PWD/target/release/baton"
N_LAUNCH=${N_LAUNCH:-20}
N_WAKE=${N_WAKE:-20}
N_JOBS=${N_JOBS:-10000}

work=$(mktemp -d)
ids="$work/ids"
: >"$ids"
cleanup() {
    # Let every fake peer finish, collect its job, then remove everything.
    touch "$work/release-all"
    while read -r id; do
        (cd "$work/repo" && "$BATON" wait "$id" --timeout 30s >/dev/null 2>&1) || true
    done <"$ids"
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/repo"
# The fake codex: waits for $BENCH_GATE (or sleeps $BENCH_SLEEP seconds),
# notes the time it ends in $BENCH_END, prints a short codex transcript.
cat >"$work/bin/codex" <<EOF
#!/bin/sh
cat >/dev/null
if [ -n "\${BENCH_SLEEP:-}" ]; then
    sleep "\$BENCH_SLEEP"
else
    while [ ! -e "\${BENCH_GATE:-/nonexistent}" ] && [ ! -e "$work/release-all" ]; do sleep 0.005; done
fi
[ -n "\${BENCH_END:-}" ] && date +%s%N >"\$BENCH_END"
printf '%s\n' '{"type":"thread.started","thread_id":"bench-session"}' \
  '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}' \
  '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}'
EOF
chmod +x "$work/bin/codex"
export PATH="$work/bin:$PATH"
# baton's records (the job store) go with the rest of this benchmark.
export BATON_STATE_DIR="$work/state"
unset BATON_DEPTH BATON_MAX_DEPTH
cd "$work/repo"
git init -q
git -c user.name=b -c user.email=b@example.com commit -q --allow-empty -m init

# Milliseconds between two $EPOCHREALTIME values.
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", (b - a) * 1000 }'; }
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "median %.2f ms, min %.2f ms, max %.2f ms (n=%d)\n", v[int((NR + 1) / 2)], v[1], v[NR], NR }'; }
job_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'; }
# The directory of job $1 (the parent of its log).
job_dir() { dirname "$("$BATON" status "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["log_path"])')"; }

echo "baton: $("$BATON" --version)"
echo "machine: $(nproc) CPUs, $(uname -sr); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

echo "== launch latency: baton run --async (until the running JSON is printed and baton exited)"
"$BATON" run --async --agent codex "warm-up" | job_id >>"$ids"
for _ in $(seq "$N_LAUNCH"); do
    t0=$EPOCHREALTIME
    out=$(BENCH_GATE="$work/gate-launch" "$BATON" run --async --agent codex "bench launch")
    t1=$EPOCHREALTIME
    echo "$out" | job_id >>"$ids"
    ms "$t0" "$t1"
done | stats
touch "$work/gate-launch"
echo

echo "== wake latency of baton wait after the job ends"
: >"$work/wake-peer"
: >"$work/wake-state"
for i in $(seq "$N_WAKE"); do
    id=$(BENCH_GATE="$work/gate-$i" BENCH_END="$work/end-$i" "$BATON" run --async --agent codex "bench wake $i" | job_id)
    echo "$id" >>"$ids"
    ("$BATON" wait "$id" >/dev/null; echo "$EPOCHREALTIME" >"$work/ret-$i") &
    sleep 0.3 # let the wait block on the job's lock first
    touch "$work/gate-$i"
    wait
    ret=$(cat "$work/ret-$i")
    end_ns=$(cat "$work/end-$i")
    ended_ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ended_ms"])' "$(job_dir "$id")/state.json")
    awk -v r="$ret" -v e="$end_ns" 'BEGIN { printf "%.2f\n", r * 1000 - e / 1e6 }' >>"$work/wake-peer"
    awk -v r="$ret" -v e="$ended_ms" 'BEGIN { printf "%.2f\n", r * 1000 - e }' >>"$work/wake-state"
done
printf 'peer exit -> wait returned (includes the runner recording the result): '
stats <"$work/wake-peer"
printf 'runner recorded the end -> wait returned (the wake-up itself):          '
stats <"$work/wake-state"
echo

echo "== CPU used by a baton wait over a 10 s job"
id=$(BENCH_SLEEP=10 "$BATON" run --async --agent codex "bench cpu" | job_id)
echo "$id" >>"$ids"
/usr/bin/time -f 'wall %e s, user %U s, sys %S s, voluntary context switches %w, involuntary %c' \
    "$BATON" wait "$id" >/dev/null
echo

echo "== jobs and status with $N_JOBS ended jobs in the store"
template=$(job_dir "$id")
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
    ms = created
    jid = "".join(alphabet[(ms >> (5 * i)) & 31] for i in range(8, -1, -1))
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
running=$(BENCH_GATE="$work/gate-running" "$BATON" run --async --agent codex "still running" | job_id)
echo "$running" >>"$ids"
echo "store: $(find "$(dirname "$template")" -mindepth 1 -maxdepth 1 -type d | wc -l) job directories (1 running)"
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
bench_cmd "baton jobs" "$BATON" jobs
bench_cmd "baton jobs --text" "$BATON" jobs --text
bench_cmd "baton jobs --all" "$BATON" jobs --all
bench_cmd "baton status <ended id>" "$BATON" status "$id"
bench_cmd "baton status <running id>" "$BATON" status "$running"
touch "$work/gate-running"
