#!/usr/bin/env bash
# `make bench-view`: the costs of watching peers (issue 13's targets).
#   1. 50 running fake peers (codex stand-ins writing codex events), then for
#      `baton watch` (the TUI, in tmux) and `baton serve`: CPU from
#      /proc/<pid>/stat while nothing changes and while all 50 stream
#      (targets < 0.5 % and < 5 % of one core);
#   2. event-to-screen latency: a marker appended to a running job's log, until
#      `tmux capture-pane` shows it (TUI) / until it arrives on the job's SSE
#      stream (serve) (target <= 100 ms);
#   3. `serve --all` over N_REPOS (20) repositories with N_PEERS running peers
#      spread across them (issue 33's targets: the same < 0.5 % idle, < 5 %
#      streaming, <= 100 ms event-to-page);
#   4. `watch --once --json` over 10,000 stored jobs (target < 150 ms), and
#      `--text` and `jobs --all` for comparison.
# Parts the binary lacks (no interactive `watch`, no `serve`) are skipped with
# a line saying so. Usage: bench/view.sh  (needs bash, git, python3; tmux for the TUI)
# Knobs: BATON=path (skip the build), N_PEERS (50), N_REPOS (20), N_JOBS (10000),
# IDLE_S (20), STREAM_S (10), PARTS ("tui serve all once": which parts run).
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench/view.sh: needs $1" >&2; exit 1; }; }
need git
need python3

if [ -z "${BATON:-}" ]; then
    cargo build --release --locked --quiet
    BATON="$PWD/target/release/baton"
fi
N_PEERS=${N_PEERS:-50}
N_JOBS=${N_JOBS:-10000}
IDLE_S=${IDLE_S:-20}
STREAM_S=${STREAM_S:-10}
N_REPOS=${N_REPOS:-20}
PARTS=${PARTS:-tui serve all once}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
TCK=$(getconf CLK_TCK)

work=$(mktemp -d)
tmux_sock="$work/tmux.sock"
serve_pid=""
cleanup() {
    touch "$work/release-all"
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
    tmux -S "$tmux_sock" kill-server 2>/dev/null || true
    while read -r dir id; do
        (cd "$dir" && "$BATON" wait "$id" --timeout 30s >/dev/null 2>&1) || true
    done < <(cat "$work/ids" 2>/dev/null)
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/repo"
# The fake codex (bench/fake-codex.py): streams a command event every 100 ms
# while $work/stream exists; ends when $work/release-all exists.
install -m 755 bench/fake-codex.py "$work/bin/codex"
export BENCH_WORK="$work"
export PATH="$work/bin:$PATH"
export BATON_STATE_DIR="$work/state"
unset BATON_DEPTH BATON_MAX_DEPTH
cd "$work/repo"
git init -q
git -c user.name=b -c user.email=b@example.com commit -q --allow-empty -m init
job_id() { python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", (b - a) * 1000 }'; }
stats() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "no samples"; exit } printf "median %.2f ms, min %.2f ms, max %.2f ms (n=%d)\n", v[int((NR + 1) / 2)], v[1], v[NR], NR }'; }
# CPU ticks (user + system, all threads) of a process.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# cpu_share PID SECONDS LABEL: percent of one core used over the window.
cpu_share() {
    local a b
    a=$(ticks "$1"); sleep "$2"; b=$(ticks "$1")
    awk -v a="$a" -v b="$b" -v s="$2" -v t="$TCK" -v l="$3" \
        'BEGIN { printf "%-34s %.2f %% of one core (%d ticks of 1/%d s in %d s)\n", l, (b - a) / t / s * 100, b - a, t, s }'
}
# A marker line for a job's log: a command event the reducer shows as `$ MARK…`.
mark_line() { printf '{"type":"item.started","item":{"type":"command_execution","command":"%s"}}\n' "$1"; }

echo "baton: $("$BATON" --version)"
echo "machine: $(nproc) CPUs, $(uname -sr); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# start_peer DIR: one running fake peer in DIR, noted in $work/ids.
start_peer() { printf '%s %s\n' "$1" "$(cd "$1" && "$BATON" run --async --agent codex "peer" | job_id)" >>"$work/ids"; }
# Release every peer and wait for them.
release_all() {
    touch "$work/release-all"
    while read -r dir id; do (cd "$dir" && "$BATON" wait "$id" >/dev/null 2>&1) || true; done <"$work/ids"
    : >"$work/ids"
    rm -f "$work/release-all"
}
touch "$work/ids"
if part tui || part serve; then
for _ in $(seq "$N_PEERS"); do start_peer "$work/repo"; done
sleep 2 # let every peer start and print its first command
store=$(dirname "$(find "$BATON_STATE_DIR" -type d -name "$(head -n 1 "$work/ids" | cut -d' ' -f2)" | head -n 1)")
echo "== $N_PEERS running fake peers ($(find "$store" -mindepth 1 -maxdepth 1 -type d | wc -l) jobs in the store)"
# The job whose log gets the markers: the newest (listed first).
mark_id=$(tail -n 1 "$work/ids" | cut -d' ' -f2)
mark_log="$store/$mark_id/stdout.log"
fi

# ---- the TUI
tui_ok=""
if ! part tui; then
    :
elif ! command -v tmux >/dev/null 2>&1; then
    echo "TUI: skipped (tmux is not installed)"
else
    # remain-on-exit from the start: a baton that exits at once leaves its pane to look at.
    echo 'set -g remain-on-exit on' >"$work/tmux.conf"
    tmux -S "$tmux_sock" -f "$work/tmux.conf" new-session -d -x 200 -y 70 -s bench \
        "cd '$work/repo' && exec env TERM=xterm-256color '$BATON' watch"
    sleep 2
    if [ "$(tmux -S "$tmux_sock" display-message -p -t bench '#{pane_dead}')" = "1" ]; then
        echo "TUI: skipped (this baton has no interactive \`watch\`: it exited at once)"
    else
        tui_ok=1
        tui_pid=$(tmux -S "$tmux_sock" display-message -p -t bench '#{pane_pid}')
        cpu_share "$tui_pid" "$IDLE_S" "TUI idle (nothing changes):"
        touch "$work/stream"; sleep 1
        cpu_share "$tui_pid" "$STREAM_S" "TUI, all $N_PEERS peers streaming:"
        rm -f "$work/stream"; sleep 2
        printf '%-34s ' "TUI event-to-screen latency:"
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
fi

# ---- serve
# serve_costs LABEL MARK_ID MARK_LOG ARGS...: `baton ARGS` (a serve) with one
# page's fleet stream open: CPU idle and while every peer streams, then the
# latency of a marker appended to MARK_LOG until it arrives on the job's SSE
# stream (ARGS with `--all`: asked with `?repo=` of the job's repository).
serve_costs() {
    local label=$1 mark_id=$2 mark_log=$3 repo_q=""
    shift 3
    "$BATON" "$@" >"$work/serve.json" 2>"$work/serve.err" &
    serve_pid=$!
    for _ in $(seq 100); do [ -s "$work/serve.json" ] && break; sleep 0.05; done
    port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$work/serve.json")
    url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$work/serve.json")
    # The key of the marked job's repository: its record folder's name.
    case " $* " in *" --all "*) repo_q="?repo=$(basename "$(dirname "$(dirname "$(dirname "$mark_log")")")")" ;; esac
    # A client that holds the fleet stream open, as a page does.
    python3 - "$port" "$url" >"$work/fleet.log" 2>&1 <<'PY' &
import http.client, json, sys
port, url = int(sys.argv[1]), sys.argv[2]
token = url.split("#token=", 1)[1]
origin = f"http://127.0.0.1:{port}"
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("POST", "/api/session", json.dumps({"token": token}), {"Content-Type": "application/json", "Origin": origin})
session = json.loads(c.getresponse().read())["session"]
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("GET", "/api/events", headers={"Authorization": "Bearer " + session})
r = c.getresponse()
while r.fp.readline():
    pass
PY
    fleet_pid=$!
    sleep 2
    cpu_share "$serve_pid" "$IDLE_S" "$label idle (one page open):"
    touch "$work/stream"; sleep 1
    cpu_share "$serve_pid" "$STREAM_S" "$label, all peers streaming:"
    rm -f "$work/stream"; sleep 2
    printf '%-34s ' "$label event-to-page latency:"
    python3 - "$port" "$url" "$mark_id" "$mark_log" "$repo_q" <<'PY' | stats
import http.client, json, sys, time, random
port, url, job, log, q = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
token = url.split("#token=", 1)[1]
origin = f"http://127.0.0.1:{port}"
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("POST", "/api/session", json.dumps({"token": token}), {"Content-Type": "application/json", "Origin": origin})
session = json.loads(c.getresponse().read())["session"]
c = http.client.HTTPConnection("127.0.0.1", port)
c.request("GET", f"/api/jobs/{job}/events{q}", headers={"Authorization": "Bearer " + session})
r = c.getresponse()
if r.status != 200:
    sys.exit(f"the transcript stream answered {r.status}: {r.read()!r}")
time.sleep(1)  # past the backlog
for i in range(10):
    m = "MARK-sse-%d-%d" % (i, random.randrange(1 << 30))
    t0 = time.monotonic()
    with open(log, "a") as f:
        f.write('{"type":"item.started","item":{"type":"command_execution","command":"%s"}}\n' % m)
    while True:
        line = r.fp.readline()
        if not line or m.encode() in line:
            break
    print("%.2f" % ((time.monotonic() - t0) * 1000))
    time.sleep(0.3)
PY
    kill "$fleet_pid" "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
}

# (`baton serve --help` of a baton without it is `run`'s help: the default command.)
if ! part serve; then
    :
elif ! "$BATON" serve --help 2>/dev/null | grep -q '^Usage: .* serve'; then
    echo "serve: skipped (this baton has no \`serve\` command)"
else
    serve_costs "serve" "$mark_id" "$mark_log" serve
fi

# ---- serve --all: N_REPOS repositories, N_PEERS running peers spread over them
if ! part all; then
    :
elif ! "$BATON" serve --help 2>/dev/null | grep -q -- '--all'; then
    echo "serve --all: skipped (this baton's serve has no --all)"
else
    release_all
    for r in $(seq "$N_REPOS"); do
        mkdir -p "$work/repos/r$r"
        git -C "$work/repos/r$r" init -q
    done
    for p in $(seq "$N_PEERS"); do start_peer "$work/repos/r$(( (p - 1) % N_REPOS + 1 ))"; done
    sleep 2
    last=$(tail -n 1 "$work/ids")
    all_mark_id=${last#* }
    all_mark_log=$(find "$BATON_STATE_DIR" -path "*/jobs/$all_mark_id/stdout.log" | head -n 1)
    echo "== serve --all: $N_PEERS running fake peers over $N_REPOS repositories ($(find "$BATON_STATE_DIR/repos" -mindepth 1 -maxdepth 1 -type d | wc -l) in the state directory)"
    serve_costs "serve --all" "$all_mark_id" "$all_mark_log" serve --all
    release_all
fi

# ---- watch --once over many stored jobs
part once || exit 0
release_all
template_id=$(BENCH_NOW=1 "$BATON" run --async --agent codex "template" | job_id)
"$BATON" wait "$template_id" >/dev/null
store=$(dirname "$(find "$BATON_STATE_DIR" -type d -name "$template_id" | head -n 1)")
python3 - "$store/$template_id" "$N_JOBS" <<'PY'
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
for _ in $(seq 3); do start_peer "$work/repo"; done
sleep 1
echo "== store: $(find "$store" -mindepth 1 -maxdepth 1 -type d | wc -l) job directories (3 running)"
bench_cmd() {
    local label=$1
    shift
    "$@" >/dev/null # warm the page cache
    printf '%-34s ' "$label"
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
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
