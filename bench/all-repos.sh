#!/usr/bin/env bash
# `make bench-all-repos`: the costs of the view across repositories (issue 33).
#   1. N_REPOS repositories (20), each with N_JOBS ended jobs (10,000) written
#      as an older baton wrote them (no live index), and N_PEERS running fake
#      peers (50) spread over them;
#   2. `baton watch --all` (the TUI, in tmux): CPU while nothing changes and
#      while all peers stream (targets < 0.5 % and < 5 % of one core), and
#      event-to-screen latency of a marker in one peer's log (target <= 100 ms);
#   3. `baton watch --all --once --json` once the peers ended (target <= 300 ms),
#      `--text`, `jobs --all-repos`; the one-time scan of a repository without
#      an index (the first look) and `jobs --all-repos --all` (every row, a
#      full scan) for comparison.
# Usage: bench/all-repos.sh  (needs bash, git, python3; tmux for the TUI)
# Knobs: BATON=path (skip the build), N_REPOS (20), N_JOBS (10000), N_PEERS (50),
# IDLE_S (20), STREAM_S (10).
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench/all-repos.sh: needs $1" >&2; exit 1; }; }
need git
need python3

if [ -z "${BATON:-}" ]; then
    cargo build --release --locked --quiet
    BATON="${CARGO_TARGET_DIR:-$PWD/target}/release/baton"
fi
N_REPOS=${N_REPOS:-20}
N_JOBS=${N_JOBS:-10000}
N_PEERS=${N_PEERS:-50}
IDLE_S=${IDLE_S:-20}
STREAM_S=${STREAM_S:-10}
TCK=$(getconf CLK_TCK)

work=$(mktemp -d)
tmux_sock="$work/tmux.sock"
cleanup() {
    touch "$work/release-all"
    tmux -S "$tmux_sock" kill-server 2>/dev/null || true
    while read -r dir id; do
        (cd "$dir" && "$BATON" wait "$id" --timeout 30s >/dev/null 2>&1) || true
    done <"$work/ids" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin"
: >"$work/ids"
install -m 755 bench/fake-codex.py "$work/bin/codex"
export BENCH_WORK="$work"
export PATH="$work/bin:$PATH"
export BATON_STATE_DIR="$work/state"
unset BATON_DEPTH BATON_MAX_DEPTH
job_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", (b - a) * 1000 }'; }
stats() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "no samples"; exit } printf "median %.2f ms, min %.2f ms, max %.2f ms (n=%d)\n", v[int((NR + 1) / 2)], v[1], v[NR], NR }'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
cpu_share() {
    local a b
    a=$(ticks "$1"); sleep "$2"; b=$(ticks "$1")
    awk -v a="$a" -v b="$b" -v s="$2" -v t="$TCK" -v l="$3" \
        'BEGIN { printf "%-40s %.2f %% of one core (%d ticks of 1/%d s in %d s)\n", l, (b - a) / t / s * 100, b - a, t, s }'
}
mark_line() { printf '{"type":"item.started","item":{"type":"command_execution","command":"%s"}}\n' "$1"; }
bench_cmd() {
    local label=$1
    shift
    "$@" >/dev/null # warm the page cache
    printf '%-40s ' "$label"
    for _ in $(seq 10); do
        t0=$EPOCHREALTIME
        "$@" >/dev/null
        t1=$EPOCHREALTIME
        ms "$t0" "$t1"
    done | stats
}

echo "baton: $("$BATON" --version)"
echo "machine: $(nproc) CPUs, $(uname -sr); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# One ended template job per repository (its project folder and `root`),
# then N_JOBS ended jobs copied from it, with no live index: as records
# written before the index existed (the worst case: the first look scans).
for r in $(seq -w 1 "$N_REPOS"); do
    d="$work/repos/repo-$r"
    mkdir -p "$d"
    id=$(cd "$d" && BENCH_NOW=1 "$BATON" run --async --agent codex "template" | job_id)
    (cd "$d" && "$BATON" wait "$id" >/dev/null)
done
python3 - "$BATON_STATE_DIR/repos" "$N_JOBS" <<'PY'
import json, os, random, sys, time
base, n = sys.argv[1], int(sys.argv[2])
alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
now = int(time.time() * 1000)
for p in sorted(os.listdir(base)):
    jobs = os.path.join(base, p, "jobs")
    template = os.path.join(jobs, os.listdir(jobs)[0])
    state = json.load(open(os.path.join(template, "state.json")))
    for k in range(n):
        created = now - (k + 2) * 60_000
        jid = "".join(alphabet[(created >> (5 * i)) & 31] for i in range(8, -1, -1))
        jid += "".join(random.choice(alphabet) for _ in range(4))
        d = os.path.join(jobs, jid)
        os.mkdir(d, 0o700)
        state.update(id=jid, created_ms=created, ended_ms=created + 5_000, runner_pid=None, peer_pgid=None)
        with open(os.path.join(d, "state.json"), "w") as f:
            json.dump(state, f)
    # As an older baton left it: no index.
    live = os.path.join(base, p, "live")
    for f in os.listdir(live) if os.path.isdir(live) else []:
        os.remove(os.path.join(live, f))
    if os.path.isdir(live):
        os.rmdir(live)
PY
echo "== $N_REPOS repositories × $((N_JOBS + 1)) ended jobs, written without a live index"
repo_dirs=("$work"/repos/repo-*)
printf '%-40s ' "watch --all --once, first look (scan):"
t0=$EPOCHREALTIME; "$BATON" watch --all --once --json >/dev/null; t1=$EPOCHREALTIME; ms "$t0" "$t1"

for i in $(seq 0 $((N_PEERS - 1))); do
    d=${repo_dirs[$((i % N_REPOS))]}
    id=$(cd "$d" && "$BATON" run --async --agent codex "peer $i" | job_id)
    echo "$d $id" >>"$work/ids"
done
sleep 2
echo "== $N_PEERS running fake peers over $N_REPOS repositories"
mark_dir=$(tail -n 1 "$work/ids" | cut -d' ' -f1)
mark_id=$(tail -n 1 "$work/ids" | cut -d' ' -f2)
mark_log=$(find "$BATON_STATE_DIR" -type d -name "$mark_id")/stdout.log

if ! command -v tmux >/dev/null 2>&1; then
    echo "TUI: skipped (tmux is not installed)"
else
    echo 'set -g remain-on-exit on' >"$work/tmux.conf"
    tmux -S "$tmux_sock" -f "$work/tmux.conf" new-session -d -x 200 -y 70 -s bench \
        "cd '$work' && exec env TERM=xterm-256color '$BATON' watch --all"
    sleep 3
    tui_pid=$(tmux -S "$tmux_sock" display-message -p -t bench '#{pane_pid}')
    cpu_share "$tui_pid" "$IDLE_S" "watch --all idle (nothing changes):"
    touch "$work/stream"; sleep 1
    cpu_share "$tui_pid" "$STREAM_S" "watch --all, $N_PEERS peers streaming:"
    rm -f "$work/stream"; sleep 2
    printf '%-40s ' "watch --all event-to-screen latency:"
    for i in $(seq 10); do
        m="MARK-tui-$i-$RANDOM"
        t0=$EPOCHREALTIME
        mark_line "$m" >>"$mark_log"
        until tmux -S "$tmux_sock" capture-pane -p -t bench | grep -q "$m"; do
            if [ "$(ms "$t0" "$EPOCHREALTIME" | cut -d. -f1)" -gt 5000 ]; then break; fi
        done
        t1=$EPOCHREALTIME
        ms "$t0" "$t1"
        sleep 0.3
    done | stats
    tmux -S "$tmux_sock" kill-server 2>/dev/null || true
fi

touch "$work/release-all"
while read -r dir id; do (cd "$dir" && "$BATON" wait "$id" >/dev/null 2>&1) || true; done <"$work/ids"
: >"$work/ids"
echo "== peers ended: none running"
bench_cmd "watch --all --once --json:" "$BATON" watch --all --once --json
bench_cmd "watch --all --once --text:" "$BATON" watch --all --once --text
bench_cmd "watch --all --repo repo-07 --once:" "$BATON" watch --all --repo repo-07 --once
bench_cmd "jobs --all-repos:" "$BATON" jobs --all-repos
printf '%-40s ' "jobs --all-repos --all (full scan):"
t0=$EPOCHREALTIME; "$BATON" jobs --all-repos --all >/dev/null; t1=$EPOCHREALTIME; ms "$t0" "$t1"
bench_cmd "watch --once (one repository, for scale):" sh -c "cd '${repo_dirs[0]}' && '$BATON' watch --once --json"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
